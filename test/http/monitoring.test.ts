// Health, readiness, liveness and metrics at GitLab's paths (issue 16, Operators), only for the monitoring
// allow-list; X-Request-Id on every answer.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const OUTSIDE = '203.0.113.7';

describe('monitoring endpoints', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const get = (url: string, remoteAddress = '127.0.0.1', headers: Record<string, string> = {}) =>
    t.request({ method: 'GET', url, remoteAddress, token: null, headers });

  it('/-/health answers "GitLab OK" to loopback and an empty 404 to anyone else, as GitLab', async () => {
    const ok = await get('/-/health');
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.body, 'GitLab OK');
    assert.equal(ok.headers['content-type'], 'text/plain');
    const v6 = await get('/-/health', '::1');
    assert.equal(v6.statusCode, 200);
    const outside = await get('/-/health', OUTSIDE);
    assert.equal(outside.statusCode, 404);
    assert.equal(outside.body, '');
  });

  it('/-/liveness answers {"status":"ok"}', async () => {
    const res = await get('/-/liveness');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.body, '{"status":"ok"}');
  });

  it('/-/readiness checks the database and storage; all=1 lists each check as GitLab does', async () => {
    const res = await get('/-/readiness');
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"status":"ok"}');
    const all = await get('/-/readiness?all=1');
    assert.equal(all.statusCode, 200);
    assert.deepEqual(all.json, { status: 'ok', db_check: [{ status: 'ok' }], storage_check: [{ status: 'ok' }] });
    assert.equal(all.headers['x-gitlab-custom-error'], undefined);
  });

  it('/-/readiness is 503 and says why when git does not run', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    let res: Awaited<ReturnType<typeof get>>;
    try {
      res = await get('/-/readiness?all=1');
    } finally {
      process.env.PATH = path;
    }
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['x-gitlab-custom-error'], '1');
    assert.deepEqual(res.json, {
      status: 'failed',
      db_check: [{ status: 'ok' }],
      storage_check: [
        { status: 'failed', message: 'unexpected Storage check result: git does not run: spawn git ENOENT' },
      ],
    });
    assert.equal((await get('/-/readiness')).body, '{"status":"ok"}');
  });

  it('/-/readiness is 503 when the cache directory cannot take a file', async () => {
    const cacheDir = t.app.gitNode.caches.root;
    fs.rmSync(cacheDir, { recursive: true, force: true });
    fs.writeFileSync(cacheDir, 'not a directory');
    try {
      const res = await get('/-/readiness');
      assert.equal(res.statusCode, 503);
      assert.equal(res.body, '{"status":"failed"}');
      const all = await get('/-/readiness?all=1');
      assert.equal(all.json.storage_check[0].status, 'failed');
      assert.match(all.json.storage_check[0].message, /^unexpected Storage check result: E(EXIST|NOTDIR)/);
    } finally {
      fs.rmSync(cacheDir, { force: true });
      fs.mkdirSync(cacheDir);
    }
    assert.equal((await get('/-/readiness')).statusCode, 200);
  });

  it('outside the allow-list every monitoring path is a 404, and no check or metric leaks', async () => {
    for (const url of ['/-/liveness', '/-/readiness', '/-/readiness?all=1', '/-/metrics']) {
      const res = await get(url, OUTSIDE);
      assert.equal(res.statusCode, 404, url);
      assert.doesNotMatch(res.body, /status|snippetd_/, url);
    }
  });

  it('/-/metrics: requests by method, route pattern and status, durations, snippet writes, queries, caches, process', async () => {
    const project = await t.ok('POST', '/projects', ROOT_TOKEN, { name: 'metrics' }, 201);
    const snippet = await t.ok(
      'POST',
      `/projects/${project.id}/snippets`,
      ROOT_TOKEN,
      { title: 't', files: [{ file_path: 'a.txt', content: 'a' }] },
      201,
    );
    await t.ok('PUT', `/projects/${project.id}/snippets/${snippet.id}`, ROOT_TOKEN, { title: 'u' }, 200);
    await t.ok('GET', `/projects/${project.id}/snippets/${snippet.id}`, ROOT_TOKEN, undefined, 200);
    await t.ok('GET', `/projects/${project.id}/snippets/${snippet.id}`, ROOT_TOKEN, undefined, 200);
    // The same blob through two URLs: the second finds it in the git object cache (asking the first URL again
    // would be answered whole from the read cache).
    await t.expect('GET', `/projects/${project.id}/snippets/${snippet.id}/raw`, ROOT_TOKEN, undefined, 200);
    await t.expect(
      'GET',
      `/projects/${project.id}/snippets/${snippet.id}/files/main/a.txt/raw`,
      ROOT_TOKEN,
      undefined,
      200,
    );
    await t.expect('GET', `/projects/${project.id}/snippets/999999`, ROOT_TOKEN, undefined, 404);
    await t.expect('POST', `/projects/${project.id}/snippets`, ROOT_TOKEN, { title: 'no files' }, 400);
    await t.expect('DELETE', `/projects/${project.id}/snippets/${snippet.id}`, ROOT_TOKEN, undefined, 204);

    const res = await get('/-/metrics');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    const lines = res.body.split('\n');
    const value = (prefix: string) => {
      const line = lines.find((l) => l.startsWith(`${prefix} `));
      return line === undefined ? undefined : Number(line.slice(prefix.length + 1));
    };
    const route = '/api/v4/projects/:id/snippets/:snippet_id';
    assert.equal(value(`snippetd_http_requests_total{method="GET",route="${route}",status="200"}`), 2);
    assert.equal(value(`snippetd_http_requests_total{method="GET",route="${route}",status="404"}`), 1);
    assert.equal(value(`snippetd_http_requests_total{method="PUT",route="${route}",status="200"}`), 1);
    assert.equal(value(`snippetd_http_requests_total{method="DELETE",route="${route}",status="204"}`), 1);
    assert.equal(
      value('snippetd_http_requests_total{method="POST",route="/api/v4/projects/:id/snippets",status="400"}'),
      1,
    );
    assert.deepEqual(
      lines.filter((l) => l.includes(`/snippets/${snippet.id}`)),
      [],
      'no raw URL is a label',
    );
    assert.equal(value(`snippetd_http_request_duration_seconds_count{method="GET",route="${route}"}`), 3);
    assert.equal(value(`snippetd_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="${route}"}`), 3);
    // A refused create (400) is no write.
    assert.equal(value('snippetd_snippet_writes_total{action="create"}'), 1);
    assert.equal(value('snippetd_snippet_writes_total{action="update"}'), 1);
    assert.equal(value('snippetd_snippet_writes_total{action="delete"}'), 1);
    assert.ok(value('snippetd_db_query_duration_seconds_count{statement="select",outcome="ok"}')! > 0);
    assert.ok(value('snippetd_db_query_duration_seconds_count{statement="insert",outcome="ok"}')! > 0);
    assert.ok(value('snippetd_db_query_duration_seconds_sum{statement="select",outcome="ok"}')! > 0);
    // The second read of the snippet found the token and the project in the read cache.
    assert.ok(value('snippetd_cache_requests_total{cache="read",result="hit"}')! > 0);
    assert.ok(value('snippetd_cache_requests_total{cache="read",result="miss"}')! > 0);
    assert.ok(value('snippetd_cache_requests_total{cache="git_object",result="miss"}')! > 0);
    assert.ok(value('snippetd_cache_requests_total{cache="git_object",result="hit"}')! > 0);
    // Counted from when the app was made; the kernel accounts CPU time in ticks, so a short test may see 0.
    assert.ok(value('snippetd_process_cpu_user_seconds_total')! >= 0);
    assert.ok(value('snippetd_process_resident_memory_bytes')! > 0);
    assert.ok(lines.includes('# TYPE snippetd_http_request_duration_seconds histogram'));
  });
});

describe('the monitoring allow-list setting', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ monitoringAllowlist: ['10.0.0.0/8', '192.0.2.1'] });
  });
  after(() => t.close());

  it('admits exactly its addresses and ranges (IPv4 clients of a dual-stack socket too), loopback no longer', async () => {
    const status = async (remoteAddress: string) =>
      (await t.request({ method: 'GET', url: '/-/liveness', remoteAddress, token: null })).statusCode;
    assert.equal(await status('10.1.2.3'), 200);
    assert.equal(await status('::ffff:10.1.2.3'), 200);
    assert.equal(await status('192.0.2.1'), 200);
    assert.equal(await status('192.0.2.2'), 404);
    assert.equal(await status('11.0.0.1'), 404);
    assert.equal(await status('127.0.0.1'), 404);
  });
});

describe('X-Request-Id', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('is taken from the client when well-formed and always returned, on every kind of answer', async () => {
    const project = await t.ok('POST', '/projects', ROOT_TOKEN, { name: 'rid', visibility: 'public' }, 201);
    const urls = [
      '/api/v4/version', // a route
      '/api/v4/nothing-here', // 404
      `/api/v4/projects/${project.id}/templates/licenses`, // a prepared answer, written past Fastify
      '/api/v4/projects/%E0%A4%A', // a URL Fastify refuses before routing
      '/-/health',
    ];
    for (const url of urls) {
      const given = await t.request({ method: 'GET', url, headers: { 'x-request-id': 'trace-1.2_3' } });
      assert.equal(given.headers['x-request-id'], 'trace-1.2_3', url);
      const own = await t.request({ method: 'GET', url });
      assert.match(String(own.headers['x-request-id']), /^[0-9a-f-]{36}$/, url);
    }
  });

  it('is replaced when malformed', async () => {
    for (const bad of ['has space', 'a'.repeat(129), 'semi;colon', '']) {
      const res = await t.request({ method: 'GET', url: '/api/v4/version', headers: { 'x-request-id': bad } });
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, bad);
    }
    const longest = 'a'.repeat(128);
    const res = await t.request({ method: 'GET', url: '/api/v4/version', headers: { 'x-request-id': longest } });
    assert.equal(res.headers['x-request-id'], longest);
  });
});
