// Users (docs/gitlab-compatibility.md#users-and-tokens): GET /user, GET /users/:id, GET /users?username=, POST/PUT
// /users, and the block/unblock/deactivate/activate transitions, with GitLab's bodies (#error-bodies,
// #validation-messages, #token-failures).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const FULL_KEYS = [
  'id',
  'username',
  'name',
  'email',
  'public_email',
  'state',
  'locked',
  'avatar_url',
  'web_url',
  'created_at',
  'is_admin',
  'external',
  'bot',
];
const PUBLIC_KEYS = [
  'id',
  'username',
  'name',
  'state',
  'locked',
  'avatar_url',
  'web_url',
  'created_at',
  'public_email',
];
const PRIVATE_KEYS = ['email', 'is_admin', 'external'];
// Never part of any GitLab user entity: internal columns must not leak.
const INTERNAL_KEYS = ['password', 'password_digest', 'admin', 'namespace_id', 'token', 'token_digest'];

function assertKeys(body: Record<string, unknown>, required: string[], forbidden: string[]) {
  for (const k of required) assert.ok(k in body, `missing key ${k} in ${JSON.stringify(body)}`);
  for (const k of forbidden) assert.ok(!(k in body), `unexpected key ${k} in ${JSON.stringify(body)}`);
}

describe('users', () => {
  let t: TestApp;
  let alice: { id: number; username: string; token: string };
  let bob: { id: number; username: string; token: string };
  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    alice = await t.user('alice');
    bob = await t.user('bob');
  });
  after(() => t.close());

  it('GET /user answers the caller with the full entity', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v4/user' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assertKeys(res.json, FULL_KEYS, INTERNAL_KEYS);
    const { created_at, id, ...rest } = res.json;
    assert.match(created_at, ISO);
    assert.equal(typeof id, 'number');
    const picked = Object.fromEntries(FULL_KEYS.filter((k) => k in rest).map((k) => [k, rest[k]]));
    assert.deepEqual(picked, {
      username: 'root',
      name: 'Administrator',
      email: 'admin@example.com',
      public_email: '',
      state: 'active',
      locked: false,
      avatar_url: null,
      web_url: `${BASE}/root`,
      is_admin: true,
      external: false,
      bot: false,
    });
    const mine = await t.request({ method: 'GET', url: '/api/v4/user', token: alice.token });
    assert.equal(mine.statusCode, 200);
    assert.equal(mine.json.id, alice.id);
    assert.equal(mine.json.username, 'alice');
    assert.equal(mine.json.name, 'ALICE');
    assert.equal(mine.json.email, 'alice@example.com');
    assert.equal(mine.json.is_admin, false);
    assert.equal(mine.json.web_url, `${BASE}/alice`);
  });

  it('GET /user is 401 anonymous', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v4/user', token: null });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json, { message: '401 Unauthorized' });
  });

  it('GET /users/:id gives public fields to others, full ones to admins and oneself', async () => {
    const other = await t.request({ method: 'GET', url: `/api/v4/users/${alice.id}`, token: bob.token });
    assert.equal(other.statusCode, 200);
    assertKeys(other.json, PUBLIC_KEYS, [...PRIVATE_KEYS, ...INTERNAL_KEYS]);
    assert.equal(other.json.id, alice.id);
    assert.equal(other.json.username, 'alice');
    assert.equal(other.json.name, 'ALICE');
    assert.equal(other.json.state, 'active');
    assert.equal(other.json.locked, false);
    assert.equal(other.json.avatar_url, null);
    assert.equal(other.json.web_url, `${BASE}/alice`);
    assert.equal(other.json.public_email, '');
    assert.match(other.json.created_at, ISO);

    for (const token of [undefined, alice.token]) {
      const full = await t.request({ method: 'GET', url: `/api/v4/users/${alice.id}`, token });
      assert.equal(full.statusCode, 200);
      assertKeys(full.json, FULL_KEYS, INTERNAL_KEYS);
      assert.equal(full.json.email, 'alice@example.com');
      assert.equal(full.json.is_admin, false);
      assert.equal(full.json.external, false);
    }
  });

  it('GET /users/:id answers 404 User Not Found and 400 for a non-integer id', async () => {
    const missing = await t.request({ method: 'GET', url: '/api/v4/users/999999' });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json, { message: '404 User Not Found' });
    const bad = await t.request({ method: 'GET', url: '/api/v4/users/abc' });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json, { error: 'id is invalid' });
  });

  it('GET /users?username= finds the user case-insensitively and answers an array', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v4/users?username=ALIce', token: bob.token });
    assert.equal(res.statusCode, 200);
    assert.ok(Array.isArray(res.json));
    assert.deepEqual(
      res.json.map((u: { id: number }) => u.id),
      [alice.id],
    );
    assert.equal(res.json[0].username, 'alice');
    const none = await t.request({ method: 'GET', url: '/api/v4/users?username=nobody', token: bob.token });
    assert.equal(none.statusCode, 200);
    assert.deepEqual(none.json, []);
    // A visitor may look one user up by username (the public fields), and nothing else (GitLab's users index).
    const anon = await t.request({ method: 'GET', url: '/api/v4/users?username=alice', token: null });
    assert.equal(anon.statusCode, 200);
    assert.deepEqual(
      anon.json.map((u: { id: number }) => u.id),
      [alice.id],
    );
    assertKeys(anon.json[0], PUBLIC_KEYS, [...PRIVATE_KEYS, ...INTERNAL_KEYS]);
    for (const query of ['', '?search=ali', '?username=']) {
      const listed = await t.request({ method: 'GET', url: `/api/v4/users${query}`, token: null });
      assert.equal(listed.statusCode, 403, query);
      assert.deepEqual(listed.json, { message: '403 Forbidden - Not authorized to access /api/v4/users' }, query);
    }
    // One user by id is for those signed in (GitLab: forbidden! unless current_user).
    const byId = await t.request({ method: 'GET', url: `/api/v4/users/${alice.id}`, token: null });
    assert.equal(byId.statusCode, 403);
    assert.deepEqual(byId.json, { message: '403 Forbidden - Not authorized!' });
  });

  it('GET /users?search= finds users by name or username, or by whole email: the public one, any for admins', async () => {
    const carol = await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'carol-x',
      email: 'carol.private@example.com',
      name: 'Carol Searchable',
      password: 'correct horse battery',
    });
    await t.must('PUT', `/users/${carol.id}`, ROOT_TOKEN, { public_email: 'carol.private@example.com' });
    const dan = await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'dan-x',
      email: 'dan.hidden@example.com',
      name: 'Dan',
      password: 'correct horse battery',
    });
    const found = async (query: string, token: string) =>
      (await t.ok('GET', `/users?${query}`, token, undefined, 200)).map((u: { id: number }) => u.id);
    assert.deepEqual(await found('search=SEARCHABLE', bob.token), [carol.id]);
    assert.deepEqual(await found('search=-x', bob.token), [dan.id, carol.id]);
    assert.deepEqual(await found('search=carol.private@example.com', bob.token), [carol.id]);
    assert.deepEqual(await found('search=dan.hidden@example.com', bob.token), [], 'a private email: admins only');
    assert.deepEqual(await found('search=dan.hidden@example.com', ROOT_TOKEN), [dan.id]);
    assert.deepEqual(await found('search=hidden', ROOT_TOKEN), [], 'an email matches whole');
    await t.must('POST', `/users/${dan.id}/block`, ROOT_TOKEN);
    assert.deepEqual(await found('search=-x&blocked=true', ROOT_TOKEN), [dan.id]);
    assert.deepEqual(await found('search=-x&active=true', ROOT_TOKEN), [carol.id]);
    assert.deepEqual(await found('search=-x&blocked=true', bob.token), [], 'blocked users: admins only');
    await t.must('POST', `/users/${dan.id}/unblock`, ROOT_TOKEN);
  });

  it('POST /users is for admins: 401 anonymous, 403 otherwise', async () => {
    const payload = { username: 'carol', email: 'carol@example.com', name: 'Carol' };
    const anon = await t.request({ method: 'POST', url: '/api/v4/users', payload, token: null });
    assert.equal(anon.statusCode, 401);
    assert.deepEqual(anon.json, { message: '401 Unauthorized' });
    const user = await t.request({ method: 'POST', url: '/api/v4/users', payload, token: alice.token });
    assert.equal(user.statusCode, 403);
    assert.deepEqual(user.json, { message: '403 Forbidden' });
    const check = await t.request({ method: 'GET', url: '/api/v4/users?username=carol' });
    assert.deepEqual(check.json, []);
  });

  it('POST /users validates its parameters with Grape messages', async () => {
    const none = await t.request({ method: 'POST', url: '/api/v4/users', payload: {} });
    assert.equal(none.statusCode, 400);
    assert.deepEqual(none.json, { error: 'email is missing, name is missing, username is missing' });
    const one = await t.request({
      method: 'POST',
      url: '/api/v4/users',
      payload: { email: 'x@example.com', name: 'X' },
    });
    assert.equal(one.statusCode, 400);
    assert.deepEqual(one.json, { error: 'username is missing' });
    const blank = await t.request({
      method: 'POST',
      url: '/api/v4/users',
      payload: { email: 'x@example.com', name: '   ', username: 'x' },
    });
    assert.equal(blank.statusCode, 400);
    assert.deepEqual(blank.json, { error: 'name is empty' });
  });

  it('POST /users creates the user (201) and refuses duplicates with 409', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v4/users',
      payload: {
        username: 'dave',
        email: 'dave@example.com',
        name: 'Dave D',
        public_email: 'dave.pub@example.com',
        external: true,
        password: 'secret-password',
        skip_confirmation: true,
      },
    });
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers['content-type'], 'application/json');
    assertKeys(res.json, FULL_KEYS, INTERNAL_KEYS);
    assert.match(res.json.created_at, ISO);
    const { id, created_at, ...rest } = res.json;
    assert.equal(typeof id, 'number');
    const picked = Object.fromEntries(FULL_KEYS.filter((k) => k in rest).map((k) => [k, rest[k]]));
    assert.deepEqual(picked, {
      username: 'dave',
      name: 'Dave D',
      email: 'dave@example.com',
      public_email: 'dave.pub@example.com',
      state: 'active',
      locked: false,
      avatar_url: null,
      web_url: `${BASE}/dave`,
      is_admin: false,
      external: true,
      bot: false,
    });
    const shown = await t.request({ method: 'GET', url: `/api/v4/users/${id}` });
    assert.equal(shown.json.username, 'dave');

    const dupName = await t.request({
      method: 'POST',
      url: '/api/v4/users',
      payload: { username: 'dave', email: 'other@example.com', name: 'Other' },
    });
    assert.equal(dupName.statusCode, 409);
    assert.deepEqual(dupName.json, { message: 'Username has already been taken' });
    const dupEmail = await t.request({
      method: 'POST',
      url: '/api/v4/users',
      payload: { username: 'dave2', email: 'dave@example.com', name: 'Other' },
    });
    assert.equal(dupEmail.statusCode, 409);
    assert.deepEqual(dupEmail.json, { message: 'Email has already been taken' });
  });

  it("a name is at most 255 characters (GitLab's User validation), on create and update", async () => {
    const tooLong = 'ñ'.repeat(256);
    const refused = { message: { name: ['is too long (maximum is 255 characters)'] } };
    const create = (name: string, username: string) =>
      t.request({
        method: 'POST',
        url: '/api/v4/users',
        payload: { username, email: `${username}@example.com`, name },
      });
    const long = await create(tooLong, 'longname');
    assert.equal(long.statusCode, 400);
    assert.deepEqual(long.json, refused);
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/users?username=longname' })).json.length, 0);
    // Characters, not bytes or UTF-16 units: 255 of U+1F600 is 510 units and is taken.
    const fits = await create('😀'.repeat(255), 'fullname');
    assert.equal(fits.statusCode, 201, fits.body);
    assert.equal(fits.json.name, '😀'.repeat(255));
    const update = await t.request({ method: 'PUT', url: `/api/v4/users/${fits.json.id}`, payload: { name: tooLong } });
    assert.equal(update.statusCode, 400);
    assert.deepEqual(update.json, refused);
    assert.equal(
      (await t.request({ method: 'GET', url: `/api/v4/users/${fits.json.id}` })).json.name,
      '😀'.repeat(255),
    );
  });

  it('PUT /users/:id lets admins change name, email, public_email, admin and external', async () => {
    const u = await t.user('erin');
    const res = await t.request({
      method: 'PUT',
      url: `/api/v4/users/${u.id}`,
      payload: {
        name: 'Erin E',
        email: 'erin.new@example.com',
        public_email: 'erin.pub@example.com',
        admin: true,
        external: true,
      },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json.id, u.id);
    assert.equal(res.json.name, 'Erin E');
    assert.equal(res.json.email, 'erin.new@example.com');
    assert.equal(res.json.public_email, 'erin.pub@example.com');
    assert.equal(res.json.is_admin, true);
    assert.equal(res.json.external, true);
    const self = await t.request({ method: 'GET', url: '/api/v4/user', token: u.token });
    assert.equal(self.json.name, 'Erin E');
    assert.equal(self.json.email, 'erin.new@example.com');
    assert.equal(self.json.is_admin, true);
    // Now an admin, erin may read the settings.
    const settings = await t.request({ method: 'GET', url: '/api/v4/application/settings', token: u.token });
    assert.equal(settings.statusCode, 200);
    // Others see the new public email.
    const pub = await t.request({ method: 'GET', url: `/api/v4/users/${u.id}`, token: bob.token });
    assert.equal(pub.json.public_email, 'erin.pub@example.com');
  });

  it('PUT /users/:id: 403 for non-admins, 404 unknown, 409 duplicate email', async () => {
    const forbidden = await t.request({
      method: 'PUT',
      url: `/api/v4/users/${alice.id}`,
      payload: { name: 'Hacked' },
      token: alice.token,
    });
    assert.equal(forbidden.statusCode, 403);
    assert.deepEqual(forbidden.json, { message: '403 Forbidden' });
    const missing = await t.request({ method: 'PUT', url: '/api/v4/users/999999', payload: { name: 'X' } });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json, { message: '404 User Not Found' });
    const dup = await t.request({
      method: 'PUT',
      url: `/api/v4/users/${alice.id}`,
      payload: { email: 'bob@example.com' },
    });
    assert.equal(dup.statusCode, 409);
    assert.deepEqual(dup.json, { message: 'Email has already been taken' });
    const still = await t.request({ method: 'GET', url: `/api/v4/users/${alice.id}` });
    assert.equal(still.json.name, 'ALICE');
    assert.equal(still.json.email, 'alice@example.com');
  });

  it('block and unblock change the state; a blocked user is refused', async () => {
    const u = await t.user('frank');
    const block = await t.request({ method: 'POST', url: `/api/v4/users/${u.id}/block` });
    assert.equal(block.statusCode, 201);
    assert.equal(block.body, 'true');
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/users/${u.id}` })).json.state, 'blocked');
    // Listed to administrators only (GitLab's UsersFinder), with the list's total.
    const other = await t.user('frank-viewer');
    const byOther = await t.request({ method: 'GET', url: '/api/v4/users?username=frank', token: other.token });
    assert.deepEqual([byOther.statusCode, byOther.json, byOther.headers['x-total']], [200, [], '0']);
    const all = await t.request({ method: 'GET', url: '/api/v4/users?per_page=100', token: other.token });
    assert.ok(!all.json.some((x: any) => x.username === 'frank'));
    const byAdmin = await t.request({ method: 'GET', url: '/api/v4/users?username=frank' });
    assert.deepEqual(
      byAdmin.json.map((x: any) => [x.username, x.state]),
      [['frank', 'blocked']],
    );
    const refused = await t.request({ method: 'GET', url: '/api/v4/user', token: u.token });
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(refused.json, { message: '403 Forbidden - Your account has been blocked.' });

    const deactivate = await t.request({ method: 'POST', url: `/api/v4/users/${u.id}/deactivate` });
    assert.equal(deactivate.statusCode, 403);
    assert.deepEqual(deactivate.json, { message: '403 Forbidden - A blocked user cannot be deactivated by the API' });
    const activate = await t.request({ method: 'POST', url: `/api/v4/users/${u.id}/activate` });
    assert.equal(activate.statusCode, 403);
    assert.deepEqual(activate.json, { message: '403 Forbidden - A blocked user must be unblocked to be activated' });
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/users/${u.id}` })).json.state, 'blocked');

    const unblock = await t.request({ method: 'POST', url: `/api/v4/users/${u.id}/unblock` });
    assert.equal(unblock.statusCode, 201);
    assert.equal(unblock.body, 'true');
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/users/${u.id}` })).json.state, 'active');
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/user', token: u.token })).statusCode, 200);
  });

  it('an administrator cannot block themselves (GitLab: The API initiating user cannot be blocked by the API)', async () => {
    const admin = await t.user('self-blocker', { admin: true });
    await t.fails('POST', `/users/${admin.id}/block`, admin.token, undefined, 403, {
      message: '403 Forbidden - The API initiating user cannot be blocked by the API',
    });
    assert.equal((await t.ok('GET', '/user', admin.token, undefined, 200)).state, 'active');
    // Another administrator may; the one a request acts as with sudo is the initiating user.
    const other = await t.user('other-admin', { admin: true });
    const sudo = await t.api('POST', `/users/${other.id}/block`, ROOT_TOKEN, undefined, { sudo: 'other-admin' });
    assert.deepEqual(
      [sudo.statusCode, sudo.json],
      [403, { message: '403 Forbidden - The API initiating user cannot be blocked by the API' }],
    );
    await t.ok('POST', `/users/${admin.id}/block`, other.token, undefined, 201);
    assert.equal((await t.ok('GET', `/users/${admin.id}`, ROOT_TOKEN, undefined, 200)).state, 'blocked');
  });

  it('deactivate and activate change the state; a deactivated user cannot be unblocked', async () => {
    const u = await t.user('grace');
    const deactivate = await t.request({ method: 'POST', url: `/api/v4/users/${u.id}/deactivate` });
    assert.equal(deactivate.statusCode, 201);
    assert.equal(deactivate.body, 'true');
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/users/${u.id}` })).json.state, 'deactivated');
    const refused = await t.request({ method: 'GET', url: '/api/v4/user', token: u.token });
    assert.equal(refused.statusCode, 403);
    assert.match(refused.json.message, /^403 Forbidden - Your account has been deactivated by your administrator\./);

    const unblock = await t.request({ method: 'POST', url: `/api/v4/users/${u.id}/unblock` });
    assert.equal(unblock.statusCode, 403);
    assert.deepEqual(unblock.json, { message: '403 Forbidden - Deactivated users cannot be unblocked by the API' });

    const activate = await t.request({ method: 'POST', url: `/api/v4/users/${u.id}/activate` });
    assert.equal(activate.statusCode, 201);
    assert.equal(activate.body, 'true');
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/users/${u.id}` })).json.state, 'active');
    assert.equal((await t.request({ method: 'GET', url: '/api/v4/user', token: u.token })).statusCode, 200);
  });

  it('state changes are for admins only and 404 for unknown users', async () => {
    for (const action of ['block', 'unblock', 'deactivate', 'activate']) {
      const anon = await t.request({ method: 'POST', url: `/api/v4/users/${bob.id}/${action}`, token: null });
      assert.equal(anon.statusCode, 401, action);
      assert.deepEqual(anon.json, { message: '401 Unauthorized' });
      const user = await t.request({ method: 'POST', url: `/api/v4/users/${bob.id}/${action}`, token: alice.token });
      assert.equal(user.statusCode, 403, action);
      assert.deepEqual(user.json, { message: '403 Forbidden' });
      const missing = await t.request({ method: 'POST', url: `/api/v4/users/999999/${action}` });
      assert.equal(missing.statusCode, 404, action);
      assert.deepEqual(missing.json, { message: '404 User Not Found' });
    }
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/users/${bob.id}` })).json.state, 'active');
  });
});
