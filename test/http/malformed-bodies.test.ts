// Malformed multipart bodies on every route and method that reads a body: each is answered (400 for a
// body that does not match its declared format, 413 for one over the limit) and the app keeps serving.
// The routes are read from the app itself, so a route added later is covered without touching this file.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, multipart, ROOT_TOKEN, type TestApp } from '../helper.ts';

const MAX_BODY = 64 * 1024;
const MALFORMED = { error: 'message body does not match declared format' };
const TOO_LARGE = { message: '413 Request Entity Too Large' };
const FILE_PART = '--XX\r\nContent-Disposition: form-data; name="a"; filename="a"\r\n\r\n';

/** [what, content type, body, status, answer] */
const BODIES: [string, string, string, number, object][] = [
  [
    'a file part that never reaches its closing boundary',
    'multipart/form-data; boundary=XX',
    `${FILE_PART}x`,
    400,
    MALFORMED,
  ],
  [
    'a part cut off inside its headers',
    'multipart/form-data; boundary=XX',
    '--XX\r\nContent-Disposition: form-da',
    400,
    MALFORMED,
  ],
  ['a body without the declared boundary', 'multipart/form-data; boundary=XX', 'just some text', 400, MALFORMED],
  ['a multipart content type without a boundary', 'multipart/form-data', `${FILE_PART}x\r\n--XX--\r\n`, 400, MALFORMED],
  [
    'a field part that never ends',
    'multipart/form-data; boundary=XX',
    '--XX\r\nContent-Disposition: form-data; name="title"\r\n\r\nabc',
    400,
    MALFORMED,
  ],
  [
    'a file part larger than the body limit',
    'multipart/form-data; boundary=XX',
    `${FILE_PART}${'x'.repeat(MAX_BODY + 1)}`,
    413,
    TOO_LARGE,
  ],
  [
    'a field larger than the body limit',
    'multipart/form-data; boundary=XX',
    `--XX\r\nContent-Disposition: form-data; name="t"\r\n\r\n${'y'.repeat(MAX_BODY + 1)}\r\n--XX--\r\n`,
    413,
    TOO_LARGE,
  ],
];

/** Every route path the app serves, from Fastify's route tree, with each `:param` filled in with 1. */
function routePaths(tree: string): string[] {
  const stack: string[] = [];
  const paths: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│├└─\s]*)(\S+) \(/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    stack.push(m[2]);
    paths.push(stack.join(''));
  }
  return paths.map((p) => (p === '*' ? '/team/tools.git/git-receive-pack' : p.replace(/:\w+/g, '1')));
}

describe('malformed multipart bodies on every route', () => {
  let t: TestApp;
  let paths: string[];
  before(async () => {
    t = await createTestApp({ maxBodyBytes: MAX_BODY });
    paths = routePaths(t.app.printRoutes({ commonPrefix: false }));
  });
  after(() => t.close());

  it('finds the routes to try', () => {
    assert.ok(paths.includes('/api/v4/version'), paths.join('\n'));
    assert.ok(paths.includes('/api/v4/projects/1/snippets/1'), paths.join('\n'));
    assert.ok(paths.length >= 40, `${paths.length} routes`);
  });

  for (const [what, contentType, body, status, answer] of BODIES) {
    it(`answers ${status} to ${what}, with and without a token, on every route and method`, async () => {
      for (const url of paths) {
        for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
          for (const token of [ROOT_TOKEN, null]) {
            const res = await t.request({
              method,
              url,
              token,
              headers: { 'content-type': contentType },
              payload: body,
            });
            assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
            assert.deepEqual(res.json, answer, `${method} ${url}`);
          }
        }
      }
      const version = await t.api('GET', '/version', ROOT_TOKEN);
      assert.equal(version.statusCode, 200);
    });
  }

  it('still reads a well-formed multipart body after all of them', async () => {
    const body = multipart(
      [
        ['name', 'after'],
        ['path', 'after'],
      ],
      'XX',
    );
    const group = await t.ok('POST', '/groups', ROOT_TOKEN, body, 201, {
      'content-type': 'multipart/form-data; boundary=XX',
    });
    assert.equal(group.path, 'after');
  });
});
