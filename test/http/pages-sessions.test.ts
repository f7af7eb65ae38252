// Signing in to the pages: the form and its token, the session cookie, what a signed-in member sees,
// sign-out, lockout after 10 failures (answered as a wrong password, and unknown logins as slowly as known
// ones, so neither tells who exists), blocked users, idle sessions, and API tokens never making a page
// visitor known.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertHiddenPage, createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';
import { LOCK_MS, SESSION_IDLE_MS, sessionUser, signIn, signOut } from '../../src/domain/sessions.ts';

const PASSWORD = 'correct horse battery';
const pathOf = (url: string) => new URL(url).pathname;
const setCookies = (res: { headers: Record<string, unknown> }) => {
  const value = res.headers['set-cookie'];
  return (Array.isArray(value) ? value : value ? [value] : []) as string[];
};
const cookieValue = (res: { headers: Record<string, unknown> }, name: string) =>
  setCookies(res)
    .find((c) => c.startsWith(`${name}=`))
    ?.split(';')[0]
    .slice(name.length + 1);

describe('signing in to the pages', () => {
  let t: TestApp;
  let secret: any;

  async function form() {
    const res = await t.request({ method: 'GET', url: '/users/sign_in', token: null });
    const token = /name="authenticity_token" value="([^"]+)"/.exec(res.body)?.[1];
    return { res, token: token!, cookie: `_snippetd_sign_in=${cookieValue(res, '_snippetd_sign_in')}` };
  }
  /** `session`: the session cookie the browser already has, sent along. */
  async function submit(login: string, password: string, redirectTo = '/', session?: string) {
    const f = await form();
    const payload = new URLSearchParams({ authenticity_token: f.token, login, password, redirect_to: redirectTo });
    return t.request({
      method: 'POST',
      url: '/users/sign_in',
      token: null,
      headers: {
        cookie: session ? `${f.cookie}; ${session}` : f.cookie,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: payload.toString(),
    });
  }
  async function session(login: string, password = PASSWORD) {
    const res = await submit(login, password);
    assert.equal(res.statusCode, 303, res.body);
    return `_snippetd_session=${cookieValue(res, '_snippetd_session')}`;
  }
  const view = (url: string, cookie?: string) =>
    t.request({ method: 'GET', url: pathOf(url), token: null, headers: cookie ? { cookie } : {} });
  const user = (username: string) =>
    t.must('POST', '/users', ROOT_TOKEN, {
      username,
      email: `${username}@example.com`,
      name: username,
      password: PASSWORD,
    });

  before(async () => {
    t = await createTestApp();
    const member = await user('member');
    await user('outsider');
    await user('blocked');
    await user('resting');
    await user('racing');
    const project = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'private-project' });
    await t.must('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: member.id, access_level: 20 });
    secret = await t.must('POST', `/projects/${project.id}/snippets`, ROOT_TOKEN, {
      title: 'Secret plan',
      visibility: 'private',
      files: [{ file_path: 'plan.txt', content: 'the plan' }],
    });
  });
  after(() => t.close());

  it('the form carries a token matching a cookie other sites cannot send', async () => {
    const { res, token } = await form();
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    const cookie = setCookies(res).find((c) => c.startsWith('_snippetd_sign_in='))!;
    assert.equal(cookie, `_snippetd_sign_in=${token}; Path=/users/sign_in; HttpOnly; SameSite=Strict`);
  });

  it('a member signs in by username or email, is sent back where they were, and sees the private snippet', async () => {
    assertHiddenPage(await view(secret.web_url), secret.web_url, false);
    const res = await submit('member', PASSWORD, pathOf(secret.web_url));
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, pathOf(secret.web_url));
    const cookie = setCookies(res).find((c) => c.startsWith('_snippetd_session='))!;
    assert.match(cookie, /^_snippetd_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
    const page = await view(secret.web_url, cookie.split(';')[0]);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Secret plan/);
    assert.match(page.body, /<details class="account user-menu"><summary>member<\/summary>/);
    assert.match(
      page.body,
      /<form method="post" action="\/users\/sign_out"><input type="hidden" name="authenticity_token" value="[\w-]{43}"><button type="submit">Sign out<\/button><\/form>/,
    );
    assert.equal((await view(secret.raw_url, cookie.split(';')[0])).body, 'the plan');
    assert.equal(
      (await view(secret.raw_url, cookie.split(';')[0])).headers['cache-control'],
      'max-age=60, private, must-revalidate, stale-while-revalidate=60, stale-if-error=300, s-maxage=60',
    );
    assert.equal((await submit('MEMBER@example.com', PASSWORD)).statusCode, 303);
  });

  it('a signed-in non-member still gets 404', async () => {
    assert.equal((await view(secret.web_url, await session('outsider'))).statusCode, 404);
  });

  it('never sends a visitor to another site after signing in', async () => {
    // Then paths a page would redirect elsewhere once decoded (the legacy snippet path).
    for (const target of [
      '//evil.example/x',
      '/\\evil.example',
      'https://evil.example/',
      '/%2Fevil.example/snippets/1',
      '/%5cevil.example/snippets/1',
      '/\t/evil.example', // a browser drops the tab from a Location
    ]) {
      const res = await submit('member', PASSWORD, target);
      assert.equal(res.headers.location, '/', target);
    }
  });

  it('sends a visitor back to a path with any characters, percent-encoded into the Location', async () => {
    // The whole way a browser goes: the form asked for with the path in its query, then sent.
    const f = await t.request({
      method: 'GET',
      url: '/users/sign_in?redirect_to=/%E6%97%A5%E6%9C%AC',
      token: null,
    });
    const returnTo = /name="redirect_to" value="([^"]*)"/.exec(f.body)![1];
    assert.equal(returnTo, '/日本');
    const res = await t.request({
      method: 'POST',
      url: '/users/sign_in',
      token: null,
      headers: {
        cookie: `_snippetd_sign_in=${cookieValue(f, '_snippetd_sign_in')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({
        authenticity_token: /name="authenticity_token" value="([^"]+)"/.exec(f.body)![1],
        login: 'member',
        password: PASSWORD,
        redirect_to: returnTo,
      }).toString(),
    });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, '/%E6%97%A5%E6%9C%AC');
    for (const [target, location] of [
      ['/é', '/%C3%A9'], // Latin-1: Node would send the byte 0xE9, which no browser reads as é
      ['/a b/"<x>"?q=ü&r={1}#`f`', '/a%20b/%22%3Cx%3E%22?q=%C3%BC&r=%7B1%7D#%60f%60'],
      ['/%E6%97%A5?q=%C3%BC', '/%E6%97%A5?q=%C3%BC'], // escapes already there stay as they are
      ['/😀', '/%F0%9F%98%80'],
      ['/\u3000/evil.example', '/%E3%80%80/evil.example'], // a space a browser does not drop: a path here
      ['/／evil.example', '/%EF%BC%8Fevil.example'], // a fullwidth solidus: a path here, never a host
    ]) {
      const signedIn = await submit('member', PASSWORD, target);
      assert.equal(signedIn.statusCode, 303, `${target}: ${signedIn.body}`);
      assert.equal(signedIn.headers.location, location, target);
    }
  });

  it("a wrong password is 401 with GitLab's message and no session; a form without its token is refused", async () => {
    const res = await submit('member', 'wrong password');
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /Invalid login or password\./);
    assert.equal(cookieValue(res, '_snippetd_session'), undefined);
    assert.equal((await submit('nobody', PASSWORD)).statusCode, 401);
    const forged = await t.request({
      method: 'POST',
      url: '/users/sign_in',
      token: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `authenticity_token=x&login=member&password=${encodeURIComponent(PASSWORD)}`,
    });
    assert.equal(forged.statusCode, 422);
    assert.equal(cookieValue(forged, '_snippetd_session'), undefined);
    // As many characters as the real token, but more bytes: refused as a wrong token, not a 500.
    const f = await form();
    const multibyte = new URLSearchParams({
      authenticity_token: 'é'.repeat(f.token.length),
      login: 'member',
      password: PASSWORD,
    });
    const wide = await t.request({
      method: 'POST',
      url: '/users/sign_in',
      token: null,
      headers: { cookie: f.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: multibyte.toString(),
    });
    assert.equal(wide.statusCode, 422);
    // A field sent as a hash or a list is no login or password: 401, not a 500.
    for (const fields of ['login[a]=member&password=x', `login=member&password[][a]=${encodeURIComponent(PASSWORD)}`]) {
      const g = await form();
      const odd = await t.request({
        method: 'POST',
        url: '/users/sign_in',
        token: null,
        headers: { cookie: g.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: `authenticity_token=${encodeURIComponent(g.token)}&${fields}`,
      });
      assert.equal(odd.statusCode, 401, fields);
      assert.match(odd.body, /Invalid login or password\./);
    }
  });

  it('signing out ends the session on the server, not only in the browser', async () => {
    const cookie = await session('member');
    const home = await t.request({ method: 'GET', url: '/', token: null, headers: { cookie } });
    const formToken = /name="authenticity_token" value="([^"]+)"/.exec(home.body)![1];
    const signOut = (token: string, headers: Record<string, string> = {}) =>
      t.request({
        method: 'POST',
        url: '/users/sign_out',
        token: null,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: new URLSearchParams({ authenticity_token: token }).toString(),
      });
    // Another site cannot sign a visitor out: without this session's token, or from another origin, nothing ends.
    assert.equal((await signOut('')).statusCode, 422);
    assert.equal((await signOut(formToken, { origin: 'https://evil.example' })).statusCode, 422);
    assert.equal((await view(secret.web_url, cookie)).statusCode, 200);
    const out = await signOut(formToken);
    assert.equal(out.statusCode, 303);
    assert.equal(out.headers.location, '/');
    assert.match(setCookies(out)[0], /^_snippetd_session=; .*Max-Age=0/);
    assertHiddenPage(await view(secret.web_url, cookie), secret.web_url, false);
  });

  it('a sign-in removes the sessions idle longer than a week, which no cookie may bring back', async () => {
    const member = (await t.must('GET', '/users?username=member', ROOT_TOKEN))[0];
    const kysely = t.app.store.kysely;
    const at = (daysAgo: number) => new Date(Date.now() - daysAgo * 24 * 3600 * 1000).toISOString();
    const rows = [8, 30, 6].map((days, i) => ({
      token_digest: `idle-${days}-${i}`,
      user_id: member.id,
      created_at: at(days),
      last_seen_at: at(days),
    }));
    await kysely.insertInto('sessions').values(rows).execute();
    await session('outsider');
    const left = await kysely
      .selectFrom('sessions')
      .select('token_digest')
      .where('token_digest', 'like', 'idle-%')
      .execute();
    assert.deepEqual(
      left.map((r) => r.token_digest),
      ['idle-6-2'],
    );
  });

  it('the sign-in page sends someone signed in where signing in would (Devise require_no_authentication)', async () => {
    const cookie = await session('member');
    const to = (query: string) =>
      t.request({ method: 'GET', url: `/users/sign_in${query}`, token: null, headers: { cookie } });
    for (const [query, location] of [
      ['', '/'],
      [`?redirect_to=${encodeURIComponent(pathOf(secret.web_url))}`, pathOf(secret.web_url)],
      ['?redirect_to=%2F%2Fevil.example', '/'],
    ]) {
      const res = await to(query);
      assert.equal(res.statusCode, 302, query);
      assert.equal(res.headers.location, location, query);
      assert.equal(res.headers['set-cookie'], undefined, query);
    }
    // A session that ended is no one: the form again.
    await signOut(t.app.store, decodeURIComponent(cookie.split('=')[1]));
    const form = await to('');
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /name="authenticity_token"/);
  });

  it('a sign-in ends the session the browser had: whoever was signed in there is signed out', async () => {
    const before = await session('member');
    assert.equal((await view(secret.web_url, before)).statusCode, 200);
    const res = await submit('outsider', PASSWORD, '/', before);
    assert.equal(res.statusCode, 303, res.body);
    const after = `_snippetd_session=${cookieValue(res, '_snippetd_session')}`;
    assert.notEqual(after, before);
    assertHiddenPage(await view(secret.web_url, before), secret.web_url, false);
    assertHiddenPage(await view(secret.web_url, after), secret.web_url, true);
  });

  it('locks the account for 10 minutes after 10 failed attempts, then lets it in again', async () => {
    await user('forgetful');
    for (let i = 1; i <= 9; i++) assert.match((await submit('forgetful', `wrong ${i}`)).body, /Invalid login/);
    assert.match((await submit('forgetful', 'wrong 10')).body, /Invalid login or password\./);
    // The right password no longer lets it in; the answer is a wrong password's (Devise paranoid, as GitLab).
    const res = await submit('forgetful', PASSWORD);
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /Invalid login or password\./);
    assert.equal(cookieValue(res, '_snippetd_session'), undefined);
    const later = await signIn(t.app.store, 'forgetful', PASSWORD, Date.now() + LOCK_MS + 1000);
    assert.equal(later.ok, true);
  });

  it('counts failed attempts made at once: ten together lock the account; after the lock the count starts over', async () => {
    await user('hasty');
    // On PostgreSQL they run on several connections at once: counted by reading, adding one and writing
    // back, ten made one or two.
    await Promise.all(Array.from({ length: 10 }, (_, i) => submit('hasty', `wrong ${i}`)));
    const res = await submit('hasty', PASSWORD);
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /Invalid login or password\./);
    assert.equal(cookieValue(res, '_snippetd_session'), undefined);
    const later = Date.now() + LOCK_MS + 1000;
    for (let i = 1; i <= 9; i++)
      assert.deepEqual(await signIn(t.app.store, 'hasty', `wrong ${i}`, later), { ok: false, reason: 'invalid' });
    assert.deepEqual(await signIn(t.app.store, 'hasty', 'wrong 10', later), { ok: false, reason: 'locked' });
  });

  it('an unknown login and a locked account get the same answer, the right password or not', async () => {
    await user('locked-out');
    for (let i = 1; i <= 10; i++) await submit('locked-out', `wrong ${i}`);
    assert.deepEqual(await signIn(t.app.store, 'locked-out', PASSWORD), { ok: false, reason: 'locked' });
    // The form's token and the script's nonce are new on every answer; everything else must not differ.
    const answer = async (login: string, password: string) => {
      const res = await submit(login, password);
      // The login typed is kept in the form (GitLab's); the rest must be the same.
      const body = res.body
        .replace(/name="authenticity_token" value="[^"]+"/, 'name="authenticity_token" value=""')
        .replace(/name="login" value="[^"]*"/, 'name="login" value=""')
        .replace(/nonce="[^"]+"/g, 'nonce=""');
      return { status: res.statusCode, type: res.headers['content-type'], body };
    };
    const unknown = await answer('no-such-user', 'wrong password');
    assert.equal(unknown.status, 401);
    assert.match(unknown.body, /Invalid login or password\./);
    assert.deepEqual(await answer('locked-out', 'wrong password'), unknown);
    assert.deepEqual(await answer('locked-out', PASSWORD), unknown);
    assert.deepEqual(await answer('locked-out@example.com', PASSWORD), unknown);
    assert.deepEqual(await answer('member', 'wrong password'), unknown);
    // An administrator sees the lock as it is; others are not locked.
    const users = await t.must('GET', '/users?per_page=100', ROOT_TOKEN);
    const locked = users.filter((u: { locked: boolean }) => u.locked).map((u: { username: string }) => u.username);
    assert.ok(locked.includes('locked-out') && !locked.includes('member'), String(locked));
    const lockedOut = users.find((u: { username: string }) => u.username === 'locked-out');
    assert.equal((await t.must('GET', `/users/${lockedOut.id}`, ROOT_TOKEN)).locked, true);
  });

  it('an unknown login takes as long to refuse as a known one (a password is checked either way)', async () => {
    await user('timed');
    const millis = async (login: string) => {
      const started = performance.now();
      assert.equal((await submit(login, 'wrong password')).statusCode, 401);
      return performance.now() - started;
    };
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const known: number[] = [];
    const unknown: number[] = [];
    // Alternated, so that a busy moment of a shared machine falls on both; 5 failures stay under the lock.
    for (let i = 0; i < 5; i++) {
      known.push(await millis('timed'));
      unknown.push(await millis(`nobody-${i}`));
    }
    // Unchecked, an unknown login took a fifth of the time; checked against a dummy hash, about the same.
    assert.ok(median(unknown) >= 0.5 * median(known), `unknown ${unknown} ms, known ${known} ms`);
  });

  it('a blocked user cannot sign in, and their open session no longer counts', async () => {
    const cookie = await session('blocked');
    const blocked = (await t.must('GET', '/users?username=blocked', ROOT_TOKEN))[0];
    await t.must('POST', `/users/${blocked.id}/block`, ROOT_TOKEN);
    const res = await submit('blocked', PASSWORD);
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /Your account has been blocked/);
    const home = await t.request({ method: 'GET', url: '/', token: null, headers: { cookie } });
    assert.match(home.body, /href="\/users\/sign_in">Sign in<\/a>/);
  });

  it('a deactivated user who signs in with their password is active again, as in GitLab; a wrong password changes nothing', async () => {
    const resting = (await t.must('GET', '/users?username=resting', ROOT_TOKEN))[0];
    await t.must('POST', `/users/${resting.id}/deactivate`, ROOT_TOKEN);
    const wrong = await submit('resting', 'not the password');
    assert.equal(wrong.statusCode, 401);
    assert.equal((await t.must('GET', `/users/${resting.id}`, ROOT_TOKEN)).state, 'deactivated');
    const cookie = await session('resting');
    const home = await t.request({ method: 'GET', url: '/', token: null, headers: { cookie } });
    assert.match(home.body, /resting/);
    assert.doesNotMatch(home.body, /href="\/users\/sign_in">Sign in<\/a>/);
    assert.equal((await t.must('GET', `/users/${resting.id}`, ROOT_TOKEN)).state, 'active');
  });

  it('a block that lands while a deactivated user signs in stands: the sign-in does not make them active again', async () => {
    const racing = (await t.must('GET', '/users?username=racing', ROOT_TOKEN))[0];
    await t.must('POST', `/users/${racing.id}/deactivate`, ROOT_TOKEN);
    // The password check takes tens of milliseconds on the thread pool; the block is answered meanwhile.
    const signingIn = signIn(t.app.store, 'racing', PASSWORD);
    await t.must('POST', `/users/${racing.id}/block`, ROOT_TOKEN);
    const result = await signingIn;
    assert.equal((await t.must('GET', `/users/${racing.id}`, ROOT_TOKEN)).state, 'blocked');
    assert.deepEqual(result, { ok: false, reason: 'blocked' });
  });

  it('a session unused for a week ends', async () => {
    const token = (await session('member')).split('=')[1];
    assert.equal((await sessionUser(t.app.store, token, Date.now() + SESSION_IDLE_MS - 60_000))?.username, 'member');
    assert.equal(await sessionUser(t.app.store, token, Date.now() + 2 * SESSION_IDLE_MS), null);
    // Ended for good: the row is gone, so even "now" it is unknown.
    assert.equal(await sessionUser(t.app.store, token), null);
  });

  it('an API token never makes a page visitor known', async () => {
    const res = await t.request({ method: 'GET', url: pathOf(secret.web_url), token: ROOT_TOKEN });
    assertHiddenPage(res, secret.web_url, false);
  });

  it('a token in a page’s URL goes no further: not into the sign-in redirect, its log line or its link', async () => {
    // Pages never read one (a GitLab habit: a raw URL with ?private_token=); the request's own log line masks
    // it, and the return path the page hands on must not carry it to the next request's line in clear.
    const url = `${pathOf(secret.web_url)}/raw?private_token=${ROOT_TOKEN}&inline=false`;
    const res = await t.request({ method: 'GET', url, token: null });
    assert.equal(res.statusCode, 302);
    assert.equal(
      res.headers.location,
      `/users/sign_in?redirect_to=${encodeURIComponent(`${pathOf(secret.web_url)}/raw?inline=false`)}`,
    );
    const open = await t.request({ method: 'GET', url: `/explore/snippets?feed_token=${ROOT_TOKEN}`, token: null });
    assert.equal(open.statusCode, 200);
    assert.ok(!open.body.includes(ROOT_TOKEN), 'the page’s Sign in link carries the token');
    assert.match(
      open.body,
      /<a class="account" href="\/users\/sign_in\?redirect_to=%2Fexplore%2Fsnippets">Sign in<\/a>/,
    );
  });

  it('the session cookie is Secure when snippetd is served over https', async () => {
    const https = await createTestApp({ externalUrl: 'https://snippets.example' });
    try {
      await https.must('POST', '/users', ROOT_TOKEN, {
        username: 'sec',
        email: 's@example.com',
        name: 's',
        password: PASSWORD,
      });
      const f = await https.request({ method: 'GET', url: '/users/sign_in', token: null });
      assert.match(setCookies(f)[0], /; Secure$/);
      const token = /name="authenticity_token" value="([^"]+)"/.exec(f.body)![1];
      const res = await https.request({
        method: 'POST',
        url: '/users/sign_in',
        token: null,
        headers: { cookie: `_snippetd_sign_in=${token}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: `authenticity_token=${token}&login=sec&password=${encodeURIComponent(PASSWORD)}`,
      });
      assert.match(setCookies(res)[0], /^_snippetd_session=[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
    } finally {
      await https.close();
    }
  });
});
