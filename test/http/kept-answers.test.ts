// Template and snippet answers are kept whole per caller and URL (src/http/kept-answers.ts). A kept answer stands for
// the project lookup, the permission check and the template search, never for parameter checks: these
// run on every request, before the kept answer is looked up.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { awayFromMinuteEnd, createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

describe('kept template answers', () => {
  let t: TestApp;
  let id: number;

  before(async () => {
    t = await createTestApp();
    id = (await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'kept', visibility: 'public' }, 201)).id;
  });
  after(() => t.close());

  /** Asks twice, so that the second answer is the kept one. */
  const keptTwice = async (url: string) => {
    const first = await t.api('GET', url, null);
    assert.equal(first.statusCode, 200, `${url}: ${first.body}`);
    const second = await t.api('GET', url, null);
    assert.equal(second.body, first.body, url);
    return first.body;
  };

  it('an invalid parameter is 400 even when the answer without it is kept', async () => {
    const cases: [kept: string, invalid: string, error: string][] = [
      [`/projects/${id}/templates/licenses/mit`, '?fullname[]=Jane', 'fullname is invalid'],
      [
        `/projects/${id}/templates/licenses/mit`,
        '?source_template_project_id=abc',
        'source_template_project_id is invalid',
      ],
      [`/projects/${id}/templates/dockerfiles/Node`, '?project[a]=b', 'project is invalid'],
      [`/projects/${id}/templates/gitignores`, '?per_page=0', 'per_page has a value not allowed'],
      [`/projects/${id}/templates/gitignores`, '?page=abc', 'page is invalid'],
      ['/templates/licenses/mit', '?fullname[]=Jane', 'fullname is invalid'],
      ['/templates/gitignores', '?per_page=0', 'per_page has a value not allowed'],
    ];
    for (const [url, invalid, error] of cases) {
      const body = await keptTwice(url);
      const refused = await t.api('GET', `${url}${invalid}`, null);
      assert.equal(refused.statusCode, 400, `${url}${invalid}: ${refused.body}`);
      assert.deepEqual(refused.json, { error }, `${url}${invalid}`);
      assert.equal((await t.api('GET', url, null)).body, body, `${url} is still answered from what was kept`);
    }
  });

  it('a traversal in the name is 400 whatever was kept for other names', async () => {
    await keptTwice(`/projects/${id}/templates/gitignores/Ruby`);
    const res = await t.api('GET', `/projects/${id}/templates/gitignores/%2e%2e%2fRuby`, null);
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json, { error: 'name should be a valid file path' });
  });

  it("a kept answer is the caller's own: another caller's permission is checked again", async () => {
    const priv = (await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'kept-private', visibility: 'private' }, 201)).id;
    const url = `/projects/${priv}/templates/dockerfiles/Node`;
    await t.ok('GET', url, ROOT_TOKEN, undefined, 200);
    await t.ok('GET', url, ROOT_TOKEN, undefined, 200);
    assert.deepEqual(await t.ok('GET', url, null, undefined, 404), { message: '404 Project Not Found' });
  });
});

// A snippet's answers are kept too (a snippet, its lists, its raw files): whatever changes what they show, by
// this node's API or behind it (another node, the CLI), is what the next answer shows (a push through
// another worker: test/process/workers.test.ts).
describe('kept snippet answers', () => {
  let t: TestApp;
  let projectId: number;
  let personal: { id: number; title: string };
  let inProject: { id: number };
  let other: { id: number; username: string; token: string };

  before(async () => {
    t = await createTestApp();
    projectId = (await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'kept-snippets', visibility: 'public' }, 201)).id;
    personal = await t.ok(
      'POST',
      '/snippets',
      ROOT_TOKEN,
      { title: 'first', visibility: 'public', files: [{ file_path: 'a.txt', content: 'one\n' }] },
      201,
    );
    inProject = await t.ok(
      'POST',
      `/projects/${projectId}/snippets`,
      ROOT_TOKEN,
      { title: 'in project', visibility: 'public', files: [{ file_path: 'a.txt', content: 'project one\n' }] },
      201,
    );
    other = await t.user('kept-other');
  });
  after(() => t.close());

  const urls = () => ({
    snippet: `/snippets/${personal.id}`,
    mine: '/snippets?per_page=5',
    all: '/snippets/all',
    public: '/snippets/public',
    raw: `/snippets/${personal.id}/raw`,
    fileRaw: `/snippets/${personal.id}/files/main/a.txt/raw`,
    projectSnippet: `/projects/${projectId}/snippets/${inProject.id}`,
    projectList: `/projects/${projectId}/snippets`,
    projectRaw: `/projects/${projectId}/snippets/${inProject.id}/raw`,
  });

  /** Every URL asked twice as root, so that the second answer is the kept one; the answers by name. */
  const askAll = async () => {
    const answers: Record<string, { body: string; headers: Record<string, unknown> }> = {};
    for (const [name, url] of Object.entries(urls())) {
      const first = await t.api('GET', url, ROOT_TOKEN);
      assert.equal(first.statusCode, 200, `${url}: ${first.body}`);
      const second = await t.api('GET', url, ROOT_TOKEN);
      assert.equal(second.statusCode, 200, url);
      assert.equal(second.body, first.body, url);
      const { 'x-request-id': _a, date: _b, ...headers } = first.headers;
      const { 'x-request-id': _c, date: _d, ...again } = second.headers;
      assert.deepEqual(again, headers, url);
      answers[name] = { body: first.body, headers };
    }
    return answers;
  };

  it('an API write: every answer that shows it changes at once', async () => {
    const before = await askAll();
    const updated = await t.ok(
      'PUT',
      `/snippets/${personal.id}`,
      ROOT_TOKEN,
      { title: 'second', files: [{ action: 'update', file_path: 'a.txt', content: 'two\n' }] },
      200,
    );
    const after = await askAll();
    assert.deepEqual(JSON.parse(after.snippet.body), updated);
    assert.equal(after.raw.body, 'two\n');
    assert.equal(after.fileRaw.body, 'two\n');
    for (const list of ['mine', 'all', 'public'])
      assert.equal(JSON.parse(after[list].body).find((s: { id: number }) => s.id === personal.id).title, 'second');
    // The project's snippet did not change, and neither did its answers.
    for (const name of ['projectSnippet', 'projectList', 'projectRaw'])
      assert.equal(after[name].body, before[name].body, name);
    personal = updated;
  });

  it('a change made behind the API (another node, the CLI) to a snippet or its author', async () => {
    await askAll();
    const db = t.app.store.kysely;
    await db.updateTable('snippets').set({ title: 'from elsewhere' }).where('id', '=', inProject.id).execute();
    let after = await askAll();
    assert.equal(JSON.parse(after.projectSnippet.body).title, 'from elsewhere');
    assert.equal(JSON.parse(after.projectList.body)[0].title, 'from elsewhere');

    await db.updateTable('users').set({ name: 'Renamed Root' }).where('username', '=', 'root').execute();
    after = await askAll();
    assert.equal(JSON.parse(after.snippet.body).author.name, 'Renamed Root');
  });

  it("a kept answer is its caller's own, and a snippet made private is hidden at once", async () => {
    const { id } = await t.ok(
      'POST',
      '/snippets',
      ROOT_TOKEN,
      { title: 'soon private', visibility: 'public', files: [{ file_path: 'p.txt', content: 'p\n' }] },
      201,
    );
    for (const token of [ROOT_TOKEN, other.token, null]) {
      await t.ok('GET', `/snippets/${id}`, token, undefined, 200);
      await t.ok('GET', `/snippets/${id}`, token, undefined, 200);
      await t.expect('GET', `/snippets/${id}/raw`, token, undefined, 200);
      await t.expect('GET', `/snippets/${id}/raw`, token, undefined, 200);
    }
    const othersList = await t.ok('GET', '/snippets/public', other.token, undefined, 200);
    assert.ok(othersList.some((s: { id: number }) => s.id === id));
    await t.ok('PUT', `/snippets/${id}`, ROOT_TOKEN, { visibility: 'private' }, 200);
    for (const token of [other.token, null]) {
      await t.fails('GET', `/snippets/${id}`, token, undefined, 404, { message: '404 Snippet Not Found' });
      await t.fails('GET', `/snippets/${id}/raw`, token, undefined, 404, { message: '404 Snippet Not Found' });
    }
    const after = await t.ok('GET', '/snippets/public', other.token, undefined, 200);
    assert.ok(!after.some((s: { id: number }) => s.id === id));
    await t.ok('GET', `/snippets/${id}`, ROOT_TOKEN, undefined, 200);
  });

  it('HEAD of a kept answer: the same headers, no body', async () => {
    const answers = await askAll();
    for (const [name, url] of Object.entries(urls())) {
      const head = await t.api('HEAD', url, ROOT_TOKEN);
      assert.equal(head.statusCode, 200, url);
      assert.equal(head.body, '', url);
      const { 'x-request-id': _a, date: _b, ...headers } = head.headers;
      assert.deepEqual(headers, answers[name].headers, url);
    }
  });

  it('asked again, a kept answer runs no query', async () => {
    /** SELECTs run through Kysely so far (the epoch's read runs beside it and is not counted). */
    const selects = async () => {
      const res = await t.request({ method: 'GET', url: '/-/metrics', token: null });
      const line = res.body
        .split('\n')
        .find((l) => l.startsWith('snippetd_db_query_duration_seconds_count{statement="select",outcome="ok"} '));
      return Number(line?.split(' ')[1] ?? 0);
    };
    for (const url of Object.values(urls())) {
      await t.api('GET', url, ROOT_TOKEN);
      const before = await selects();
      const again = await t.api('GET', url, ROOT_TOKEN);
      assert.equal(again.statusCode, 200, url);
      assert.equal((await selects()) - before, 0, url);
    }
  });

  it('a kept raw answer is counted against the raw limit as a read one is', async () => {
    await t.ok('PUT', '/application/settings', ROOT_TOKEN, { raw_blob_request_limit: 2 }, 200);
    await awayFromMinuteEnd();
    // A file no other test read: its count starts at 0.
    const { id } = await t.ok(
      'POST',
      `/projects/${projectId}/snippets`,
      ROOT_TOKEN,
      { title: 'limited', visibility: 'public', files: [{ file_path: 'l.txt', content: 'l\n' }] },
      201,
    );
    const url = `/projects/${projectId}/snippets/${id}/files/main/l.txt/raw`;
    await t.expect('GET', url, ROOT_TOKEN, undefined, 200);
    await t.expect('GET', url, ROOT_TOKEN, undefined, 200);
    await t.fails('GET', url, ROOT_TOKEN, undefined, 429, {
      message: { error: 'This endpoint has been requested too many times. Try again later.' },
    });
    await t.ok('PUT', '/application/settings', ROOT_TOKEN, { raw_blob_request_limit: 0 }, 200);
  });
});
