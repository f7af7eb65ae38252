// Deep or huge input (issue 17): JSON nested 100,000 deep, parameter names nested 5,000 deep in a query, a
// form and a multipart body, and 10,000 parameters get Grape's 400 or are ignored as GitLab ignores them,
// never a stack overflow or a 500; the server answers afterwards.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const MISSING = { error: 'title is missing, files, content are missing, exactly one parameter must be provided' };

describe('deep and huge input', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    t = await createTestApp();
    const project = await t.ok('POST', '/projects', ROOT_TOKEN, { name: 'huge' }, 201);
    url = `/projects/${project.id}/snippets`;
  });
  after(() => t.close());

  it('JSON nested 100,000 deep is no parameter at all', async () => {
    const depth = 100_000;
    for (const body of ['['.repeat(depth) + ']'.repeat(depth), `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`]) {
      await t.fails('POST', url, ROOT_TOKEN, body, 400, MISSING);
    }
  });

  it('a parameter name nested 5,000 deep, in a query, a form and a multipart body', async () => {
    const name = `a${'[b]'.repeat(5000)}`;
    const list = await t.expect('GET', `/projects?${name}=1`, ROOT_TOKEN, undefined, 200);
    assert.ok(Array.isArray(list.json));
    await t.fails('POST', url, ROOT_TOKEN, `${name}=1`, 400, MISSING);
    const part = `--X\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n1\r\n--X--\r\n`;
    const res = await t.api('POST', url, ROOT_TOKEN, part, { 'content-type': 'multipart/form-data; boundary=X' });
    assert.deepEqual([res.statusCode, res.json], [400, MISSING]);
  });

  it('a name or a tree path ending in a run of 100,000 dashes or slashes is trimmed in one pass', async () => {
    // A regular expression for "these characters at the end" tries every start in the run: 5 billion steps.
    const started = performance.now();
    const name = `a${'-'.repeat(100_000)}a`;
    const created = await t.api('POST', '/projects', ROOT_TOKEN, { name });
    assert.equal(created.statusCode, 400, created.body);
    const project = await t.ok('POST', '/projects', ROOT_TOKEN, { name: 'trees', initialize_with_readme: true }, 201);
    const path = `a${'/'.repeat(100_000)}a`;
    await t.fails('GET', `/projects/${project.id}/repository/tree?path=${path}`, ROOT_TOKEN, undefined, 404, {
      message: '404 Tree Not Found',
    });
    // Linear: milliseconds. Before, minutes.
    assert.ok(performance.now() - started < 5000, `${performance.now() - started} ms`);
  });

  it('10,000 form parameters', async () => {
    const body = Array.from({ length: 10_000 }, (_, i) => `p${i}=1`).join('&');
    const res = await t.api('POST', url, ROOT_TOKEN, body, { 'content-type': 'application/x-www-form-urlencoded' });
    assert.deepEqual([res.statusCode, res.json], [400, MISSING]);
    await t.expect('GET', '/templates/licenses/mit', null, undefined, 200);
  });
});
