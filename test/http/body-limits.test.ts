// Body limits decided before a body is read (docs/gitlab-compatibility.md#d19): a body over 1 MiB gets, from a
// caller without a valid token in a header or the query string, what the request gets without one; the
// largest body follows snippet_size_limit. A real process with bodies still coming is test/process/hostile-bodies.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const MiB = 1024 * 1024;
const UNAUTHORIZED = { message: '401 Unauthorized' };
const TOO_LARGE = { message: '413 Request Entity Too Large' };
/** A JSON body of about `bytes` whose one parameter, `name`, is too long for any model. */
const jsonOf = (bytes: number) => JSON.stringify({ name: 'x'.repeat(bytes) });
const TOO_LONG = {
  message: {
    path: ['is too long (maximum is 255 characters)'],
    name: ['is too long (maximum is 255 characters)'],
  },
};

describe('body limits before the body is read', () => {
  let t: TestApp;
  let reader: string;
  before(async () => {
    t = await createTestApp();
    reader = (await t.user('reader', { scopes: ['read_api'] })).token;
  });
  after(() => t.close());

  const post = (url: string, token: string | null, payload: string, contentType = 'application/json') =>
    t.request({ method: 'POST', url, token, headers: { 'content-type': contentType }, payload });

  it('reads a body over 1 MiB only from a caller whose token authenticates for the route', async () => {
    const body = jsonOf(2 * MiB);
    const answers = [
      [null, 401, UNAUTHORIZED],
      ['not-a-token-of-anyone-0123456789', 401, UNAUTHORIZED],
      [
        reader,
        403,
        {
          error: 'insufficient_scope',
          error_description: 'The request requires higher privileges than provided by the access token.',
          scope: 'api read_api',
        },
      ],
    ] as const;
    for (const [token, status, answer] of answers) {
      const res = await post('/api/v4/projects', token, body);
      assert.deepEqual([res.statusCode, res.json], [status, answer], String(token));
      assert.equal(res.headers.connection, 'close');
    }
    // A git content type streams only to git's own URLs; elsewhere it is a body like any other.
    const git = await post('/api/v4/projects', null, body, 'application/x-git-upload-pack-request');
    assert.deepEqual([git.statusCode, git.json, git.headers.connection], [401, UNAUTHORIZED, 'close']);
    // The same body with a valid token, in the header or the query string, is read and answered by the route.
    assert.deepEqual([(await post('/api/v4/projects', ROOT_TOKEN, body)).json], [TOO_LONG]);
    const query = await post(
      `/api/v4/projects?private_token=${ROOT_TOKEN}`,
      null,
      `name=${'x'.repeat(2 * MiB)}`,
      'application/x-www-form-urlencoded',
    );
    assert.deepEqual([query.statusCode, query.json], [400, TOO_LONG]);
    // Up to 1 MiB, anyone's body is read: the route answers (here: authentication, 401) as it always did.
    const small = await post('/api/v4/projects', null, jsonOf(MiB - 100));
    assert.deepEqual([small.statusCode, small.json, small.headers.connection], [401, UNAUTHORIZED, 'keep-alive']);
  });

  it('answers an unknown route, another method and the sign-in form as they are answered anyway', async () => {
    const body = jsonOf(2 * MiB);
    const unknown = await post('/api/v4/no/such/route', null, body);
    assert.deepEqual([unknown.statusCode, unknown.json], [404, { error: '404 Not Found' }]);
    const method = await post('/api/v4/version', null, body);
    assert.deepEqual([method.statusCode, method.json], [405, { error: '405 Not Allowed' }]);
    const form = await post(
      '/users/sign_in',
      null,
      `login=${'x'.repeat(2 * MiB)}`,
      'application/x-www-form-urlencoded',
    );
    assert.deepEqual([form.statusCode, form.json], [413, TOO_LARGE]);
  });

  it('follows snippet_size_limit: three times it and the description, and 64 KiB', async () => {
    await t.ok('PUT', '/application/settings', ROOT_TOKEN, { snippet_size_limit: MiB }, 200);
    // 3 × (1 MiB + 1 MiB) + 64 KiB
    const limit = 6 * MiB + 64 * 1024;
    const over = await post('/api/v4/projects', ROOT_TOKEN, jsonOf(limit));
    assert.deepEqual([over.statusCode, over.json, over.headers.connection], [413, TOO_LARGE, 'close']);
    const within = await post('/api/v4/projects', ROOT_TOKEN, jsonOf(limit - 100));
    assert.deepEqual([within.statusCode, within.json], [400, TOO_LONG]);
    await t.ok('PUT', '/application/settings', ROOT_TOKEN, { snippet_size_limit: 52_428_800 }, 200);
    const again = await post('/api/v4/projects', ROOT_TOKEN, jsonOf(limit));
    assert.deepEqual([again.statusCode, again.json], [400, TOO_LONG]);
  });
});
