// Personal access tokens (docs/gitlab-compatibility.md#users-and-tokens and #token-failures): creation by admins,
// listing, self, revocation, rotation, expiry, and the plain token being shown only once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const TOKEN_KEYS = ['id', 'name', 'scopes', 'token', 'expires_at', 'active', 'revoked', 'created_at', 'user_id'];
const REVOKED = {
  error: 'invalid_token',
  error_description: 'Token was revoked. You have to re-authorize from the user.',
};
const EXPIRED = {
  error: 'invalid_token',
  error_description: 'Token is expired. You can either do re-authorization or token refresh.',
};
const dayOffset = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

describe('personal access tokens', () => {
  let t: TestApp;
  let alice: { id: number; username: string; token: string };
  let bob: { id: number; username: string; token: string };
  before(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    bob = await t.user('bob');
  });
  after(() => t.close());

  const create = (userId: number, payload: Record<string, unknown>, token: string | null = ROOT_TOKEN) =>
    t.api('POST', `/users/${userId}/personal_access_tokens`, token, payload);

  it('POST /users/:id/personal_access_tokens answers 201 with the token, shown in plain text', async () => {
    const expires = dayOffset(30);
    const res = await create(alice.id, { name: 'ci', scopes: ['api', 'read_user'], expires_at: expires });
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers['content-type'], 'application/json');
    for (const k of TOKEN_KEYS) assert.ok(k in res.json, `missing ${k}`);
    assert.equal(typeof res.json.id, 'number');
    assert.equal(res.json.name, 'ci');
    assert.deepEqual(res.json.scopes, ['api', 'read_user']);
    assert.equal(res.json.expires_at, expires);
    assert.equal(res.json.active, true);
    assert.equal(res.json.revoked, false);
    assert.equal(res.json.user_id, alice.id);
    assert.match(res.json.created_at, ISO);
    assert.match(res.json.token, /^glpat-[A-Za-z0-9_-]{20,}$/);

    const me = await t.request({ method: 'GET', url: '/api/v4/user', token: res.json.token });
    assert.equal(me.statusCode, 200);
    assert.equal(me.json.id, alice.id);
    assert.equal(me.json.username, 'alice');
  });

  it('accepts form-style scopes[] parameters', async () => {
    const res = await t.request({
      method: 'POST',
      url: `/api/v4/users/${bob.id}/personal_access_tokens`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=form&scopes[]=read_api&scopes[]=read_repository',
    });
    assert.equal(res.statusCode, 201);
    assert.deepEqual(res.json.scopes, ['read_api', 'read_repository']);
  });

  it('validates name and scopes with Grape messages', async () => {
    const bad = await create(alice.id, { name: 'x', scopes: ['api', 'everything'] });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json, { error: 'scopes does not have a valid value' });
    const noName = await create(alice.id, { scopes: ['api'] });
    assert.equal(noName.statusCode, 400);
    assert.deepEqual(noName.json, { error: 'name is missing' });
    const nothing = await create(alice.id, {});
    assert.equal(nothing.statusCode, 400);
    assert.deepEqual(nothing.json, { error: 'name is missing, scopes is missing' });
    const badDate = await create(alice.id, { name: 'x', scopes: ['api'], expires_at: 'tomorrow' });
    assert.equal(badDate.statusCode, 400);
    assert.deepEqual(badDate.json, { error: 'expires_at is invalid' });
    // A name of at most 255 characters (code points), as every list shows each name whole.
    const longest = await create(alice.id, { name: '😀'.repeat(255), scopes: ['api'] });
    assert.equal(longest.statusCode, 201);
    assert.equal(longest.json.name, '😀'.repeat(255));
    const tooLong = await create(alice.id, { name: 'x'.repeat(256), scopes: ['api'] });
    assert.equal(tooLong.statusCode, 400);
    assert.deepEqual(tooLong.json, { message: { name: ['is too long (maximum is 255 characters)'] } });
  });

  it('is for admins only: 401 anonymous, 403 for users (even for themselves), 404 unknown user', async () => {
    const anon = await create(alice.id, { name: 'x', scopes: ['api'] }, null);
    assert.equal(anon.statusCode, 401);
    assert.deepEqual(anon.json, { message: '401 Unauthorized' });
    const self = await create(alice.id, { name: 'x', scopes: ['api'] }, alice.token);
    assert.equal(self.statusCode, 403);
    assert.deepEqual(self.json, { message: '403 Forbidden' });
    const missing = await create(999999, { name: 'x', scopes: ['api'] });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json, { message: '404 User Not Found' });
  });

  it('a past expires_at gives an already expired token that is refused', async () => {
    const res = await create(alice.id, { name: 'old', scopes: ['api'], expires_at: dayOffset(-2) });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json.active, false);
    assert.equal(res.json.revoked, false);
    const refused = await t.request({ method: 'GET', url: '/api/v4/user', token: res.json.token });
    assert.equal(refused.statusCode, 401);
    assert.deepEqual(refused.json, EXPIRED);
    assert.match(
      String(refused.headers['www-authenticate']),
      /^Bearer realm="[^"]*", error="invalid_token", error_description="Token is expired\./,
    );
  });

  it("GET /personal_access_tokens lists the caller's tokens only, never their values", async () => {
    const res = await t.request({ method: 'GET', url: '/api/v4/personal_access_tokens', token: bob.token });
    assert.equal(res.statusCode, 200);
    assert.ok(res.json.length >= 1);
    for (const tok of res.json) {
      assert.equal(tok.user_id, bob.id);
      assert.ok(!('token' in tok));
    }
    const ownFilter = await t.request({
      method: 'GET',
      url: `/api/v4/personal_access_tokens?user_id=${bob.id}`,
      token: bob.token,
    });
    assert.equal(ownFilter.statusCode, 200);
    assert.deepEqual(
      ownFilter.json.map((x: { id: number }) => x.id),
      res.json.map((x: { id: number }) => x.id),
    );
    const anon = await t.request({ method: 'GET', url: '/api/v4/personal_access_tokens', token: null });
    assert.equal(anon.statusCode, 401);
    assert.deepEqual(anon.json, { message: '401 Unauthorized' });
  });

  it('GET /personal_access_tokens filters by state, revoked, name, and creation, use and expiry dates', async () => {
    const carol = await t.user('carol');
    const make = async (name: string, expiresAt?: string) =>
      (await create(carol.id, { name, scopes: ['api'], ...(expiresAt && { expires_at: expiresAt }) })).json;
    const live = await make('deploy-live');
    const old = await make('deploy-old', dayOffset(-1));
    const gone = await make('other-gone', dayOffset(10));
    await t.ok('DELETE', `/personal_access_tokens/${gone.id}`, ROOT_TOKEN, undefined, 204);
    const ids = async (query: string) =>
      (await t.ok('GET', `/personal_access_tokens?user_id=${carol.id}&${query}`, ROOT_TOKEN, undefined, 200))
        .map((x: { id: number }) => x.id)
        .filter((id: number) => [live.id, old.id, gone.id].includes(id));
    assert.deepEqual(await ids('state=active'), [live.id]);
    assert.deepEqual(await ids('state=inactive'), [old.id, gone.id]);
    assert.deepEqual(await ids('revoked=true'), [gone.id]);
    assert.deepEqual(await ids('revoked=false'), [live.id, old.id]);
    assert.deepEqual(await ids('search=DEPLOY'), [live.id, old.id]);
    assert.deepEqual(await ids(`expires_before=${dayOffset(5)}`), [old.id]);
    assert.deepEqual(await ids(`expires_after=${dayOffset(5)}`), [gone.id]);
    assert.deepEqual(await ids('created_after=2999-01-01T00:00:00Z'), []);
    assert.deepEqual(await ids('created_before=2999-01-01T00:00:00Z'), [live.id, old.id, gone.id]);
    // Used once now: after an hour ago, and never before it.
    await t.request({ method: 'GET', url: '/api/v4/user', token: live.token });
    const hourAgo = new Date(Date.now() - 3600_000).toISOString();
    assert.deepEqual(await ids(`last_used_after=${hourAgo}`), [live.id]);
    assert.deepEqual(await ids(`last_used_before=${hourAgo}`), []);
    await t.fails('GET', '/personal_access_tokens?state=bogus', ROOT_TOKEN, undefined, 400, {
      error: 'state does not have a valid value',
    });
  });

  it("a non-admin asking for another user's tokens is 401 (GitLab restrict_non_admins!)", async () => {
    const res = await t.request({
      method: 'GET',
      url: `/api/v4/personal_access_tokens?user_id=${alice.id}`,
      token: bob.token,
    });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json, { message: '401 Unauthorized' });
  });

  it("admins list every token, or one user's with ?user_id=", async () => {
    const all = await t.request({ method: 'GET', url: '/api/v4/personal_access_tokens?per_page=100' });
    assert.equal(all.statusCode, 200);
    const owners = new Set(all.json.map((x: { user_id: number }) => x.user_id));
    assert.ok(owners.has(alice.id) && owners.has(bob.id) && owners.size >= 3);
    for (const tok of all.json) assert.ok(!('token' in tok));
    const onlyAlice = await t.request({ method: 'GET', url: `/api/v4/personal_access_tokens?user_id=${alice.id}` });
    assert.equal(onlyAlice.statusCode, 200);
    assert.ok(onlyAlice.json.length >= 1);
    for (const tok of onlyAlice.json) assert.equal(tok.user_id, alice.id);
  });

  it('GET /personal_access_tokens/self describes the token used', async () => {
    const made = await create(alice.id, { name: 'selfie', scopes: ['read_api'] });
    const res = await t.request({ method: 'GET', url: '/api/v4/personal_access_tokens/self', token: made.json.token });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json.id, made.json.id);
    assert.equal(res.json.name, 'selfie');
    assert.deepEqual(res.json.scopes, ['read_api']);
    assert.equal(res.json.user_id, alice.id);
    assert.equal(res.json.active, true);
    assert.equal(res.json.revoked, false);
    assert.equal(res.json.created_at, made.json.created_at);
    assert.ok(!('token' in res.json));
  });

  it('DELETE /personal_access_tokens/:id revokes (204); the token is then refused', async () => {
    const made = await create(alice.id, { name: 'short-lived', scopes: ['api'] });
    const del = await t.request({
      method: 'DELETE',
      url: `/api/v4/personal_access_tokens/${made.json.id}`,
      token: alice.token,
    });
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    const refused = await t.request({ method: 'GET', url: '/api/v4/user', token: made.json.token });
    assert.equal(refused.statusCode, 401);
    assert.deepEqual(refused.json, REVOKED);
    assert.match(
      String(refused.headers['www-authenticate']),
      /error="invalid_token", error_description="Token was revoked\./,
    );
    const listed = await t.request({ method: 'GET', url: `/api/v4/personal_access_tokens?user_id=${alice.id}` });
    const entry = listed.json.find((x: { id: number }) => x.id === made.json.id);
    assert.equal(entry.revoked, true);
    assert.equal(entry.active, false);
  });

  it("admins revoke anyone's token; users get 400 for tokens that are not theirs (GitLab's revoke service), 404 for missing ones", async () => {
    const made = await create(alice.id, { name: 'target', scopes: ['api'] });
    const missing = await t.request({
      method: 'DELETE',
      url: '/api/v4/personal_access_tokens/999999',
      token: bob.token,
    });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json, { message: '404 Not found' });
    const other = await t.request({
      method: 'DELETE',
      url: `/api/v4/personal_access_tokens/${made.json.id}`,
      token: bob.token,
    });
    assert.equal(other.statusCode, 400);
    assert.deepEqual(other.json, { message: '400 Bad request' });
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/user', token: made.json.token })).statusCode, 200);
    const admin = await t.request({ method: 'DELETE', url: `/api/v4/personal_access_tokens/${made.json.id}` });
    assert.equal(admin.statusCode, 204);
    assert.deepEqual((await t.request({ method: 'GET', url: '/api/v4/user', token: made.json.token })).json, REVOKED);
  });

  it('DELETE /personal_access_tokens/self revokes the token used', async () => {
    const made = await create(bob.id, { name: 'self-revoke', scopes: ['api'] });
    const del = await t.request({
      method: 'DELETE',
      url: '/api/v4/personal_access_tokens/self',
      token: made.json.token,
    });
    assert.equal(del.statusCode, 204);
    const refused = await t.request({ method: 'GET', url: '/api/v4/user', token: made.json.token });
    assert.equal(refused.statusCode, 401);
    assert.deepEqual(refused.json, REVOKED);
  });

  // GitLab's PersonalAccessTokens::RotateService: the token is revoked and a new one made with its name and scopes,
  // expiring on the given date or, by default, a week from today; the answer is 200 with the new plain token.
  const rotate = (url: string, token: string | null, payload?: Record<string, unknown>) =>
    t.request({ method: 'POST', url: `/api/v4/personal_access_tokens/${url}/rotate`, token, payload });

  it('POST /personal_access_tokens/:id/rotate revokes the token and answers a new one with its name and scopes', async () => {
    const made = await create(alice.id, { name: 'rotating', scopes: ['api', 'read_user'], expires_at: dayOffset(300) });
    const res = await rotate(String(made.json.id), alice.token);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    const { id, token, created_at, ...rest } = res.json;
    assert.ok(id > made.json.id);
    assert.match(created_at, ISO);
    assert.equal(typeof token, 'string');
    assert.notEqual(token, made.json.token);
    assert.deepEqual(rest, {
      name: 'rotating',
      revoked: false,
      description: null,
      scopes: ['api', 'read_user'],
      user_id: alice.id,
      last_used_at: null,
      active: true,
      expires_at: dayOffset(7),
    });
    const old = await t.request({ method: 'GET', url: '/api/v4/user', token: made.json.token });
    assert.equal(old.statusCode, 401);
    assert.deepEqual(old.json, REVOKED);
    const user = await t.request({ method: 'GET', url: '/api/v4/user', token });
    assert.equal(user.statusCode, 200);
    assert.equal(user.json.id, alice.id);
    const listed = await t.api('GET', `/personal_access_tokens/${made.json.id}`, ROOT_TOKEN);
    assert.equal(listed.json.revoked, true);
  });

  it('rotate takes expires_at; a revoked token is 400 Token already revoked and makes no new one', async () => {
    const made = await create(bob.id, { name: 'dated', scopes: ['read_api'] });
    const res = await rotate(String(made.json.id), bob.token, { expires_at: dayOffset(40) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json.expires_at, dayOffset(40));
    assert.deepEqual(res.json.scopes, ['read_api']);
    const before = await t.api('GET', `/personal_access_tokens?user_id=${bob.id}&per_page=100`, ROOT_TOKEN);
    const again = await rotate(String(made.json.id), bob.token);
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json, { message: '400 Bad request - Token already revoked' });
    const after = await t.api('GET', `/personal_access_tokens?user_id=${bob.id}&per_page=100`, ROOT_TOKEN);
    assert.equal(after.json.length, before.json.length);
    // Two rotations at once: one successor.
    const twice = await create(bob.id, { name: 'twice', scopes: ['api'] });
    const both = await Promise.all([
      rotate(String(twice.json.id), bob.token),
      rotate(String(twice.json.id), bob.token),
    ]);
    assert.deepEqual(both.map((r) => r.statusCode).sort(), [200, 400]);
    const bad = await rotate(String(res.json.id), bob.token, { expires_at: 'soon' });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json, { error: 'expires_at is invalid' });
  });

  it("rotate: administrators rotate anyone's token (404 for a missing one); others get 401 for tokens not theirs or missing", async () => {
    const made = await create(alice.id, { name: 'theirs', scopes: ['api'] });
    const byBob = await rotate(String(made.json.id), bob.token);
    assert.equal(byBob.statusCode, 401);
    assert.deepEqual(byBob.json, { message: '401 Unauthorized' });
    const missingByBob = await rotate('999999', bob.token);
    assert.equal(missingByBob.statusCode, 401);
    assert.equal((await rotate(String(made.json.id), null)).statusCode, 401);
    const missing = await rotate('999999', ROOT_TOKEN);
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json, { message: '404 Not found' });
    const byRoot = await rotate(String(made.json.id), ROOT_TOKEN);
    assert.equal(byRoot.statusCode, 200);
    assert.equal(byRoot.json.user_id, alice.id);
    // A token to read with cannot rotate: POST needs the api scope.
    const reader = await create(bob.id, { name: 'reader', scopes: ['read_api'] });
    const refused = await rotate(String(reader.json.id), reader.json.token);
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json.error, 'insufficient_scope');
  });

  it('POST /personal_access_tokens/self/rotate rotates the token used; the old one is then refused', async () => {
    const made = await create(bob.id, { name: 'self-rotate', scopes: ['api'] });
    const res = await rotate('self', made.json.token, { expires_at: dayOffset(3) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json.name, 'self-rotate');
    assert.equal(res.json.expires_at, dayOffset(3));
    assert.equal(res.json.user_id, bob.id);
    const old = await t.request({ method: 'GET', url: '/api/v4/user', token: made.json.token });
    assert.deepEqual(old.json, REVOKED);
    const self = await t.request({ method: 'GET', url: '/api/v4/personal_access_tokens/self', token: res.json.token });
    assert.equal(self.json.id, res.json.id);
    assert.equal((await rotate('self', null)).statusCode, 401);
  });

  it('the plain token appears in no answer but the creation answer', async () => {
    const made = await create(alice.id, { name: 'secret', scopes: ['api', 'read_user'] });
    const plain: string = made.json.token;
    const id: number = made.json.id;
    const answers = [
      await t.request({ method: 'GET', url: '/api/v4/user', token: plain }),
      await t.request({ method: 'GET', url: `/api/v4/users/${alice.id}` }),
      await t.request({ method: 'GET', url: '/api/v4/users?username=alice' }),
      await t.request({ method: 'GET', url: '/api/v4/personal_access_tokens', token: plain }),
      await t.request({ method: 'GET', url: '/api/v4/personal_access_tokens?per_page=100' }),
      await t.request({ method: 'GET', url: `/api/v4/personal_access_tokens?user_id=${alice.id}` }),
      await t.request({ method: 'GET', url: '/api/v4/personal_access_tokens/self', token: plain }),
      await t.request({ method: 'GET', url: `/api/v4/personal_access_tokens/${id}` }),
      await t.request({ method: 'GET', url: `/api/v4/personal_access_tokens/${id}`, token: plain }),
      await t.request({ method: 'DELETE', url: `/api/v4/personal_access_tokens/${id}`, token: plain }),
      await t.request({ method: 'GET', url: '/api/v4/user', token: plain }),
      await t.request({ method: 'GET', url: `/api/v4/personal_access_tokens/${id}` }),
    ];
    assert.deepEqual(
      answers.map((a) => a.statusCode),
      [200, 200, 200, 200, 200, 200, 200, 200, 200, 204, 401, 200],
    );
    for (const a of answers) {
      assert.ok(!a.body.includes(plain), `token leaked in ${a.body}`);
      assert.ok(!JSON.stringify(a.headers).includes(plain), 'token leaked in headers');
    }
    assert.equal(answers[7].json.id, id);
    assert.equal(answers[7].json.name, 'secret');
    assert.ok(!('token' in answers[7].json));
    assert.ok(!('token_digest' in answers[7].json));
  });
});
