// Cross-origin requests to the API, as GitLab's Rack::Cors rules in config/application.rb answer them
// (docs/gitlab-compatibility.md#cors).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';
const METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const EXPOSED =
  'Link, X-Total, X-Total-Pages, X-Per-Page, X-Page, X-Next-Page, X-Prev-Page, X-Gitlab-Blob-Id, ' +
  'X-Gitlab-Commit-Id, X-Gitlab-Content-Sha256, X-Gitlab-Encoding, X-Gitlab-File-Name, X-Gitlab-File-Path, ' +
  'X-Gitlab-Last-Commit-Id, X-Gitlab-Ref, X-Gitlab-Size, X-Request-Id, ETag';

describe('CORS on the API', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
  });
  after(() => t.close());

  it('answers a preflight with 200 and the allowed methods and headers, without running the endpoint', async () => {
    const res = await t.request({
      method: 'OPTIONS',
      url: '/api/v4/snippets',
      headers: {
        origin: 'https://tool.example.org',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'private-token, content-type',
      },
      token: null,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body, '');
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-allow-methods'], METHODS);
    assert.equal(res.headers['access-control-allow-headers'], 'private-token, content-type');
    assert.equal(res.headers['access-control-expose-headers'], EXPOSED);
    assert.equal(res.headers['access-control-max-age'], '7200');
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
  });

  it('adds the headers to answers of any status for a request with an Origin, JSON lists and raw files too', async () => {
    const origin = { origin: 'https://tool.example.org' };
    const list = await t.request({ method: 'GET', url: '/api/v4/templates/licenses', headers: origin, token: null });
    assert.equal(list.statusCode, 200);
    assert.equal(list.headers['access-control-allow-origin'], '*');
    assert.equal(list.headers['access-control-expose-headers'], EXPOSED);
    assert.match(String(list.headers.vary), /Origin/);
    const denied = await t.request({ method: 'GET', url: '/api/v4/user', headers: origin, token: null });
    assert.equal(denied.statusCode, 401);
    assert.equal(denied.headers['access-control-allow-origin'], '*');
    const created = await t.request({
      method: 'POST',
      url: '/api/v4/snippets',
      headers: { ...origin, 'private-token': ROOT_TOKEN },
      payload: { title: 't', file_name: 'a.txt', content: 'hi', visibility: 'public' },
      token: null,
    });
    assert.equal(created.statusCode, 201, created.body);
    const raw = await t.request({ method: 'GET', url: `/api/v4/snippets/${created.json.id}/raw`, headers: origin });
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.headers['access-control-allow-origin'], '*');
  });

  it("gives the instance's own origin its origin and credentials", async () => {
    const res = await t.request({ method: 'GET', url: '/api/v4/templates/licenses', headers: { origin: BASE } });
    assert.equal(res.headers['access-control-allow-origin'], BASE);
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
  });

  it('adds nothing without an Origin, nor outside the API', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v4/templates/licenses', token: null });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const page = await t.request({ method: 'GET', url: '/explore/snippets', headers: { origin: 'https://x.org' } });
    assert.equal(page.headers['access-control-allow-origin'], undefined);
  });
});
