// Authentication as GitLab does it (docs/gitlab-compatibility.md#authentication and #d13): every token carrier, token
// failures with their exact bodies and WWW-Authenticate, scopes, blocked/deactivated users and Sudo.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const EXTERNAL_URL = 'http://gitlab.example.com';
const UNAUTHORIZED = { message: '401 Unauthorized' };
const EXPIRED_DESCRIPTION = 'Token is expired. You can either do re-authorization or token refresh.';
const REVOKED_DESCRIPTION = 'Token was revoked. You have to re-authorize from the user.';
const invalidTokenHeader = (description: string) =>
  `Bearer realm="Protected by OAuth 2.0", error="invalid_token", error_description="${description}"`;
const insufficientScope = (scope: string) => ({
  error: 'insufficient_scope',
  error_description: 'The request requires higher privileges than provided by the access token.',
  scope,
});

type Person = { id: number; username: string; token: string };

describe('authentication', () => {
  let t: TestApp;
  let alice: Person;

  before(async () => {
    t = await createTestApp({ externalUrl: EXTERNAL_URL });
    alice = await t.user('alice');
  });
  after(() => t.close());

  /** POST /users/:id/personal_access_tokens as root; returns the 201 body. */
  const createToken = (userId: number, body: Record<string, unknown>) =>
    t.ok('POST', `/users/${userId}/personal_access_tokens`, ROOT_TOKEN, body, 201);

  const whoAmI = (headers: Record<string, string> = {}, query = '') =>
    t.api('GET', `/user${query}`, null, undefined, headers);

  describe('token carriers', () => {
    const carriers: [string, (tok: string) => { headers?: Record<string, string>; query?: string }][] = [
      ['PRIVATE-TOKEN header', (tok) => ({ headers: { 'private-token': tok } })],
      ['private_token query parameter', (tok) => ({ query: `?private_token=${tok}` })],
      ['access_token query parameter', (tok) => ({ query: `?access_token=${tok}` })],
      ['Authorization: Bearer header', (tok) => ({ headers: { authorization: `Bearer ${tok}` } })],
      ['bearer_token query parameter', (tok) => ({ query: `?bearer_token=${tok}` })],
    ];

    for (const [name, carry] of carriers) {
      it(`authenticates a personal access token given in the ${name}`, async () => {
        const { headers, query } = carry(alice.token);
        const res = await whoAmI(headers, query);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['content-type'], 'application/json');
        assert.equal(res.json.username, 'alice');
        assert.equal(res.json.id, alice.id);
      });

      it(`refuses an unknown token in the ${name} with 401, even on GET /projects`, async () => {
        const { headers = {}, query = '' } = carry('glpat-not-a-real-token-000000');
        const res = await t.request({ method: 'GET', url: `/api/v4/projects${query}`, token: null, headers });
        assert.equal(res.statusCode, 401);
        assert.deepEqual(res.json, UNAUTHORIZED);
        assert.equal(res.headers['content-type'], 'application/json');
      });
    }

    it('accepts private_token in a JSON body', async () => {
      const res = await t.request({
        method: 'POST',
        url: '/api/v4/projects',
        token: null,
        payload: { private_token: alice.token, name: 'via-body' },
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json.path_with_namespace, 'alice/via-body');
    });

    it('treats an empty PRIVATE-TOKEN header as anonymous', async () => {
      const list = await t.request({
        method: 'GET',
        url: '/api/v4/projects',
        token: null,
        headers: { 'private-token': '' },
      });
      assert.equal(list.statusCode, 200, list.body);
      assert.ok(Array.isArray(list.json));
      const me = await whoAmI({ 'private-token': '' });
      assert.equal(me.statusCode, 401);
      assert.deepEqual(me.json, UNAUTHORIZED);
    });

    it('answers 401 {"message":"401 Unauthorized"} without any token where authentication is required', async () => {
      const res = await whoAmI();
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json, UNAUTHORIZED);
    });
  });

  describe('expired and revoked tokens', () => {
    it('lets an admin create an already expired token and refuses it with invalid_token', async () => {
      const created = await createToken(alice.id, { name: 'old', scopes: ['api'], expires_at: '2020-01-01' });
      assert.equal(created.expires_at, '2020-01-01');
      assert.equal(created.active, false);
      assert.equal(created.revoked, false);
      const carriers: Record<string, string>[] = [
        { 'private-token': created.token },
        { authorization: `Bearer ${created.token}` },
      ];
      for (const headers of carriers) {
        const res = await whoAmI(headers);
        assert.equal(res.statusCode, 401);
        assert.deepEqual(res.json, { error: 'invalid_token', error_description: EXPIRED_DESCRIPTION });
        assert.equal(res.headers['www-authenticate'], invalidTokenHeader(EXPIRED_DESCRIPTION));
      }
      const anon = await t.request({ method: 'GET', url: '/api/v4/projects', token: created.token });
      assert.equal(anon.statusCode, 401);
      assert.deepEqual(anon.json, { error: 'invalid_token', error_description: EXPIRED_DESCRIPTION });
    });

    it('refuses a revoked token with invalid_token', async () => {
      const created = await createToken(alice.id, { name: 'soon-gone', scopes: ['api'] });
      assert.equal((await whoAmI({ 'private-token': created.token })).statusCode, 200);
      const del = await t.request({ method: 'DELETE', url: `/api/v4/personal_access_tokens/${created.id}` });
      assert.equal(del.statusCode, 204);
      assert.equal(del.body, '');
      const res = await whoAmI({ 'private-token': created.token });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json, { error: 'invalid_token', error_description: REVOKED_DESCRIPTION });
      assert.equal(res.headers['www-authenticate'], invalidTokenHeader(REVOKED_DESCRIPTION));
      const anon = await t.request({
        method: 'GET',
        url: `/api/v4/projects?private_token=${created.token}`,
        token: null,
      });
      assert.equal(anon.statusCode, 401);
      assert.deepEqual(anon.json, { error: 'invalid_token', error_description: REVOKED_DESCRIPTION });
    });
  });

  describe('scopes', () => {
    it('allows GET with a read_api token and refuses POST with 403 insufficient_scope', async () => {
      const { token } = await createToken(alice.id, { name: 'ro', scopes: ['read_api'] });
      const list = await t.request({ method: 'GET', url: '/api/v4/projects', token });
      assert.equal(list.statusCode, 200, list.body);
      const me = await t.request({ method: 'GET', url: '/api/v4/user', token });
      assert.equal(me.statusCode, 200, me.body);
      const res = await t.request({ method: 'POST', url: '/api/v4/projects', token, payload: { name: 'nope' } });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json, insufficientScope('api read_api'));
      assert.equal(res.headers['content-type'], 'application/json');
    });

    it('allows GET /user with a read_user token but refuses GET /projects', async () => {
      const { token } = await createToken(alice.id, { name: 'profile', scopes: ['read_user'] });
      const me = await t.request({ method: 'GET', url: '/api/v4/user', token });
      assert.equal(me.statusCode, 200, me.body);
      assert.equal(me.json.username, 'alice');
      const res = await t.request({ method: 'GET', url: '/api/v4/projects', token });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json, insufficientScope('api read_api'));
    });
  });

  describe('blocked and deactivated users', () => {
    it("refuses a blocked user's token with 403, also where anonymous access works", async () => {
      const bob = await t.user('bob');
      const block = await t.request({ method: 'POST', url: `/api/v4/users/${bob.id}/block` });
      assert.equal(block.statusCode, 201);
      assert.equal(block.json, true);
      const expected = { message: '403 Forbidden - Your account has been blocked.' };
      const me = await whoAmI({ 'private-token': bob.token });
      assert.equal(me.statusCode, 403);
      assert.deepEqual(me.json, expected);
      const list = await t.request({ method: 'GET', url: '/api/v4/projects', token: bob.token });
      assert.equal(list.statusCode, 403);
      assert.deepEqual(list.json, expected);
      const unblock = await t.request({ method: 'POST', url: `/api/v4/users/${bob.id}/unblock` });
      assert.equal(unblock.statusCode, 201);
      assert.equal((await whoAmI({ 'private-token': bob.token })).statusCode, 200);
    });

    it("refuses a deactivated user's token with 403 and the reactivation sentence", async () => {
      const carol = await t.user('carol');
      const deactivate = await t.request({ method: 'POST', url: `/api/v4/users/${carol.id}/deactivate` });
      assert.equal(deactivate.statusCode, 201);
      assert.equal(deactivate.json, true);
      const me = await whoAmI({ 'private-token': carol.token });
      assert.equal(me.statusCode, 403);
      assert.deepEqual(me.json, {
        message: `403 Forbidden - Your account has been deactivated by your administrator. Please log back in from a web browser to reactivate your account at ${EXTERNAL_URL}`,
      });
    });
  });

  describe('sudo', () => {
    const asRoot = (headers: Record<string, string>, query = '') =>
      t.api('GET', `/user${query}`, ROOT_TOKEN, undefined, headers);

    it('acts as the user named in the Sudo header, by username and by id', async () => {
      for (const value of ['alice', String(alice.id)]) {
        const res = await asRoot({ sudo: value });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json.username, 'alice');
        assert.equal(res.json.is_admin, false);
      }
    });

    it('acts as the user named in the sudo parameter, by username and by id', async () => {
      for (const value of ['alice', String(alice.id)]) {
        const res = await asRoot({}, `?sudo=${value}`);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json.username, 'alice');
      }
    });

    it('writes as the sudo user (sudo in a JSON body)', async () => {
      const res = await t.request({
        method: 'POST',
        url: '/api/v4/projects',
        payload: { name: 'sudone', sudo: 'alice' },
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json.path_with_namespace, 'alice/sudone');
      assert.equal(res.json.creator_id, alice.id);
    });

    it('refuses sudo from a non-admin with 403 "Must be admin to use sudo"', async () => {
      const res = await t.request({
        method: 'GET',
        url: '/api/v4/user',
        token: alice.token,
        headers: { sudo: 'root' },
      });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json, { message: '403 Forbidden - Must be admin to use sudo' });
      const param = await t.request({ method: 'GET', url: '/api/v4/user?sudo=root', token: alice.token });
      assert.equal(param.statusCode, 403);
      assert.deepEqual(param.json, { message: '403 Forbidden - Must be admin to use sudo' });
    });

    it('refuses sudo from an admin token without the sudo scope with insufficient_scope "sudo"', async () => {
      const dave = await t.user('dave', { admin: true, scopes: ['api'] });
      const res = await t.request({
        method: 'GET',
        url: '/api/v4/user',
        token: dave.token,
        headers: { sudo: 'alice' },
      });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json, insufficientScope('sudo'));
      const plain = await t.request({ method: 'GET', url: '/api/v4/user', token: dave.token });
      assert.equal(plain.statusCode, 200);
      assert.equal(plain.json.username, 'dave');
    });

    it('answers 404 for an unknown sudo user', async () => {
      const res = await asRoot({ sudo: 'nobody' });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json, { message: "404 User with ID or username 'nobody' Not Found" });
      const byId = await asRoot({}, '?sudo=999999');
      assert.equal(byId.statusCode, 404);
      assert.deepEqual(byId.json, { message: "404 User with ID or username '999999' Not Found" });
    });
  });
});
