import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helper.ts';

describe('API mechanics shared by every endpoint', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('answers an unknown route with 404 {"error":"404 Not Found"}', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v4/no/such/route' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json, { error: '404 Not Found' });
    assert.equal(res.headers['content-type'], 'application/json');
  });

  it('reads a parameter name with a line break after [] in a query or a form (it stopped the process)', async () => {
    const query = await t.request({ method: 'GET', url: '/api/v4/templates/licenses?a[]%0A=1&b[]%0D=2' });
    assert.equal(query.statusCode, 200, query.body);
    const form = await t.request({
      method: 'POST',
      url: '/api/v4/snippets',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'title=t&file_name=a.txt&content=hi&a[]%0A=1',
    });
    assert.equal(form.statusCode, 201, form.body);
  });

  it('answers a known path with another method with 405 and Allow', async () => {
    const res = await t.request({ method: 'PATCH', url: '/api/v4/projects/1' });
    assert.equal(res.statusCode, 405);
    assert.deepEqual(res.json, { error: '405 Not Allowed' });
    assert.equal(res.headers.allow, 'OPTIONS, GET, HEAD, PUT, DELETE');
  });

  it("answers OPTIONS of a known API path with 204 and Allow, as Grape's own OPTIONS routes do", async () => {
    const res = await t.request({ method: 'OPTIONS', url: '/api/v4/projects/1' });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal(res.headers.allow, 'OPTIONS, GET, HEAD, PUT, DELETE');
    const unknown = await t.request({ method: 'OPTIONS', url: '/api/v4/nothing/here' });
    assert.deepEqual([unknown.statusCode, unknown.json], [404, { error: '404 Not Found' }]);
  });

  it('answers GET and HEAD of a path served only by POST with 405 and Allow (not the catch-all of pages)', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await t.request({ method, url: '/api/v4/projects/1/archive' });
      assert.equal(res.statusCode, 405, method);
      assert.equal(res.headers.allow, 'OPTIONS, POST', method);
      assert.equal(res.headers['content-type'], 'application/json', method);
      if (method === 'GET') assert.deepEqual(res.json, { error: '405 Not Allowed' });
    }
  });

  it('answers a known path with an empty segment, whatever the method, with 404', async () => {
    for (const method of ['GET', 'PATCH'] as const) {
      const res = await t.request({ method, url: '/api/v4/projects//snippets' });
      assert.equal(res.statusCode, 404, method);
      assert.deepEqual(res.json, { error: '404 Not Found' }, method);
    }
  });

  it('answers HEAD for a GET route with the same status and no body', async () => {
    const res = await t.request({ method: 'HEAD', url: '/api/v4/user' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
    assert.equal(res.headers['content-type'], 'application/json');
  });

  it('sends JSON as exactly application/json with the security headers', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v4/user' });
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.match(res.json.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('answers API v3 with 410', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v3/projects' });
    assert.equal(res.statusCode, 410);
    assert.deepEqual(res.json, { error: 'API V3 is no longer supported. Use API V4 instead.' });
  });
});
