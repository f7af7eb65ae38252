// GitLab's rate limits with its settings (issue 17): the raw limits, per project and file and per project
// for anonymous readers, on by default (300 and 800 a minute) and set low here; the API throttles per user
// and per address, off by default; 429 with Retry-After and GitLab's bodies (a throttle's with its RateLimit
// headers); health never limited; and on PostgreSQL one count for every node; the search limits per user and
// per address (30 and 10 a minute); the protected paths throttle (D26), off by default: POSTs to sign-in and
// the like per address, or per user of a token or a session.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { awayFromMinuteEnd, createTestApp, ROOT_TOKEN, signInCookie, TEST_DB, type TestApp } from '../helper.ts';
import { DEFAULT_PROTECTED_PATHS } from '../../src/domain/settings.ts';

const RAW_LIMITED = { message: { error: 'This endpoint has been requested too many times. Try again later.' } };

describe('rate limits', () => {
  let t: TestApp;
  let projectId: number;
  let snippetId: number;
  let userToken: string;
  const settings = (changes: object) => t.ok('PUT', '/application/settings', ROOT_TOKEN, changes, 200);

  before(async () => {
    t = await createTestApp();
    const project = await t.ok(
      'POST',
      '/projects',
      ROOT_TOKEN,
      { name: 'limited', visibility: 'public', initialize_with_readme: true },
      201,
    );
    projectId = project.id;
    const snippet = await t.ok(
      'POST',
      `/projects/${projectId}/snippets`,
      ROOT_TOKEN,
      {
        title: 's',
        visibility: 'public',
        files: [
          { file_path: 'a.txt', content: 'a' },
          { file_path: 'b.txt', content: 'b' },
        ],
      },
      201,
    );
    snippetId = snippet.id;
    userToken = (await t.user('limited')).token;
  });
  // Each test's limited requests fall into one window of a minute.
  beforeEach(() => awayFromMinuteEnd());
  afterEach(() =>
    settings({
      raw_blob_request_limit: 300,
      raw_blob_request_limit_unauthenticated: 800,
      throttle_authenticated_api_enabled: false,
      throttle_unauthenticated_api_enabled: false,
      rate_limiting_response_text: null,
      search_rate_limit: 30,
      search_rate_limit_unauthenticated: 10,
    }),
  );
  after(() => t.close());

  it('GitLab’s defaults: raw limits on, API throttles off, search limits on (30 and 10 a minute)', async () => {
    const s = await t.ok('GET', '/application/settings', ROOT_TOKEN, undefined, 200);
    assert.deepEqual(
      [
        s.raw_blob_request_limit,
        s.raw_blob_request_limit_unauthenticated,
        s.throttle_authenticated_api_enabled,
        s.throttle_authenticated_api_requests_per_period,
        s.throttle_authenticated_api_period_in_seconds,
        s.throttle_unauthenticated_api_enabled,
        s.throttle_unauthenticated_api_requests_per_period,
        s.throttle_unauthenticated_api_period_in_seconds,
        s.rate_limiting_response_text,
        s.search_rate_limit,
        s.search_rate_limit_unauthenticated,
      ],
      [300, 800, false, 7200, 3600, false, 3600, 3600, null, 30, 10],
    );
    await t.fails('PUT', '/application/settings', ROOT_TOKEN, { raw_blob_request_limit: -1 }, 400, {
      message: { raw_blob_request_limit: ['must be greater than or equal to 0'] },
    });
    await t.fails(
      'PUT',
      '/application/settings',
      ROOT_TOKEN,
      { throttle_authenticated_api_period_in_seconds: 0 },
      400,
      {
        message: { throttle_authenticated_api_period_in_seconds: ['must be greater than 0'] },
      },
    );
  });

  it('raw: a limit per project and file; the next request of the minute is 429 with Retry-After', async () => {
    await settings({ raw_blob_request_limit: 3 });
    const a = `/projects/${projectId}/snippets/${snippetId}/files/main/a.txt/raw`;
    for (let i = 0; i < 3; i++) await t.expect('GET', a, ROOT_TOKEN, undefined, 200);
    const refused = await t.fails('GET', a, ROOT_TOKEN, undefined, 429, RAW_LIMITED);
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
    // Another file of the same snippet, and a repository file, have counts of their own.
    await t.expect(
      'GET',
      `/projects/${projectId}/snippets/${snippetId}/files/main/b.txt/raw`,
      ROOT_TOKEN,
      undefined,
      200,
    );
    await t.expect('GET', `/projects/${projectId}/repository/files/README.md/raw`, ROOT_TOKEN, undefined, 200);
    // The snippet's page raw URL is the same file: limited too, as a page.
    const page = await t.request({
      method: 'GET',
      url: `/root/limited/-/snippets/${snippetId}/raw/main/a.txt`,
      token: null,
    });
    assert.equal(page.statusCode, 429);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.ok(Number(page.headers['retry-after']) >= 1);
    assert.match(
      page.body,
      /<h1>Too many requests<\/h1><p>You cannot access the raw file\. Please wait a minute\.<\/p>/,
    );
  });

  it('raw: every spelling of a file counts against its one budget (ref and path, API and web)', async () => {
    // A project of its own: the other tests' counts stay theirs (pages read anonymously count per project).
    const project = await t.ok(
      'POST',
      '/projects',
      ROOT_TOKEN,
      { name: 'spellings', visibility: 'public', initialize_with_readme: true },
      201,
    );
    const { id } = await t.ok(
      'POST',
      `/projects/${project.id}/snippets`,
      ROOT_TOKEN,
      { title: 'spellings', visibility: 'public', files: [{ file_path: 'd/c.txt', content: 'c' }] },
      201,
    );
    const api = `/projects/${project.id}/snippets/${id}/files`;
    const page = `/root/spellings/-/snippets/${id}/raw`;
    const spellings = [
      ['api', `${api}/main/d%2Fc.txt/raw`],
      ['api', `${api}/refs%2Fheads%2Fmain/d%2Fc.txt%2F%2F/raw`],
      ['api', `${api}/refs%2Fheads%2Fmain/d%2F%2Fc.txt/raw`],
      ['api', `${api}/HEAD/d%2Fc.txt/raw`],
      ['page', `${page}/refs%2Fheads%2Fmain/d/c.txt`],
    ];
    const get = ([kind, url]: string[]) =>
      kind === 'api' ? t.api('GET', url, ROOT_TOKEN) : t.request({ method: 'GET', url, token: ROOT_TOKEN });
    await settings({ raw_blob_request_limit: spellings.length });
    // Windows are whole minutes: start far from the next one, so that no count starts over midway.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((done) => setTimeout(done, 60_500 - intoMinute));
    // Each spelling reads the file once (so each is a real way to read it), and that uses the budget up.
    for (const s of spellings) assert.deepEqual([(await get(s)).statusCode, s[1]], [200, s[1]]);
    for (const s of spellings) assert.deepEqual([(await get(s)).statusCode, s[1]], [429, s[1]]);
    // A repository file: its ref and its path spelled another way count as the one file too.
    await settings({ raw_blob_request_limit: 2 });
    const readme = `/projects/${project.id}/repository/files`;
    await t.expect('GET', `${readme}/README.md/raw?ref=main`, ROOT_TOKEN, undefined, 200);
    await t.expect('GET', `${readme}/README.md/raw?ref=refs%2Fheads%2Fmain`, ROOT_TOKEN, undefined, 200);
    await t.fails('GET', `${readme}/README.md/raw`, ROOT_TOKEN, undefined, 429, RAW_LIMITED);
    await t.fails('GET', `${readme}/README.md%2F%2F/raw`, ROOT_TOKEN, undefined, 429, RAW_LIMITED);
  });

  it('raw: files of long paths count one by one, their counts kept by a hash of the path', async () => {
    const long = (last: string) => `d/${'x'.repeat(240)}${last}.txt`;
    const { id } = await t.ok(
      'POST',
      `/projects/${projectId}/snippets`,
      ROOT_TOKEN,
      {
        title: 'long paths',
        visibility: 'public',
        files: [
          { file_path: long('a'), content: 'a' },
          { file_path: long('b'), content: 'b' },
        ],
      },
      201,
    );
    await settings({ raw_blob_request_limit: 2 });
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((done) => setTimeout(done, 60_500 - intoMinute));
    const raw = (last: string) =>
      `/projects/${projectId}/snippets/${id}/files/main/${encodeURIComponent(long(last))}/raw`;
    for (let i = 0; i < 2; i++) await t.expect('GET', raw('a'), ROOT_TOKEN, undefined, 200);
    await t.fails('GET', raw('a'), ROOT_TOKEN, undefined, 429, RAW_LIMITED);
    for (let i = 0; i < 2; i++) await t.expect('GET', raw('b'), ROOT_TOKEN, undefined, 200);
    await t.fails('GET', raw('b'), ROOT_TOKEN, undefined, 429, RAW_LIMITED);
  });

  it('raw: 0 turns the limit off', async () => {
    await settings({ raw_blob_request_limit: 0 });
    for (let i = 0; i < 10; i++)
      await t.expect('GET', `/projects/${projectId}/repository/files/README.md/raw`, ROOT_TOKEN, undefined, 200);
  });

  it('raw: anonymous readers share one count per project; signed-in readers do not use it', async () => {
    await settings({ raw_blob_request_limit: 0, raw_blob_request_limit_unauthenticated: 2 });
    await t.expect('GET', `/projects/${projectId}/snippets/${snippetId}/raw`, null, undefined, 200);
    await t.expect('GET', `/projects/${projectId}/repository/files/README.md/raw`, null, undefined, 200);
    await t.fails(
      'GET',
      `/projects/${projectId}/snippets/${snippetId}/files/main/b.txt/raw`,
      null,
      undefined,
      429,
      RAW_LIMITED,
    );
    await t.expect('GET', `/projects/${projectId}/snippets/${snippetId}/raw`, userToken, undefined, 200);
  });

  it('search: a limit per user over every search endpoint, before the parameters and the project; 0 turns it off', async () => {
    await settings({ search_rate_limit: 3 });
    const search = (url: string, status: number) => t.expect('GET', url, userToken, undefined, status);
    await search('/search?scope=snippet_titles&search=abc', 200);
    await search(`/projects/${projectId}/search?scope=snippet_titles&search=abc`, 200);
    await search('/groups/999999/search?scope=snippet_titles&search=abc', 404);
    // Counted before the parameters are checked and before the project is looked up, as GitLab's `before`.
    await t.fails('GET', '/search?scope=nope', userToken, undefined, 429, RAW_LIMITED);
    await t.fails(
      'GET',
      '/projects/999999/search?scope=snippet_titles&search=abc',
      userToken,
      undefined,
      429,
      RAW_LIMITED,
    );
    const refused = await search('/search?scope=snippet_titles&search=abc', 429);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    // The count is the user's, whatever the search; another user has one of its own; anonymous callers are
    // refused for who they are first.
    await search('/search?scope=snippet_titles&search=xyz', 429);
    await t.expect('GET', '/search?scope=snippet_titles&search=abc', ROOT_TOKEN, undefined, 200);
    await t.expect('GET', '/search?scope=snippet_titles&search=abc', null, undefined, 401);
    await settings({ search_rate_limit: 0 });
    for (let i = 0; i < 5; i++) await search('/search?scope=snippet_titles&search=abc', 200);
  });

  it('search: the search page counts per address without signing in, only when there is a search', async () => {
    await settings({ search_rate_limit_unauthenticated: 2 });
    const page = (url: string) => t.app.inject({ method: 'GET', url });
    assert.equal((await page('/search')).statusCode, 200);
    assert.equal((await page('/search')).statusCode, 200);
    assert.equal((await page('/search')).statusCode, 200);
    assert.equal((await page('/search?search=readme')).statusCode, 200);
    assert.equal((await page('/search?search=readme')).statusCode, 200);
    const refused = await page('/search?search=readme');
    assert.equal(refused.statusCode, 429);
    assert.match(refused.headers['content-type'] as string, /^text\/html/);
    assert.match(refused.body, /requested too many times/);
  });

  it('API throttle per user: 429 with Rack::Attack’s text, Retry-After and GitLab’s RateLimit headers; others go on', async () => {
    await settings({
      throttle_authenticated_api_enabled: true,
      throttle_authenticated_api_requests_per_period: 3,
      throttle_authenticated_api_period_in_seconds: 60,
    });
    for (let i = 0; i < 3; i++) await t.expect('GET', '/user', userToken, undefined, 200);
    const refused = await t.expect('GET', '/user', userToken, undefined, 429);
    assert.equal(refused.body, 'Retry later\n');
    assert.equal(refused.headers['content-type'], 'text/plain; charset=utf-8');
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
    // Gitlab::RackAttack.throttled_response_headers: which throttle, its limit, what it counted, its window's end.
    const reset = Number(refused.headers['ratelimit-reset']);
    assert.ok(Math.abs(reset - (Math.floor(Date.now() / 1000) + retryAfter)) <= 1, `${reset} ${retryAfter}`);
    assert.deepEqual(
      [
        refused.headers['ratelimit-name'],
        refused.headers['ratelimit-limit'],
        refused.headers['ratelimit-observed'],
        refused.headers['ratelimit-remaining'],
        refused.headers['ratelimit-resettime'],
      ],
      ['throttle_authenticated_api', '3', '4', '0', new Date(reset * 1000).toUTCString()],
    );
    await t.expect('GET', '/templates/licenses/mit', null, undefined, 200);
    await t.expect('GET', '/application/settings', ROOT_TOKEN, undefined, 200);
  });

  it('API throttle: a change applies to the very next write, with no read between', async () => {
    // Users of its own: the requests the others made this minute are counted already.
    const { token } = await t.user('throttled-writer');
    const admin = (await t.user('throttling-admin', { admin: true })).token;
    const create = (n: number, status: number) =>
      t.expect('POST', '/projects', token, { path: `throttled-${n}` }, status);
    const change = (changes: object) => t.ok('PUT', '/application/settings', admin, changes, 200);
    await change({
      throttle_authenticated_api_enabled: true,
      throttle_authenticated_api_requests_per_period: 2,
      throttle_authenticated_api_period_in_seconds: 60,
    });
    await create(1, 201);
    await create(2, 201);
    await create(3, 429);
    await change({ throttle_authenticated_api_enabled: false });
    await create(4, 201);
  });

  it('API throttle per address, with the configured text; health and metrics are never limited', async () => {
    await settings({
      throttle_unauthenticated_api_enabled: true,
      throttle_unauthenticated_api_requests_per_period: 2,
      throttle_unauthenticated_api_period_in_seconds: 60,
      rate_limiting_response_text: 'Slow down',
    });
    await t.expect('GET', '/templates/licenses/mit', null, undefined, 200);
    await t.expect('GET', '/templates/licenses/mit', null, undefined, 200);
    const refused = await t.expect('GET', '/templates/licenses/mit', null, undefined, 429);
    assert.equal(refused.body, 'Slow down\n');
    assert.deepEqual(
      [refused.headers['ratelimit-name'], refused.headers['ratelimit-limit'], refused.headers['ratelimit-observed']],
      ['throttle_unauthenticated_api', '2', '3'],
    );
    for (const url of ['/-/liveness', '/-/readiness', '/-/health', '/-/metrics']) {
      const res = await t.request({ method: 'GET', url, token: null });
      assert.equal(res.statusCode, 200, url);
    }
  });
});

describe('protected paths throttle', () => {
  // GitLab's protected paths (docs/gitlab-compatibility.md#d26): POSTs to sign-in and the like,
  // counted per address, or per user when a token or session signs one in; off by default, 10 a minute.
  let t: TestApp;
  let alice: { id: number; token: string };
  let aliceSession: string;
  const settings = (changes: object) => t.ok('PUT', '/application/settings', ROOT_TOKEN, changes, 200);
  const on = (changes: object = {}) => settings({ throttle_protected_paths_enabled: true, ...changes });
  let addresses = 0;
  /** An address no other test sent from: its count starts at nothing. */
  const newAddress = () => `10.93.0.${++addresses}`;

  /** The sign-in form's POST from `address`, as a browser sends it (the form's token and its cookie). */
  async function signIn(address: string, login = 'nobody', cookie = '') {
    const form = await t.request({ method: 'GET', url: '/users/sign_in', token: null, remoteAddress: address });
    assert.equal(form.statusCode, 200, 'the form itself is a GET: never counted');
    const token = /name="authenticity_token" value="([^"]+)"/.exec(form.body)![1];
    return t.request({
      method: 'POST',
      url: '/users/sign_in',
      token: null,
      remoteAddress: address,
      headers: {
        cookie: `_snippetd_sign_in=${token}${cookie ? `; ${cookie}` : ''}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({ authenticity_token: token, login, password: 'wrong password' }).toString(),
    });
  }
  const post = (url: string, address: string, options: { token?: string | null; cookie?: string } = {}) =>
    t.request({
      method: 'POST',
      url,
      token: options.token ?? null,
      remoteAddress: address,
      ...(options.cookie && { headers: { cookie: options.cookie } }),
    });

  /** GitLab's throttled answer: Rack::Attack's text and Gitlab::RackAttack's headers. */
  function assertThrottled(
    res: Awaited<ReturnType<TestApp['request']>>,
    name: string,
    limit: number,
    observed: number,
    { text = 'Retry later', period = 60 } = {},
  ) {
    assert.equal(res.statusCode, 429, res.body);
    assert.equal(res.body, `${text}\n`);
    assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
    const retryAfter = Number(res.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= period, String(retryAfter));
    const reset = Number(res.headers['ratelimit-reset']);
    assert.ok(Math.abs(reset - (Math.floor(Date.now() / 1000) + retryAfter)) <= 1, `${reset} ${retryAfter}`);
    assert.equal(reset % period, 0, 'a fixed window ends on a whole period since the epoch');
    assert.deepEqual(
      [
        res.headers['ratelimit-name'],
        res.headers['ratelimit-limit'],
        res.headers['ratelimit-observed'],
        res.headers['ratelimit-remaining'],
        res.headers['ratelimit-resettime'],
      ],
      [name, String(limit), String(observed), '0', new Date(reset * 1000).toUTCString()],
    );
  }

  before(async () => {
    t = await createTestApp();
    const password = 'correct horse battery';
    const created = await t.ok(
      'POST',
      '/users',
      ROOT_TOKEN,
      { username: 'alice', email: 'alice@example.com', name: 'Alice', password },
      201,
    );
    const { token } = await t.ok(
      'POST',
      `/users/${created.id}/personal_access_tokens`,
      ROOT_TOKEN,
      { name: 'alice', scopes: ['api'] },
      201,
    );
    alice = { id: created.id, token };
    aliceSession = await signInCookie(t, 'alice', password);
  });
  beforeEach(() => awayFromMinuteEnd());
  afterEach(() =>
    settings({
      throttle_protected_paths_enabled: false,
      throttle_protected_paths_requests_per_period: 10,
      throttle_protected_paths_period_in_seconds: 60,
      protected_paths_raw: DEFAULT_PROTECTED_PATHS.join('\n'),
      rate_limiting_response_text: null,
    }),
  );
  after(() => t.close());

  it('GitLab’s defaults: off, 10 requests a minute, GitLab’s paths, read and written as protected_paths_raw', async () => {
    const s = await t.ok('GET', '/application/settings', ROOT_TOKEN, undefined, 200);
    assert.deepEqual(
      [
        s.throttle_protected_paths_enabled,
        s.throttle_protected_paths_requests_per_period,
        s.throttle_protected_paths_period_in_seconds,
        s.protected_paths_raw,
        s.protected_paths,
      ],
      [
        false,
        10,
        60,
        '/users/password\n/users/sign_in\n/api/v3/session.json\n/api/v3/session\n/api/v4/session.json\n' +
          '/api/v4/session\n/users\n/users/confirmation\n/unsubscribes/\n/import/github/personal_access_token\n' +
          '/admin/session',
        undefined,
      ],
    );
    // GitLab's strings_to_array: line breaks, commas, semicolons and spaces part entries; each comes once.
    const changed = await settings({ protected_paths_raw: ' /a, /b;/c\r\n/d /a\n\n' });
    assert.equal(changed.protected_paths_raw, '/a\n/b\n/c\n/d');
    assert.equal((await settings({ protected_paths_raw: null })).protected_paths_raw, '');
    await t.fails(
      'PUT',
      '/application/settings',
      ROOT_TOKEN,
      { protected_paths_raw: Array.from({ length: 101 }, (_, i) => `/p${i}`).join('\n') },
      400,
      { message: { protected_paths: ['is too long (maximum is 100 entries)'] } },
    );
    await t.fails('PUT', '/application/settings', ROOT_TOKEN, { protected_paths_raw: ['/a'] }, 400, {
      error: 'protected_paths_raw is invalid',
    });
    await t.fails(
      'PUT',
      '/application/settings',
      ROOT_TOKEN,
      { throttle_protected_paths_requests_per_period: 0, throttle_protected_paths_period_in_seconds: -1 },
      400,
      {
        message: {
          throttle_protected_paths_requests_per_period: ['must be greater than 0'],
          throttle_protected_paths_period_in_seconds: ['must be greater than 0'],
        },
      },
    );
    await t.fails('PUT', '/application/settings', ROOT_TOKEN, { throttle_protected_paths_enabled: 'maybe' }, 400, {
      error: 'throttle_protected_paths_enabled is invalid',
    });
  });

  it('a list of megabytes is read in one pass: a run of separators once, and no further than one entry too many', async () => {
    // GitLab's pattern, /\s*[,;]\s*|\s/, would read a run of 2 MB of spaces again from each of its characters.
    const started = Date.now();
    const blank = await settings({ protected_paths_raw: `/a${' '.repeat(2 * 1024 * 1024)}/b` });
    assert.equal(blank.protected_paths_raw, '/a\n/b');
    // 200,000 entries: refused as more than 100, each after the 101st never made a string.
    const many = await t.api('PUT', '/application/settings', ROOT_TOKEN, {
      protected_paths_raw: Array.from({ length: 200_000 }, (_, i) => `/p${i}`).join(','),
    });
    assert.deepEqual(
      [many.statusCode, many.json],
      [400, { message: { protected_paths: ['is too long (maximum is 100 entries)'] } }],
    );
    await t.fails('PUT', '/application/settings', ROOT_TOKEN, { protected_paths_raw: `/${'x'.repeat(255)}` }, 400, {
      message: { protected_paths: ['is too long (maximum is 255 characters)'] },
    });
    assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
  });

  it('the 11th sign-in POST of a minute from one address is 429 with GitLab’s text and headers; other addresses, GETs and other paths go on', async () => {
    await on();
    const address = newAddress();
    for (let i = 1; i <= 10; i++) assert.equal((await signIn(address)).statusCode, 401, `sign-in ${i}`);
    assertThrottled(await signIn(address), 'throttle_unauthenticated_protected_paths', 10, 11);
    // Every protected path counts against the address's one budget, whatever serves it (here nothing: GitLab's
    // API session path, and the provider's button without a provider, are 404 without the throttle).
    assertThrottled(await post('/api/v4/session', address), 'throttle_unauthenticated_protected_paths', 10, 12);
    assertThrottled(
      await post('/users/auth/openid_connect', address),
      'throttle_unauthenticated_protected_paths',
      10,
      13,
    );
    // Another address has a count of its own; GETs and other paths are not counted.
    assert.equal((await signIn(newAddress())).statusCode, 401);
    assert.equal(
      (await t.request({ method: 'GET', url: '/users/sign_in', token: null, remoteAddress: address })).statusCode,
      200,
    );
    assert.equal((await post('/api/v4/projects', address)).statusCode, 401);
    assert.equal((await post('/-/snippets/new', address)).statusCode, 404);
    // Turned off, the same address is let through at once.
    await settings({ throttle_protected_paths_enabled: false });
    assert.equal((await signIn(address)).statusCode, 401);
  });

  it('off, sign-ins from one address are never throttled', async () => {
    const address = newAddress();
    for (let i = 1; i <= 12; i++) assert.equal((await signIn(address)).statusCode, 401, `sign-in ${i}`);
    assert.equal((await signIn(address, 'alice')).statusCode, 401);
  });

  it('the limit, the period, the paths and the text are the settings’; a path counts by its start', async () => {
    await on({
      throttle_protected_paths_requests_per_period: 2,
      throttle_protected_paths_period_in_seconds: 120,
      protected_paths_raw: '/users/sign_in\n/explore',
      rate_limiting_response_text: 'Slow down',
    });
    const address = newAddress();
    assert.equal((await signIn(address)).statusCode, 401);
    // `/explore` covers `/explore/snippets` (and `/explorer`): GitLab matches \A<path>.
    assert.equal((await post('/explore/snippets', address)).statusCode, 404);
    // 2 in 120 s is RateLimit-Limit 1 a minute, rounded up.
    const refused = await post('/explorer', address);
    assertThrottled(refused, 'throttle_unauthenticated_protected_paths', 1, 3, { text: 'Slow down', period: 120 });
    // `/users` is no longer protected; the sign-in form still is, however its path is spelled.
    assert.equal((await post('/users/sign_out', address)).statusCode, 303);
    assert.equal((await post('/users/%73ign_in', address)).statusCode, 429);
  });

  it('health and metrics are never counted, even under a protected path', async () => {
    await on({ throttle_protected_paths_requests_per_period: 1, protected_paths_raw: '/-/' });
    const address = newAddress();
    for (const url of ['/-/health', '/-/liveness', '/-/readiness', '/-/metrics', '/-/health'])
      assert.notEqual((await post(url, address)).statusCode, 429, url);
    assert.equal((await post('/-/snippets/new', address)).statusCode, 404);
    assert.equal((await post('/-/snippets/new', address)).statusCode, 429);
  });

  it('a token’s user is counted, not its address, through the API; a session’s through the pages', async () => {
    await on({ throttle_protected_paths_requests_per_period: 2 });
    const address = newAddress();
    const bob = await t.user('bob');
    for (let i = 0; i < 2; i++)
      assert.equal((await post('/api/v4/session', address, { token: alice.token })).statusCode, 404);
    assertThrottled(
      await post('/api/v4/session', address, { token: alice.token }),
      'throttle_authenticated_protected_paths_api',
      2,
      3,
    );
    // Another user, and nobody, from the same address: counts of their own.
    assert.equal((await post('/api/v4/session', address, { token: bob.token })).statusCode, 404);
    assert.equal((await post('/api/v4/session', address)).statusCode, 404);
    // A token that signs nobody in is nobody's: the address's count.
    assert.equal((await post('/api/v4/session', address, { token: 'not-a-token-0123456789' })).statusCode, 401);
    assertThrottled(
      await post('/api/v4/session', address, { token: 'not-a-token-0123456789' }),
      'throttle_unauthenticated_protected_paths',
      2,
      3,
    );
    // Alice's session in the pages: the pages' count of hers, apart from the API's.
    const other = newAddress();
    assert.equal((await signIn(other, 'alice', aliceSession)).statusCode, 401);
    assert.equal((await signIn(other, 'alice', aliceSession)).statusCode, 401);
    assertThrottled(await signIn(other, 'alice', aliceSession), 'throttle_authenticated_protected_paths_web', 2, 3);
    assert.equal((await signIn(other)).statusCode, 401, 'nobody from the same address');
  });
});

describe('rate limits across nodes', {
  skip: TEST_DB !== 'postgres' && 'nodes share a database on PostgreSQL only',
}, () => {
  let one: TestApp;
  let two: TestApp;
  before(async () => {
    one = await createTestApp();
    two = await createTestApp({ databaseUrl: one.config.databaseUrl });
  });
  after(async () => {
    await two.close();
    await one.close();
  });

  it('applies a throttle changed on one node to the other’s next write, with no read between', async () => {
    // Run first, by users of its own: the one below leaves root's requests of this minute counted.
    await awayFromMinuteEnd();
    const user = await one.user('throttled-across');
    const admin = (await one.user('throttling-admin-across', { admin: true })).token;
    const create = (node: TestApp, n: number, status: number) =>
      node.expect('POST', '/projects', user.token, { path: `across-${n}` }, status);
    // Node two has read the settings (throttles off) and then answers writes alone.
    await two.expect('GET', '/user', user.token, undefined, 200);
    for (let n = 1; n <= 3; n++) await create(two, n, 201);
    await one.ok(
      'PUT',
      '/application/settings',
      admin,
      {
        throttle_authenticated_api_enabled: true,
        throttle_authenticated_api_requests_per_period: 1,
        throttle_authenticated_api_period_in_seconds: 60,
      },
      200,
    );
    await create(two, 4, 201);
    await create(two, 5, 429);
    await one.ok('PUT', '/application/settings', admin, { throttle_authenticated_api_enabled: false }, 200);
    await create(two, 6, 201);
  });

  it('counts the protected paths’ POSTs of every node against one limit', async () => {
    await awayFromMinuteEnd();
    await one.ok(
      'PUT',
      '/application/settings',
      ROOT_TOKEN,
      { throttle_protected_paths_enabled: true, throttle_protected_paths_requests_per_period: 3 },
      200,
    );
    const post = (node: TestApp) =>
      node.request({ method: 'POST', url: '/api/v4/session', token: null, remoteAddress: '10.93.1.1' });
    assert.equal((await post(one)).statusCode, 404);
    assert.equal((await post(two)).statusCode, 404);
    assert.equal((await post(one)).statusCode, 404);
    const refused = await post(two);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['ratelimit-observed'], '4');
    await two.ok('PUT', '/application/settings', ROOT_TOKEN, { throttle_protected_paths_enabled: false }, 200);
    assert.equal((await post(one)).statusCode, 404);
  });

  it('counts every node’s requests against one limit', async () => {
    await one.ok(
      'PUT',
      '/application/settings',
      ROOT_TOKEN,
      {
        throttle_authenticated_api_enabled: true,
        throttle_authenticated_api_requests_per_period: 3,
        throttle_authenticated_api_period_in_seconds: 60,
      },
      200,
    );
    // The PUT ran before the throttle was on, so it is not counted: three GETs fill the limit.
    await one.expect('GET', '/user', ROOT_TOKEN, undefined, 200);
    await two.expect('GET', '/user', ROOT_TOKEN, undefined, 200);
    await one.expect('GET', '/user', ROOT_TOKEN, undefined, 200);
    await two.expect('GET', '/user', ROOT_TOKEN, undefined, 429);
  });
});
