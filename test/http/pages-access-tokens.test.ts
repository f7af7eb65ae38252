// Personal access tokens in the browser (/-/user_settings/personal_access_tokens): created with a name,
// scopes and expiry and shown once; they work with the API and git as any token does; listed without their
// values; revoked with a form; only one's own; every form refused without this session's token.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertHiddenPage, createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';
import { createToken } from '../../src/domain/tokens.ts';

const PASSWORD = 'correct horse battery';
const PATH = '/-/user_settings/personal_access_tokens';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const formToken = (body: string) => /name="authenticity_token" value="([^"]+)"/.exec(body)![1];

describe('personal access tokens page', () => {
  let t: TestApp;
  let cookie: string;
  let otherCookie: string;
  const page = (c?: string) => t.request({ method: 'GET', url: PATH, token: null, headers: c ? { cookie: c } : {} });
  const post = (url: string, c: string, fields: [string, string][]) =>
    t.request({
      method: 'POST',
      url,
      token: null,
      headers: { ...FORM, cookie: c },
      payload: new URLSearchParams(fields).toString(),
    });

  before(async () => {
    t = await createTestApp();
    for (const username of ['carol', 'dave'])
      await t.must('POST', '/users', ROOT_TOKEN, {
        username,
        email: `${username}@example.com`,
        name: username,
        password: PASSWORD,
      });
    cookie = await signInCookie(t, 'carol', PASSWORD);
    otherCookie = await signInCookie(t, 'dave', PASSWORD);
  });
  after(() => t.close());

  it('sends a visitor who is not signed in to sign in', async () => {
    assertHiddenPage(await page(), PATH, false);
  });

  it('creates a token shown once, which then works with the API, and lists it without its value', async () => {
    const form = await page(cookie);
    assert.equal(form.statusCode, 200);
    // sudo is for administrators only.
    const offered = [...form.body.matchAll(/name="scopes\[\]" value="(\w+)"/g)].map((m) => m[1]);
    assert.deepEqual(offered, ['api', 'read_api', 'read_user', 'read_repository', 'write_repository']);
    const res = await post(PATH, cookie, [
      ['authenticity_token', formToken(form.body)],
      ['name', 'laptop'],
      ['expires_at', '2099-01-31'],
      ['scopes[]', 'read_api'],
      ['scopes[]', 'read_user'],
    ]);
    assert.equal(res.statusCode, 201);
    const plain = /<input id="created-token" readonly value="(glpat-[\w-]+)">/.exec(res.body)?.[1];
    assert.ok(plain, 'the token is shown');
    const me = await t.must('GET', '/user', plain!);
    assert.equal(me.username, 'carol');
    const self = await t.must('GET', '/personal_access_tokens/self', plain!);
    assert.deepEqual([self.name, self.scopes, self.expires_at], ['laptop', ['read_api', 'read_user'], '2099-01-31']);
    // Its scopes bind it: no writes with read_api.
    const write = await t.api('POST', '/snippets', plain!, { title: 'x', files: [{ file_path: 'a', content: 'b' }] });
    assert.equal(write.statusCode, 403);
    assert.equal(write.json.error, 'insufficient_scope');
    const again = await page(cookie);
    assert.ok(!again.body.includes(plain!), 'never shown again');
    assert.match(again.body, /<tr><th scope="row">laptop<\/th><td data-label="Scopes">read_api, read_user<\/td>/);
  });

  it('shows what is wrong next to its field and keeps what was typed', async () => {
    const form = await page(cookie);
    const res = await post(PATH, cookie, [
      ['authenticity_token', formToken(form.body)],
      ['name', 'no scopes'],
    ]);
    assert.equal(res.statusCode, 422);
    assert.match(res.body, /<p class="field-error" id="token-scopes-error">scopes is missing<\/p>/);
    assert.match(res.body, /<input id="token-name" name="name" value="no scopes">/);
    const sudo = await post(PATH, cookie, [
      ['authenticity_token', formToken(form.body)],
      ['name', 'sudo'],
      ['scopes[]', 'sudo'],
    ]);
    assert.equal(sudo.statusCode, 422);
    assert.match(sudo.body, /scopes does not have a valid value/);
    // A date that has come already: a token born expired is of no use to anyone here.
    const today = new Date().toISOString().slice(0, 10);
    const past = await post(PATH, cookie, [
      ['authenticity_token', formToken(form.body)],
      ['name', 'stale'],
      ['scopes[]', 'api'],
      ['expires_at', today],
    ]);
    assert.equal(past.statusCode, 422);
    assert.match(
      past.body,
      /<p class="field-error" id="token-expires_at-error">Expiration date must be in the future<\/p>/,
    );
    assert.match(
      past.body,
      new RegExp(`<input id="token-expires" name="expires_at" type="date" min="\\d{4}-\\d\\d-\\d\\d" value="${today}"`),
    );
    // The API's limit, held by the server (the field has no maxlength: it counts UTF-16 code units, the API characters).
    const long = await post(PATH, cookie, [
      ['authenticity_token', formToken(form.body)],
      ['name', 'n'.repeat(256)],
      ['scopes[]', 'api'],
    ]);
    assert.equal(long.statusCode, 422);
    assert.match(
      long.body,
      /<p class="field-error" id="token-name-error">Name is too long \(maximum is 255 characters\)<\/p>/,
    );
    const names = (await t.must('GET', '/personal_access_tokens?per_page=100', ROOT_TOKEN)).map((x: any) => x.name);
    assert.ok(!names.includes('no scopes') && !names.includes('sudo') && !names.includes('stale'));
    assert.ok(!names.some((name: string) => name.length > 255));
  });

  it("revokes one of one's own tokens with the form token, and no one else's", async () => {
    const form = await page(cookie);
    const created = await post(PATH, cookie, [
      ['authenticity_token', formToken(form.body)],
      ['name', 'to revoke'],
      ['scopes[]', 'api'],
    ]);
    const plain = /value="(glpat-[\w-]+)"/.exec(created.body)![1];
    const id = (await t.must('GET', '/personal_access_tokens/self', plain)).id;
    const revoke = `${PATH}/${id}/revoke`;
    // Asked again before it is done: the form is inside a closed <details>.
    assert.match(
      created.body,
      new RegExp(
        `<details class="revoke"><summary aria-label="Revoke to revoke">Revoke</summary><form method="post" action="${revoke}">`,
      ),
    );
    // Without the form token, or by someone else: nothing happens.
    assert.equal((await post(revoke, cookie, [['authenticity_token', 'x']])).statusCode, 422);
    const other = await page(otherCookie);
    assert.equal((await post(revoke, otherCookie, [['authenticity_token', formToken(other.body)]])).statusCode, 404);
    await t.must('GET', '/user', plain);
    const res = await post(revoke, cookie, [['authenticity_token', formToken(form.body)]]);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, PATH);
    await t.fails('GET', '/user', plain, undefined, 401, {
      error: 'invalid_token',
      error_description: 'Token was revoked. You have to re-authorize from the user.',
    });
    assert.match(
      (await page(cookie)).body,
      /<th scope="row">to revoke<\/th>[\s\S]*?<td data-label="State">Revoked<\/td><\/tr>/,
    );
  });

  it('lists a hundred tokens a page, those in use first, each part newest first', async () => {
    // A factory, not the page: 1,030 tokens through the form would be most of the test.
    await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'erin',
      email: 'erin@example.com',
      name: 'erin',
      password: PASSWORD,
    });
    const erin = await signInCookie(t, 'erin', PASSWORD);
    const user = (await t.app.store.users.findByUsername('erin'))!;
    const ids: number[] = [];
    for (let i = 1; i <= 1030; i++) {
      const expiresAt = i % 100 === 50 ? '2020-01-01' : null;
      ids.push((await createToken(t.app.store, user, { name: `t-${i}`, scopes: ['api'], expiresAt })).token.id);
    }
    for (const id of ids.slice(-10)) await t.app.store.tokens.revoke(id);
    // The oracle: t-1 .. t-1030, of which t-50, t-150, .. t-1050 expired, t-1021 .. t-1030 revoked.
    const inUse = (i: number) => i % 100 !== 50 && i <= 1020;
    const all = Array.from({ length: 1030 }, (_, i) => 1030 - i);
    const expected = [...all.filter(inUse), ...all.filter((i) => !inUse(i))].map((i) => `t-${i}`);
    const shown = async (n: number) => {
      const res = await t.request({ method: 'GET', url: `${PATH}?page=${n}`, token: null, headers: { cookie: erin } });
      assert.equal(res.statusCode, 200);
      const names = [...res.body.matchAll(/<tr><th scope="row">(t-\d+)<\/th>/g)].map((m) => m[1]);
      const links = [...res.body.matchAll(/<a rel="(prev|next)" href="[^"]*\?page=(\d+)">/g)].map(
        (m) => `${m[1]} ${m[2]}`,
      );
      return { names, links };
    };
    assert.deepEqual(await shown(1), { names: expected.slice(0, 100), links: ['next 2'] });
    assert.deepEqual(await shown(5), { names: expected.slice(400, 500), links: ['prev 4', 'next 6'] });
    assert.deepEqual(await shown(11), { names: expected.slice(1000), links: ['prev 10'] });
    const past = await t.request({ method: 'GET', url: `${PATH}?page=12`, token: null, headers: { cookie: erin } });
    assert.match(past.body, /<p class="empty">No more tokens\.<\/p>/);
  });
});
