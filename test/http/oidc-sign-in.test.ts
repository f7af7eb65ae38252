// Signing in with an OpenID Connect provider (issue 33), the whole way over HTTP against a real provider
// on loopback (test/oidc-provider.ts): the page's button, the authorization request (code flow, PKCE S256,
// state, nonce), the callback, the user it creates and finds again by issuer and `sub`, the groups that
// set admin and external, and every refusal: a page saying why, with no session and no user made.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';
import { CLIENT_ID, CLIENT_SECRET, startTestProvider, type TestProvider } from '../oidc-provider.ts';
import { loadConfig } from '../../src/config.ts';

// Nothing listens there: the app is reached through inject, the provider only redirects the "browser" to it.
const EXTERNAL_URL = 'http://127.0.0.1:9';
const CALLBACK = `${EXTERNAL_URL}/users/auth/openid_connect/callback`;
const PASSWORD = 'correct horse battery';

/** A browser's cookies for snippetd and the provider, with their paths; enough for this flow. */
class Browser {
  private jar = new Map<string, { name: string; value: string; path: string; host: string }>();

  constructor(
    private readonly t: TestApp,
    private readonly issuer: string,
  ) {}

  store(host: string, setCookies: string[]) {
    for (const line of setCookies) {
      const [pair, ...attributes] = line.split(';').map((s) => s.trim());
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const path = attributes.find((a) => /^path=/i.test(a))?.slice(5) ?? '/';
      const key = `${host} ${name} ${path}`;
      if (attributes.some((a) => /^max-age=0$/i.test(a))) this.jar.delete(key);
      else this.jar.set(key, { name, value: pair.slice(at + 1), path, host });
    }
  }

  cookieHeader(host: string, path: string): string {
    return [...this.jar.values()]
      .filter((c) => c.host === host && path.startsWith(c.path))
      .sort((a, b) => b.path.length - a.path.length)
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  value(name: string): string | undefined {
    return [...this.jar.values()].find((c) => c.host === 'snippetd' && c.name === name)?.value;
  }

  /** A request to snippetd (`url`: a path, or a URL below EXTERNAL_URL), cookies sent and kept. */
  async snippetd(method: 'GET' | 'POST', url: string, form?: Record<string, string>) {
    const path = url.startsWith(EXTERNAL_URL) ? url.slice(EXTERNAL_URL.length) : url;
    const res = await this.t.request({
      method,
      url: path,
      token: null,
      headers: {
        cookie: this.cookieHeader('snippetd', path.split('?')[0]),
        ...(form && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form && { payload: new URLSearchParams(form).toString() }),
    });
    this.store('snippetd', setCookiesOf(res.headers));
    return res;
  }

  /** Follows the provider's redirects (its login interaction included) until one leads back to snippetd. */
  async atProvider(url: string): Promise<string> {
    let next = url;
    for (let hops = 0; hops < 10 && next.startsWith(this.issuer); hops++) {
      const res = await fetch(next, {
        redirect: 'manual',
        headers: { cookie: this.cookieHeader('provider', new URL(next).pathname) },
      });
      this.store('provider', res.headers.getSetCookie());
      const location = res.headers.get('location');
      assert.ok(location, `the provider answered ${res.status} at ${next}: ${await res.text()}`);
      next = new URL(location, next).href;
    }
    assert.ok(next.startsWith(CALLBACK), `the provider sent the browser to ${next}`);
    return next;
  }
}

const setCookiesOf = (headers: Record<string, unknown>) => {
  const value = headers['set-cookie'];
  return (Array.isArray(value) ? value : value ? [value] : []) as string[];
};

/** The sign-in forms' token (a signed-in page also has the sign-out form's, another one). */
const formToken = (body: string) =>
  /<form method="post" action="\/users\/auth\/openid_connect"[\s\S]*?name="authenticity_token" value="([^"]+)"/.exec(
    body,
  )![1];

describe('signing in with OpenID Connect', () => {
  let t: TestApp;
  let op: TestProvider;

  /** The sign-in page's button pressed: answers the provider's authorization URL. */
  async function pressButton(browser: Browser, returnTo = '/') {
    const page = await browser.snippetd('GET', `/users/sign_in?redirect_to=${encodeURIComponent(returnTo)}`);
    const start = await browser.snippetd('POST', '/users/auth/openid_connect', {
      authenticity_token: formToken(page.body),
      redirect_to: returnTo,
    });
    assert.equal(start.statusCode, 303, start.body);
    return new URL(start.headers.location as string);
  }

  /** The whole way: button, provider, callback. Answers the callback's answer and the URL it was reached at. */
  async function signIn(
    sub: string,
    { returnTo = '/', browser = new Browser(t, op.issuer), change = (url: URL) => url } = {},
  ) {
    op.loginAs = sub;
    const authorization = change(await pressButton(browser, returnTo));
    const callback = await browser.atProvider(authorization.href);
    const res = await browser.snippetd('GET', callback);
    return { res, callback, browser, authorization };
  }

  const sessionCookie = (res: { headers: Record<string, unknown> }) =>
    setCookiesOf(res.headers).find((c) => c.startsWith('_snippetd_session=') && !/Max-Age=0/.test(c));

  const users = async () => (await t.ok('GET', '/users?per_page=100', ROOT_TOKEN, undefined, 200)) as any[];
  const userNamed = async (username: string) => (await users()).find((u) => u.username === username);

  /** The page the session cookie of `res` signs in: whose menu the home page shows. */
  async function signedInAs(res: { headers: Record<string, unknown> }): Promise<string | null> {
    const cookie = sessionCookie(res)!.split(';')[0];
    const home = await t.request({ method: 'GET', url: '/explore/snippets', token: null, headers: { cookie } });
    return /<details class="account user-menu"><summary>([^<]+)<\/summary>/.exec(home.body)?.[1] ?? null;
  }

  /** A refusal: the status, the reason on a page, no session, no user made or changed. */
  async function assertRefused(run: () => Promise<{ res: any }>, status: number, text: RegExp) {
    const before = await users();
    const { res } = await run();
    assert.equal(res.statusCode, status, res.body);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(res.body, /<h1>Could not sign you in with Company SSO<\/h1>/);
    assert.match(res.body, text);
    assert.equal(sessionCookie(res), undefined);
    assert.equal(res.headers.location, undefined);
    assert.deepEqual(await users(), before);
    return res;
  }

  before(async () => {
    op = await startTestProvider({
      'sub-alice': {
        email: 'alice@corp.example',
        preferred_username: 'alice',
        name: 'Alice Liddell',
        groups: ['staff'],
      },
      'sub-bob-sso': { email: 'bob.sso@corp.example', preferred_username: 'bob', name: 'Bob SSO', groups: ['staff'] },
      'sub-carol': { email: 'carol@corp.example', preferred_username: 'carol', groups: ['staff', 'snippetd-admins'] },
      'sub-dave': { email: 'dave@corp.example', preferred_username: 'dave', groups: ['contractors'] },
      'sub-eve': { email: 'eve@corp.example', preferred_username: 'eve', groups: ['visitors'] },
      'sub-taken-email': { email: 'bob@example.com', preferred_username: 'bobby', groups: ['staff'] },
      'sub-bad-email': { email: 'not an email', preferred_username: 'odd', groups: ['staff'] },
      'sub-mallory': { email: 'mallory@corp.example', preferred_username: 'mallory', groups: ['staff'] },
      'sub-frank': { email: 'frank@corp.example', preferred_username: 'frank', groups: ['staff'] },
      'sub-grace': { email: 'grace@corp.example', name: 'Grace', groups: ['staff'] },
      'sub-zoe': { email: 'zoe@corp.example', preferred_username: '.Zoë Saldaña@corp', groups: ['staff'] },
      'sub-admin': { email: 'admin@corp.example', preferred_username: 'admin', groups: ['staff'] },
      'sub-victim': { email: 'victim@corp.example', preferred_username: 'victim', groups: ['staff'] },
      'sub-umlaut': { email: 'ÄRGER@corp.example', preferred_username: 'umlaut', groups: ['staff'] },
      // A run of dots: a pattern that strips trailing dots tries every start in it (quadratic).
      'sub-dots': { email: 'dots@corp.example', preferred_username: `a${'.'.repeat(100_000)}x`, groups: ['staff'] },
      'sub-long-name': {
        email: 'long@corp.example',
        preferred_username: 'longname',
        name: 'N'.repeat(256),
        groups: ['staff'],
      },
      // Its userinfo answer is 2 MiB: the name claim alone.
      'sub-huge': {
        email: 'huge@corp.example',
        preferred_username: 'huge',
        name: 'H'.repeat(2 << 20),
        groups: ['staff'],
      },
    });
    t = await createTestApp({
      externalUrl: EXTERNAL_URL,
      oidcIssuer: op.issuer,
      oidcClientId: CLIENT_ID,
      oidcClientSecret: CLIENT_SECRET,
      oidcLabel: 'Company SSO',
      oidcAdminGroups: ['snippetd-admins'],
      oidcExternalGroups: ['contractors'],
      oidcAllowedGroups: ['staff', 'contractors'],
    });
    await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'bob',
      email: 'bob@example.com',
      name: 'Bob',
      password: PASSWORD,
    });
  });
  after(async () => {
    await t?.close();
    await op?.close();
  });

  it('the sign-in page has the provider button, a POST with the form token, and its policy lets the form reach the provider', async () => {
    const browser = new Browser(t, op.issuer);
    const page = await browser.snippetd('GET', '/users/sign_in?redirect_to=%2Fdashboard%2Fsnippets');
    assert.equal(page.statusCode, 200);
    const token = formToken(page.body);
    assert.ok(
      page.body.includes(`<form method="post" action="/users/auth/openid_connect" class="sign-in-provider">
<input type="hidden" name="authenticity_token" value="${token}">
<input type="hidden" name="redirect_to" value="/dashboard/snippets">
<button type="submit">Sign in with Company SSO</button>
</form>`),
      page.body,
    );
    // The password form is there too (password sign-in is on).
    assert.match(page.body, /<form method="post" action="\/users\/sign_in" class="sign-in">/);
    assert.match(page.headers['content-security-policy'] as string, new RegExp(`form-action 'self' ${op.issuer};`));
    // The token's cookie goes to both forms' paths.
    assert.deepEqual(
      setCookiesOf(page.headers).map((c) => c.replace(token, 'T')),
      [
        '_snippetd_sign_in=T; Path=/users/sign_in; HttpOnly; SameSite=Strict',
        '_snippetd_sign_in=T; Path=/users/auth/openid_connect; HttpOnly; SameSite=Strict',
      ],
    );
  });

  it('the button without the sign-in page’s token does not go to the provider', async () => {
    const browser = new Browser(t, op.issuer);
    await browser.snippetd('GET', '/users/sign_in');
    const res = await browser.snippetd('POST', '/users/auth/openid_connect', {
      authenticity_token: 'forged',
      redirect_to: '/',
    });
    assert.equal(res.statusCode, 422);
    assert.match(res.body, /The form expired\. Please sign in again\./);
    assert.equal(browser.value('_snippetd_oidc'), undefined);
  });

  it('asks the provider for a code with PKCE S256, state and nonce, for GitLab’s redirect URI', async () => {
    const url = await pressButton(new Browser(t, op.issuer));
    assert.equal(url.origin + url.pathname, `${op.issuer}/auth`);
    const p = url.searchParams;
    assert.equal(p.get('response_type'), 'code');
    assert.equal(p.get('client_id'), CLIENT_ID);
    assert.equal(p.get('redirect_uri'), CALLBACK);
    assert.equal(p.get('scope'), 'openid profile email');
    assert.equal(p.get('code_challenge_method'), 'S256');
    assert.match(p.get('code_challenge')!, /^[\w-]{43}$/);
    assert.match(p.get('state')!, /^[\w-]{43}$/);
    assert.match(p.get('nonce')!, /^[\w-]{43}$/);
    assert.notEqual(p.get('state'), p.get('nonce'));
  });

  it('the first sign-in creates the user from the claims, links the identity, and lands on the return path with a new session', async () => {
    const { res } = await signIn('sub-alice', { returnTo: '/dashboard/snippets?page=2' });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, '/dashboard/snippets?page=2');
    assert.match(sessionCookie(res)!, /^_snippetd_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
    assert.equal(await signedInAs(res), 'alice');
    const alice = await userNamed('alice');
    assert.equal(alice.email, 'alice@corp.example');
    assert.equal(alice.name, 'Alice Liddell');
    assert.equal(alice.is_admin, false);
    assert.equal(alice.external, false);
    assert.deepEqual(alice.identities, [{ provider: 'openid_connect', extern_uid: 'sub-alice' }]);
    // GitLab's UserPublic: the user sees their own identities; root, without any, an empty list.
    assert.deepEqual(
      (await t.ok('GET', `/users/${alice.id}`, ROOT_TOKEN, undefined, 200)).identities,
      alice.identities,
    );
    assert.deepEqual((await t.ok('GET', '/user', ROOT_TOKEN, undefined, 200)).identities, []);
  });

  it('a second sign-in after the provider changed email and username is the same user; groups set admin and external each time', async () => {
    await signIn('sub-carol');
    const carol = await userNamed('carol');
    assert.equal(carol.is_admin, true);
    op.accounts.set('sub-carol', {
      email: 'carol.new@corp.example',
      preferred_username: 'carol-renamed',
      name: 'Carol New',
      groups: ['staff', 'contractors'],
    });
    const { res } = await signIn('sub-carol');
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(await signedInAs(res), 'carol');
    const again = await userNamed('carol');
    assert.equal(again.id, carol.id);
    assert.equal(await userNamed('carol-renamed'), undefined);
    assert.equal(again.is_admin, false);
    assert.equal(again.external, true);
    op.accounts.set('sub-carol', { ...op.accounts.get('sub-carol'), groups: ['staff', 'snippetd-admins'] });
    await signIn('sub-carol');
    const third = await userNamed('carol');
    assert.deepEqual([third.id, third.is_admin, third.external], [carol.id, true, false]);
    // An administrator by the groups may do what administrators do over the API too.
    const dave = await signIn('sub-dave');
    assert.equal(dave.res.statusCode, 303);
    assert.equal((await userNamed('dave')).external, true);
  });

  it('a username already taken is made unique: the existing account is never signed in', async () => {
    const bob = await userNamed('bob');
    const { res } = await signIn('sub-bob-sso');
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(await signedInAs(res), 'bob1');
    const bob1 = await userNamed('bob1');
    assert.equal(bob1.email, 'bob.sso@corp.example');
    assert.deepEqual(bob1.identities, [{ provider: 'openid_connect', extern_uid: 'sub-bob-sso' }]);
    assert.deepEqual(await userNamed('bob'), bob);
    // Without preferred_username, the email's local part.
    const grace = await signIn('sub-grace');
    assert.equal(await signedInAs(grace.res), 'grace');
    // Made a valid path: accents dropped, other characters `_`, no leading `.`; a reserved name numbered.
    assert.equal(await signedInAs((await signIn('sub-zoe')).res), 'Zoe_Saldana_corp');
    assert.equal(await signedInAs((await signIn('sub-admin')).res), 'admin1');
  });

  it('a username whose first hundred numbered forms are taken still gets the next free one', async () => {
    // Anyone may create top-level groups: taking victim … victim100 must not lock victim out.
    for (let n = 0; n <= 100; n++) {
      const path = n === 0 ? 'Victim' : `victim${n}`;
      await t.must('POST', '/groups', ROOT_TOKEN, { name: path, path });
    }
    const { res } = await signIn('sub-victim');
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(await signedInAs(res), 'victim101');
    assert.equal((await userNamed('victim101')).email, 'victim@corp.example');
  });

  it('refuses an email address another account has', async () => {
    await assertRefused(() => signIn('sub-taken-email'), 403, /An account with your email address already exists here/);
    // Letters beyond ASCII too, on both databases (SQLite's lower() changes only ASCII).
    await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'aerger',
      email: 'ÄRGER@corp.example',
      name: 'Ärger',
      password: PASSWORD,
    });
    await assertRefused(() => signIn('sub-umlaut'), 403, /An account with your email address already exists here/);
  });

  it('refuses claims an account here cannot have (an email that is not one, a name over GitLab’s 255 characters) with the page, not JSON', async () => {
    for (const sub of ['sub-bad-email', 'sub-long-name'])
      await assertRefused(() => signIn(sub), 403, /gave an email address or name an account here cannot have/);
  });

  it('a username from a claim of any length is made from its start, in time that grows with it no faster', async () => {
    const started = performance.now();
    const { res } = await signIn('sub-dots');
    const ms = performance.now() - started;
    assert.equal(res.statusCode, 303, res.body);
    // Its first 255 characters: `a` and dots, which a username may not end with.
    assert.equal(await signedInAs(res), 'a');
    // A sign-in takes tens of milliseconds; the claim took seconds of the event loop (17 s at 100,000 dots).
    assert.ok(ms < 3000, `the sign-in took ${ms.toFixed(0)} ms`);
  });

  it('refuses a provider answer over 1 MiB', async () => {
    await assertRefused(() => signIn('sub-huge'), 401, /could not be verified/);
  });

  it('a return path too long for the flow cookie is left for the front page, and the sign-in still works', async () => {
    // Browsers drop a cookie whose name and value pass 4096 bytes (Chromium did): the return then had no
    // state to match and every sign-in from such a page was refused.
    const returnTo = `/explore/snippets?search=${'a'.repeat(3200)}`;
    const browser = new Browser(t, op.issuer);
    await pressButton(browser, returnTo);
    const flow = browser.value('_snippetd_oidc')!;
    assert.ok(`_snippetd_oidc=${flow}`.length <= 4096, `the flow cookie has ${flow.length} bytes`);
    const { res } = await signIn('sub-alice', { returnTo, browser });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, '/');
    // One that fits still goes back.
    const short = await signIn('sub-alice', { returnTo: `/explore/snippets?search=${'a'.repeat(2000)}` });
    assert.equal(short.res.headers.location, `/explore/snippets?search=${'a'.repeat(2000)}`);
  });

  it('a new session replaces the one the browser had', async () => {
    const browser = new Browser(t, op.issuer);
    const before = await signInCookie(t, 'bob', PASSWORD);
    // Bob signs in in another tab while this one is at the provider (the sign-in page sends someone signed in on).
    const { res } = await signIn('sub-alice', {
      browser,
      change: (url) => {
        browser.store('snippetd', [`${before}; Path=/`]);
        return url;
      },
    });
    const after = sessionCookie(res)!.split(';')[0];
    assert.notEqual(after, before);
    const old = await t.request({
      method: 'GET',
      url: '/dashboard/snippets',
      token: null,
      headers: { cookie: before },
    });
    assert.equal(old.statusCode, 302, 'the old session is over');
    assert.equal(await signedInAs(res), 'alice');
  });

  it('refuses a return with another state, or with none started here', async () => {
    await assertRefused(
      () =>
        (async () => {
          op.loginAs = 'sub-mallory';
          const browser = new Browser(t, op.issuer);
          const callback = new URL(await browser.atProvider((await pressButton(browser)).href));
          callback.searchParams.set('state', 'another-state');
          return { res: await browser.snippetd('GET', callback.href) };
        })(),
      401,
      /its state does not match/,
    );
    // The provider's answer reaching a browser that never started a sign-in (login CSRF).
    await assertRefused(
      async () => {
        op.loginAs = 'sub-mallory';
        const attacker = new Browser(t, op.issuer);
        const callback = await attacker.atProvider((await pressButton(attacker)).href);
        return { res: await new Browser(t, op.issuer).snippetd('GET', callback) };
      },
      401,
      /its state does not match/,
    );
    assert.equal(await userNamed('mallory'), undefined);
  });

  it('refuses a replayed code', async () => {
    const first = await signIn('sub-frank');
    assert.equal(first.res.statusCode, 303);
    const frank = await userNamed('frank');
    // The same answer again, with the flow's cookie as it was (an attacker who copied both).
    const replay = new Browser(t, op.issuer);
    const flow = first.authorization.searchParams;
    const cookie = /_snippetd_oidc=([^;]+)/.exec(
      setCookiesOf((await first.browser.snippetd('GET', '/users/sign_in')).headers).join(';'),
    );
    assert.equal(cookie, null, 'the flow cookie was cleared after use');
    await assertRefused(
      async () => {
        // Replayed in the browser that used it: the flow is over, its cookie gone.
        return { res: await first.browser.snippetd('GET', first.callback) };
      },
      401,
      /its state does not match/,
    );
    assert.ok(flow.get('state'));
    const tokensBefore = op.tokenRequests;
    await assertRefused(
      async () => {
        op.loginAs = 'sub-frank';
        const authorization = await pressButton(replay);
        const saved = replay.value('_snippetd_oidc')!;
        const callback = await replay.atProvider(authorization.href);
        const res = await replay.snippetd('GET', callback);
        assert.equal(res.statusCode, 303, 'the first use signs in');
        replay.store('snippetd', [`_snippetd_oidc=${saved}; Path=/users/auth/openid_connect`]);
        return { res: await replay.snippetd('GET', callback) };
      },
      401,
      /could not be verified/,
    );
    assert.equal(op.tokenRequests, tokensBefore + 2, 'the provider refused the second exchange of the code');
    assert.deepEqual(await userNamed('frank'), frank);
  });

  it('refuses an ID token with a bad signature', async () => {
    await assertRefused(
      () => {
        op.spoilNextIdToken('bad_signature');
        return signIn('sub-mallory');
      },
      401,
      /could not be verified/,
    );
  });

  it('refuses an ID token for another audience', async () => {
    await assertRefused(
      () => {
        op.spoilNextIdToken('wrong_audience');
        return signIn('sub-mallory');
      },
      401,
      /could not be verified/,
    );
  });

  it('refuses an ID token with another nonce', async () => {
    await assertRefused(
      () =>
        signIn('sub-mallory', {
          change: (url) => {
            url.searchParams.set('nonce', 'a-nonce-snippetd-never-made');
            return url;
          },
        }),
      401,
      /could not be verified/,
    );
    assert.equal(await userNamed('mallory'), undefined);
  });

  it('refuses the provider’s refusal, saying what it said', async () => {
    const res = await assertRefused(
      async () => {
        const browser = new Browser(t, op.issuer);
        const state = (await pressButton(browser)).searchParams.get('state')!;
        const url = `/users/auth/openid_connect/callback?error=access_denied&error_description=${encodeURIComponent('<b>no</b>')}&state=${state}&iss=${encodeURIComponent(op.issuer)}`;
        return { res: await browser.snippetd('GET', url) };
      },
      401,
      /The identity provider did not sign you in\./,
    );
    assert.match(res.body, /<code>access_denied: &lt;b&gt;no&lt;\/b&gt;<\/code>/);
  });

  it('refuses a user outside the allowed groups, creating no one', async () => {
    await assertRefused(() => signIn('sub-eve'), 403, /not in a group allowed to sign in here/);
    assert.equal(await userNamed('eve'), undefined);
  });

  it('refuses a blocked user', async () => {
    const alice = await userNamed('alice');
    await t.must('POST', `/users/${alice.id}/block`, ROOT_TOKEN);
    try {
      await assertRefused(() => signIn('sub-alice'), 403, /Your account has been blocked/);
    } finally {
      await t.must('POST', `/users/${alice.id}/unblock`, ROOT_TOKEN);
    }
  });

  it('signs a deactivated user in and makes them active again, as GitLab does', async () => {
    const alice = await userNamed('alice');
    await t.must('POST', `/users/${alice.id}/deactivate`, ROOT_TOKEN);
    const { res } = await signIn('sub-alice');
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(await signedInAs(res), 'alice');
    assert.equal((await t.must('GET', `/users/${alice.id}`, ROOT_TOKEN)).state, 'active');
  });

  it('password sign-in for the web can be switched off, and API tokens keep working', async () => {
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { password_authentication_enabled_for_web: false });
    try {
      const browser = new Browser(t, op.issuer);
      const page = await browser.snippetd('GET', '/users/sign_in');
      assert.doesNotMatch(page.body, /action="\/users\/sign_in"/);
      assert.doesNotMatch(page.body, /type="password"/);
      assert.match(page.body, /<button type="submit">Sign in with Company SSO<\/button>/);
      const res = await browser.snippetd('POST', '/users/sign_in', {
        authenticity_token: formToken(page.body),
        login: 'bob',
        password: PASSWORD,
      });
      assert.equal(res.statusCode, 403);
      assert.match(res.body, /Signing in with a password is turned off/);
      assert.equal(sessionCookie(res), undefined);
      assert.equal((await t.ok('GET', '/user', ROOT_TOKEN, undefined, 200)).username, 'root');
      const settings = await t.ok('GET', '/application/settings', ROOT_TOKEN, undefined, 200);
      assert.equal(settings.password_authentication_enabled_for_web, false);
      // The provider still signs in.
      assert.equal((await signIn('sub-alice')).res.statusCode, 303);
    } finally {
      await t.must('PUT', '/application/settings', ROOT_TOKEN, { password_authentication_enabled_for_web: true });
    }
    assert.match(await signInCookie(t, 'bob', PASSWORD), /^_snippetd_session=/);
  });
});

describe('without OpenID Connect', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('has no button and no provider routes, and the password setting cannot lock everyone out', async () => {
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { password_authentication_enabled_for_web: false });
    const page = await t.request({ method: 'GET', url: '/users/sign_in', token: null });
    assert.doesNotMatch(page.body, /openid_connect/);
    assert.match(page.headers['content-security-policy'] as string, /form-action 'self';/);
    assert.match(page.body, /type="password"/);
    await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'pat',
      email: 'pat@example.com',
      name: 'Pat',
      password: PASSWORD,
    });
    assert.match(await signInCookie(t, 'pat', PASSWORD), /^_snippetd_session=[\w-]{43}$/);
    const start = await t.request({ method: 'POST', url: '/users/auth/openid_connect', token: null });
    assert.equal(start.statusCode, 404);
    const callback = await t.request({
      method: 'GET',
      url: '/users/auth/openid_connect/callback?code=x&state=y',
      token: null,
    });
    assert.equal(callback.statusCode, 404);
  });
});

describe('an issuer whose identifier ends with a slash (Authentik’s)', () => {
  let t: TestApp;
  let op: TestProvider;

  before(async () => {
    op = await startTestProvider(
      { 'sub-ann': { email: 'ann@corp.example', preferred_username: 'ann' } },
      { mountPath: '/application/o/snippetd/' },
    );
    // As the operator copies it from the provider; the configuration drops a trailing slash (a Keycloak realm's
    // issuer typed with one still works).
    const { oidcIssuer } = loadConfig(
      {
        SNIPPETD_OIDC_ISSUER: op.issuer,
        SNIPPETD_OIDC_CLIENT_ID: CLIENT_ID,
        SNIPPETD_OIDC_CLIENT_SECRET: CLIENT_SECRET,
      },
      [],
    );
    t = await createTestApp({
      externalUrl: EXTERNAL_URL,
      oidcIssuer,
      oidcClientId: CLIENT_ID,
      oidcClientSecret: CLIENT_SECRET,
    });
  });
  after(async () => {
    await t?.close();
    await op?.close();
  });

  it('signs in: the provider’s metadata names the issuer as it was given', async () => {
    const browser = new Browser(t, op.issuer);
    const page = await browser.snippetd('GET', '/users/sign_in');
    const start = await browser.snippetd('POST', '/users/auth/openid_connect', {
      authenticity_token: formToken(page.body),
      redirect_to: '/',
    });
    assert.equal(start.statusCode, 303, start.body);
    assert.ok((start.headers.location as string).startsWith(`${op.issuer}auth?`), start.headers.location as string);
    const res = await browser.snippetd('GET', await browser.atProvider(start.headers.location as string));
    assert.equal(res.statusCode, 303, res.body);
    const ann = (await t.ok('GET', '/users?username=ann', ROOT_TOKEN, undefined, 200)) as any[];
    assert.deepEqual(ann[0].identities, [{ provider: 'openid_connect', extern_uid: 'sub-ann' }]);
  });
});
