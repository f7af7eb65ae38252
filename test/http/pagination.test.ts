// GitLab's offset pagination (docs/gitlab-compatibility.md#pagination) through GET /api/v4/users: the X-* headers,
// the Link header (prev, next, first, last; query rebuilt from all params, keys sorted), boundaries and the
// page/per_page validation rules.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const EXTERNAL_URL = 'http://gitlab.example.com';

type Res = Awaited<ReturnType<TestApp['request']>>;

function assertPageHeaders(
  res: Res,
  expected: { total?: string; totalPages?: string; perPage: string; page: string; next: string; prev: string },
): void {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'application/json');
  if (expected.total !== undefined) assert.equal(res.headers['x-total'], expected.total);
  if (expected.totalPages !== undefined) assert.equal(res.headers['x-total-pages'], expected.totalPages);
  assert.equal(res.headers['x-per-page'], expected.perPage);
  assert.equal(res.headers['x-page'], expected.page);
  assert.equal(res.headers['x-next-page'], expected.next);
  assert.equal(res.headers['x-prev-page'], expected.prev);
}

/** Builds the expected Link header from [rel, query] pairs. */
const link = (base: string, entries: [string, string][]) =>
  entries.map(([rel, query]) => `<${base}/api/v4/users?${query}>; rel="${rel}"`).join(', ');

describe('offset pagination with SNIPPETD_EXTERNAL_URL', () => {
  let t: TestApp;
  const usernames: string[] = [];
  const list = (query = '') => t.api('GET', `/users${query}`, ROOT_TOKEN);
  const ext = (entries: [string, string][]) => link(EXTERNAL_URL, entries);

  before(async () => {
    t = await createTestApp({ externalUrl: EXTERNAL_URL });
    for (const name of ['u1', 'u2', 'u3', 'u4']) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v4/users',
        payload: { username: name, email: `${name}@example.com`, name },
      });
      assert.equal(res.statusCode, 201, res.body);
      usernames.push(name);
    }
    // 5 users in all (root + 4), listed newest first: u4, u3, u2, u1, root.
  });
  after(() => t.close());

  it('uses the defaults page=1, per_page=20 and shows them in Link', async () => {
    const res = await list();
    assertPageHeaders(res, { total: '5', totalPages: '1', perPage: '20', page: '1', next: '', prev: '' });
    assert.deepEqual(
      res.json.map((u: { username: string }) => u.username),
      ['u4', 'u3', 'u2', 'u1', 'root'],
    );
    assert.equal(
      res.headers.link,
      ext([
        ['first', 'page=1&per_page=20'],
        ['last', 'page=1&per_page=20'],
      ]),
    );
  });

  it('first page: next, first, last', async () => {
    const res = await list('?per_page=2');
    assertPageHeaders(res, { total: '5', totalPages: '3', perPage: '2', page: '1', next: '2', prev: '' });
    assert.deepEqual(
      res.json.map((u: { username: string }) => u.username),
      ['u4', 'u3'],
    );
    assert.equal(
      res.headers.link,
      ext([
        ['next', 'page=2&per_page=2'],
        ['first', 'page=1&per_page=2'],
        ['last', 'page=3&per_page=2'],
      ]),
    );
  });

  it('middle page: prev, next, first, last', async () => {
    const res = await list('?per_page=2&page=2');
    assertPageHeaders(res, { total: '5', totalPages: '3', perPage: '2', page: '2', next: '3', prev: '1' });
    assert.deepEqual(
      res.json.map((u: { username: string }) => u.username),
      ['u2', 'u1'],
    );
    assert.equal(
      res.headers.link,
      ext([
        ['prev', 'page=1&per_page=2'],
        ['next', 'page=3&per_page=2'],
        ['first', 'page=1&per_page=2'],
        ['last', 'page=3&per_page=2'],
      ]),
    );
  });

  it('last page: prev, first, last and an empty X-Next-Page', async () => {
    const res = await list('?page=3&per_page=2');
    assertPageHeaders(res, { total: '5', totalPages: '3', perPage: '2', page: '3', next: '', prev: '2' });
    assert.deepEqual(
      res.json.map((u: { username: string }) => u.username),
      ['root'],
    );
    assert.equal(
      res.headers.link,
      ext([
        ['prev', 'page=2&per_page=2'],
        ['first', 'page=1&per_page=2'],
        ['last', 'page=3&per_page=2'],
      ]),
    );
  });

  it('beyond the last page: [] with the requested X-Page and empty prev/next', async () => {
    const res = await list('?page=9&per_page=2');
    assertPageHeaders(res, { total: '5', totalPages: '3', perPage: '2', page: '9', next: '', prev: '' });
    assert.deepEqual(res.json, []);
    assert.equal(
      res.headers.link,
      ext([
        ['first', 'page=1&per_page=2'],
        ['last', 'page=3&per_page=2'],
      ]),
    );
  });

  it('an empty list has X-Total 0 and X-Total-Pages 1', async () => {
    const res = await list('?username=nobody');
    assertPageHeaders(res, { total: '0', totalPages: '1', perPage: '20', page: '1', next: '', prev: '' });
    assert.deepEqual(res.json, []);
    assert.equal(
      res.headers.link,
      ext([
        ['first', 'page=1&per_page=20&username=nobody'],
        ['last', 'page=1&per_page=20&username=nobody'],
      ]),
    );
  });

  it('rebuilds the Link query from every param the client sent, keys sorted, form-encoded', async () => {
    const res = await list('?zeta=z&per_page=2&alpha=x%2Fy+z&page=2');
    assertPageHeaders(res, { total: '5', totalPages: '3', perPage: '2', page: '2', next: '3', prev: '1' });
    const q = (page: number) => `alpha=x%2Fy+z&page=${page}&per_page=2&zeta=z`;
    assert.equal(
      res.headers.link,
      ext([
        ['prev', q(1)],
        ['next', q(3)],
        ['first', q(1)],
        ['last', q(3)],
      ]),
    );
  });

  it('includes route params such as id in the Link query (form-encoded), keeping the request path', async () => {
    const created = await t.request({ method: 'POST', url: '/api/v4/projects', payload: { name: 'proj' } });
    assert.equal(created.statusCode, 201, created.body);
    const u1 = await t.request({ method: 'GET', url: '/api/v4/users?username=u1' });
    const member = await t.request({
      method: 'POST',
      url: '/api/v4/projects/root%2Fproj/members',
      payload: { user_id: u1.json[0].id, access_level: 30 },
    });
    assert.equal(member.statusCode, 201, member.body);
    const res = await t.request({ method: 'GET', url: '/api/v4/projects/root%2Fproj/members?per_page=1' });
    assertPageHeaders(res, { total: '2', totalPages: '2', perPage: '1', page: '1', next: '2', prev: '' });
    const url = (page: number) =>
      `<${EXTERNAL_URL}/api/v4/projects/root%2Fproj/members?id=root%2Fproj&page=${page}&per_page=1>`;
    assert.equal(res.headers.link, `${url(2)}; rel="next", ${url(1)}; rel="first", ${url(2)}; rel="last"`);
  });

  it('never puts a private_token (or access_token) query parameter into Link', async () => {
    const res = await t.request({
      method: 'GET',
      url: `/api/v4/users?private_token=${ROOT_TOKEN}&per_page=2`,
      token: null,
    });
    assertPageHeaders(res, { total: '5', totalPages: '3', perPage: '2', page: '1', next: '2', prev: '' });
    assert.equal(
      res.headers.link,
      ext([
        ['next', 'page=2&per_page=2'],
        ['first', 'page=1&per_page=2'],
        ['last', 'page=3&per_page=2'],
      ]),
    );
    assert.ok(!String(res.headers.link).includes(ROOT_TOKEN));
    const viaAccess = await t.request({
      method: 'GET',
      url: `/api/v4/users?access_token=${ROOT_TOKEN}&per_page=2`,
      token: null,
    });
    assert.equal(viaAccess.statusCode, 200);
    assert.equal(viaAccess.headers.link, res.headers.link);
  });

  it('caps per_page above 100 at 100', async () => {
    const res = await list('?per_page=1000');
    assertPageHeaders(res, { total: '5', totalPages: '1', perPage: '100', page: '1', next: '', prev: '' });
    assert.equal(res.json.length, 5);
    assert.equal(
      res.headers.link,
      ext([
        ['first', 'page=1&per_page=100'],
        ['last', 'page=1&per_page=100'],
      ]),
    );
  });

  it('falls back to per_page=20 for a negative per_page', async () => {
    const res = await list('?per_page=-5');
    assertPageHeaders(res, { total: '5', totalPages: '1', perPage: '20', page: '1', next: '', prev: '' });
    assert.equal(res.json.length, 5);
  });

  it('treats page=0 and negative pages as page 1', async () => {
    for (const page of ['0', '-3']) {
      const res = await list(`?page=${page}&per_page=2`);
      assertPageHeaders(res, { total: '5', totalPages: '3', perPage: '2', page: '1', next: '2', prev: '' });
      assert.deepEqual(
        res.json.map((u: { username: string }) => u.username),
        ['u4', 'u3'],
      );
    }
  });

  it('refuses per_page=0 with 400 "per_page has a value not allowed"', async () => {
    const res = await list('?per_page=0');
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json, { error: 'per_page has a value not allowed' });
    assert.equal(res.headers['x-page'], undefined);
  });

  it('refuses non-integer page and per_page with 400 "... is invalid"', async () => {
    const page = await list('?page=abc');
    assert.equal(page.statusCode, 400);
    assert.deepEqual(page.json, { error: 'page is invalid' });
    const perPage = await list('?per_page=abc');
    assert.equal(perPage.statusCode, 400);
    assert.deepEqual(perPage.json, { error: 'per_page is invalid' });
  });
});

describe('offset pagination without an external URL', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('builds Link on the request Host', async () => {
    const res = await t.request({
      method: 'GET',
      url: '/api/v4/users?per_page=5',
      headers: { host: 'snippets.test:3000' },
    });
    assertPageHeaders(res, { total: '1', totalPages: '1', perPage: '5', page: '1', next: '', prev: '' });
    assert.equal(
      res.headers.link,
      link('http://snippets.test:3000', [
        ['first', 'page=1&per_page=5'],
        ['last', 'page=1&per_page=5'],
      ]),
    );
  });

  it("a built-in template page asked again answers from that request's host and parameters, never a token", async () => {
    const url = '/api/v4/templates/dockerfiles?per_page=5&page=2&sort=x%20y';
    const all = (await t.request({ method: 'GET', url: '/api/v4/templates/dockerfiles?per_page=100', token: null }))
      .json;
    const lastPage = Math.ceil(all.length / 5);
    assert.ok(lastPage >= 3, `${all.length} dockerfiles`);
    const q = (host: string, page: number) =>
      `http://${host}/api/v4/templates/dockerfiles?page=${page}&per_page=5&sort=x+y`;
    const expectedLink = (host: string) =>
      `<${q(host, 1)}>; rel="prev", <${q(host, 3)}>; rel="next", <${q(host, 1)}>; rel="first", <${q(host, lastPage)}>; rel="last"`;
    for (const [host, query] of [
      ['one.test', ''],
      ['two.test', ''],
      ['one.test', ''],
      ['one.test', `&private_token=${ROOT_TOKEN}`],
      ['one.test', ''],
    ]) {
      const res = await t.request({ method: 'GET', url: url + query, headers: { host }, token: null });
      assertPageHeaders(res, {
        total: String(all.length),
        totalPages: String(lastPage),
        perPage: '5',
        page: '2',
        next: '3',
        prev: '1',
      });
      assert.deepEqual(res.json, all.slice(5, 10), host);
      assert.equal(res.headers.link, expectedLink(host), `${host}${query}`);
    }
  });
});
