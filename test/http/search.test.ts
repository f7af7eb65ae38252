// GitLab's search API for snippets (lib/api/search.rb, scope snippet_titles; docs/gitlab-compatibility.md#search):
// who may search, the parameters, which snippets a term finds for every kind of viewer (personal and project
// snippets at every level, in projects of every visibility and snippets feature level), GitLab's entity and
// pagination headers, and a write or delete seen by the next search. Which snippets a viewer may find comes
// from the small oracle below, written from GitLab's SnippetsFinder and policies, independent of src/domain.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

type Level = 'private' | 'internal' | 'public';
type Feature = 'enabled' | 'private' | 'disabled';
const LEVELS: Level[] = ['private', 'internal', 'public'];

interface Viewer {
  name: string;
  token: string;
  id: number;
  admin?: boolean;
  external?: boolean;
  /** Guest of every project below. */
  member?: boolean;
}
interface ProjectCase {
  visibility: Level;
  feature: Feature;
}
interface Made {
  id: number;
  title: string;
  level: Level;
  authorId: number;
  project: ProjectCase | null;
}

const PROJECTS: ProjectCase[] = [
  { visibility: 'private', feature: 'enabled' },
  { visibility: 'internal', feature: 'enabled' },
  { visibility: 'public', feature: 'enabled' },
  { visibility: 'internal', feature: 'private' },
  { visibility: 'public', feature: 'private' },
  { visibility: 'public', feature: 'disabled' },
];

/** GitLab's SnippetsFinder (all snippets) for one viewer, written out: may the viewer find this snippet? */
function findable(v: Viewer, s: Made): boolean {
  // Nobody may read the snippets of a project whose snippets feature is disabled, administrators included.
  if (s.project?.feature === 'disabled') return false;
  if (v.admin) return true;
  const seesLevel = (level: Level) => level === 'public' || (level === 'internal' && !v.external);
  if (s.project === null) return s.authorId === v.id || seesLevel(s.level);
  if (v.member) return true;
  return seesLevel(s.project.visibility) && s.project.feature === 'enabled' && seesLevel(s.level);
}

const UNAUTHORIZED = { message: '401 Unauthorized' };
const files = (content = 'body\n', file_path = 'a.txt') => [{ file_path, content }];

describe('search API: snippet_titles', () => {
  let t: TestApp;
  const viewers: Viewer[] = [];
  const made: Made[] = [];
  let alice: { id: number; token: string };
  let owner: { id: number; token: string };

  const search = (token: string | null, query: Record<string, string | number>) =>
    t.api('GET', `/search?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`, token);
  const titlesFound = async (v: Viewer, term: string) => {
    const res = await search(v.token, { scope: 'snippet_titles', search: term, per_page: 100 });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json as { title: string }[]).map((s) => s.title).sort();
  };

  before(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    owner = await t.user('owner');
    const bob = await t.user('bob');
    const ext = await t.user('ext', { external: true });
    const guest = await t.user('guest');
    const boss = await t.user('boss', { admin: true });
    viewers.push(
      { name: 'author', ...alice },
      { name: 'signed-in non-member', ...bob },
      { name: 'external user', ...ext, external: true },
      { name: 'guest of every project', ...guest, member: true },
      { name: 'admin', ...boss, admin: true },
    );
    for (const level of LEVELS) {
      const title = `needle personal ${level}`;
      const s = await t.ok('POST', '/snippets', alice.token, { title, visibility: level, files: files() }, 201);
      made.push({ id: s.id, title, level, authorId: alice.id, project: null });
    }
    let n = 0;
    for (const p of PROJECTS) {
      const project = await t.must('POST', `/projects/user/${owner.id}`, ROOT_TOKEN, {
        name: `p${n++}`,
        visibility: p.visibility,
      });
      await t.must('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: guest.id, access_level: 10 });
      for (const level of LEVELS) {
        const title = `needle ${p.visibility} project, snippets ${p.feature}, ${level}`;
        const s = await t.ok(
          'POST',
          `/projects/${project.id}/snippets`,
          owner.token,
          { title, visibility: level, files: files() },
          201,
        );
        made.push({ id: s.id, title, level, authorId: owner.id, project: p });
      }
      // Set after the snippets are made: a disabled feature refuses writes.
      await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { snippets_access_level: p.feature });
    }
    // Found by none of the searches for "needle".
    const hay = await t.ok(
      'POST',
      '/snippets',
      alice.token,
      { title: 'haystack', visibility: 'public', files: files('needle in the content only\n') },
      201,
    );
    made.push({ id: hay.id, title: 'haystack', level: 'public', authorId: alice.id, project: null });
  });
  after(() => t.close());

  it('answers 401 to an anonymous caller, before looking at the parameters', async () => {
    await t.fails('GET', '/search?scope=snippet_titles&search=needle', null, undefined, 401, UNAUTHORIZED);
    await t.fails('GET', '/search', null, undefined, 401, UNAUTHORIZED);
    await t.fails('GET', '/search?scope=nope', null, undefined, 401, UNAUTHORIZED);
  });

  it("validates the parameters as Grape does: 400 for a missing search or scope, or a scope it doesn't know", async () => {
    const bad = (query: string, error: string) =>
      t.fails('GET', `/search${query}`, alice.token, undefined, 400, { error });
    await bad('', 'search is missing, scope is missing');
    await bad('?scope=snippet_titles', 'search is missing');
    await bad('?search=needle', 'scope is missing');
    await bad('?search=needle&scope=unsupported', 'scope does not have a valid value');
    await bad('?search[]=needle&scope=snippet_titles', 'search is invalid');
  });

  it("validates GitLab's state and confidential filters, which no snippet is outside of", async () => {
    // A caller of its own: searches are limited per user a minute.
    const carol = await t.user('carol-filters');
    const search = (filters: string) => `/search?search=needle&scope=snippet_titles${filters}`;
    await t.fails('GET', search('&state=open'), carol.token, undefined, 400, {
      error: 'state does not have a valid value',
    });
    await t.fails('GET', search('&confidential=maybe'), carol.token, undefined, 400, {
      error: 'confidential is invalid',
    });
    const all = await t.must('GET', search(''), carol.token);
    assert.ok(all.length > 0);
    for (const filters of ['&state=opened', '&state=all&confidential=false', '&confidential=true&state=merged'])
      assert.deepEqual(await t.must('GET', search(filters), carol.token), all, filters);
  });

  it('answers 403 to a search across the instance while global_search_snippet_titles_enabled is off', async () => {
    const setting = (on: boolean) =>
      t.must('PUT', '/application/settings', ROOT_TOKEN, { global_search_snippet_titles_enabled: on });
    assert.equal((await t.must('GET', '/application/settings', ROOT_TOKEN)).global_search_snippet_titles_enabled, true);
    await setting(false);
    try {
      const disabled = { message: '403 Forbidden - Global Search is disabled for this scope' };
      for (const scope of ['snippet_titles', 'snippet_blobs'])
        await t.fails('GET', `/search?scope=${scope}&search=needle`, alice.token, undefined, 403, disabled);
      // The parameters first, as Grape validates before the endpoint runs.
      await t.fails('GET', '/search?scope=snippet_titles', alice.token, undefined, 400, { error: 'search is missing' });
      // Within a project the search goes on.
      const inProject = made.find((m) => m.project?.visibility === 'public' && m.level === 'public')!;
      const { project_id } = await t.must('GET', `/snippets/${inProject.id}`, alice.token);
      const found = await t.api(
        'GET',
        `/projects/${project_id}/search?scope=snippet_titles&search=needle`,
        owner.token,
      );
      assert.equal(found.statusCode, 200, found.body);
    } finally {
      await setting(true);
    }
    assert.deepEqual(await titlesFound(viewers[0], 'haystack'), ['haystack']);
  });

  it('finds, for every viewer, exactly the matching snippets the finder lets them see', async () => {
    for (const v of viewers) {
      const expected = made.filter((s) => s.title.includes('needle') && findable(v, s)).map((s) => s.title);
      assert.deepEqual(await titlesFound(v, 'needle'), expected.sort(), v.name);
      // Each one found reads back the same from GET /snippets/:id, and nothing hidden is among them.
      const res = await search(v.token, { scope: 'snippet_titles', search: 'needle', per_page: 100 });
      for (const found of res.json) {
        const read = await t.api('GET', `/snippets/${found.id}`, v.token);
        assert.equal(read.statusCode, 200, `${v.name} reads ${found.title}`);
        assert.deepEqual(read.json, found, v.name);
      }
    }
  });

  it('finds every snippet the viewer may see for a blank search, the latest updated first', async () => {
    for (const v of viewers) {
      const res = await search(v.token, { scope: 'snippet_titles', search: '', per_page: 100 });
      assert.equal(res.statusCode, 200);
      const expected = made.filter((s) => findable(v, s)).map((s) => s.title);
      assert.deepEqual(res.json.map((s: { title: string }) => s.title).sort(), expected.sort(), v.name);
      const order = res.json.map((s: { updated_at: string; id: number }) => [s.updated_at, s.id]);
      const sorted = [...order].sort((a, b) => (a[0] === b[0] ? b[1] - a[1] : a[0] < b[0] ? 1 : -1));
      assert.deepEqual(order, sorted, v.name);
    }
  });

  it("matches GitLab's fuzzy search over title, description and file name, not the content", async () => {
    const [bob] = viewers.filter((v) => v.name === 'signed-in non-member');
    const made2 = async (title: string, extra: object = {}) =>
      t.ok('POST', '/snippets', alice.token, { title, visibility: 'public', files: files(), ...extra }, 201);
    await made2('Quokka Title');
    await made2('plain one', { description: 'a quokka described' });
    await made2('plain two', { files: files('x', 'dir/quokka.rb') });
    await made2('plain three', { files: files('quokka only in the content') });
    await made2('ab');
    await made2('abc');
    assert.deepEqual(await titlesFound(bob, 'QUOKKA'), ['Quokka Title', 'plain one', 'plain two']);
    // Every word of three or more characters must be in the same field; shorter words are left out.
    assert.deepEqual(await titlesFound(bob, 'quokka title'), ['Quokka Title']);
    assert.deepEqual(await titlesFound(bob, 'title quokka xy'), ['Quokka Title']);
    assert.deepEqual(await titlesFound(bob, 'quokka described'), ['plain one']);
    // A quoted phrase is one word.
    assert.deepEqual(await titlesFound(bob, '"quokka described"'), ['plain one']);
    assert.deepEqual(await titlesFound(bob, '"described quokka"'), []);
    // With no word of three characters the whole search must equal a field, whatever its case.
    assert.deepEqual(await titlesFound(bob, 'AB'), ['ab']);
    // LIKE's wildcards are plain characters.
    assert.deepEqual(await titlesFound(bob, 'qu%ka'), []);
    assert.deepEqual(await titlesFound(bob, 'quo_ka'), []);
  });

  it('finds nothing for the searches GitLab takes as abusive: one character, a stop word, a 100-character word', async () => {
    for (const term of ['n', 'the', 'with', 'n'.repeat(100), `needle ${'x'.repeat(100)}`]) {
      const res = await search(alice.token, { scope: 'snippet_titles', search: term });
      assert.equal(res.statusCode, 200, term);
      assert.deepEqual(res.json, [], term);
      assert.equal(res.headers['x-total'], '0');
    }
    // A URL may be twice as long.
    const url = `https://example.com/${'n'.repeat(120)}`;
    assert.deepEqual((await search(alice.token, { scope: 'snippet_titles', search: url })).json, []);
    assert.equal((await search(alice.token, { scope: 'snippet_titles', search: url })).headers['x-total'], '0');
    // Past GitLab's limits without Elasticsearch, 64 words or 4,096 characters: nothing, not a 500.
    const many = Array.from({ length: 500 }, (_, k) => `w${String(k).padStart(3, '0')}`).join(' ');
    for (const term of [many, `needle ${'x'.repeat(4100)}`]) {
      const res = await search(alice.token, { scope: 'snippet_titles', search: term });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json, []);
    }
  });

  it("pages with GitLab's headers and says it is a basic search", async () => {
    const admin = viewers.find((v) => v.admin)!;
    const total = made.filter((s) => s.title.includes('needle') && findable(admin, s)).length;
    const res = await search(admin.token, { scope: 'snippet_titles', search: 'needle', per_page: 2, page: 2 });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json.length, 2);
    const h = res.headers;
    assert.deepEqual(
      [h['x-page'], h['x-per-page'], h['x-total'], h['x-total-pages'], h['x-next-page'], h['x-prev-page']],
      ['2', '2', String(total), String(Math.ceil(total / 2)), '3', '1'],
    );
    assert.equal(h['x-search-type'], 'basic');
    assert.equal(h['content-transfer-encoding'], 'binary');
    const link = (page: number, rel: string) =>
      `<http://localhost:80/api/v4/search?page=${page}&per_page=2&scope=snippet_titles&search=needle>; rel="${rel}"`;
    const last = Math.ceil(total / 2);
    assert.equal(h.link, [link(1, 'prev'), link(3, 'next'), link(1, 'first'), link(last, 'last')].join(', '));
    const all = await search(admin.token, { scope: 'snippet_titles', search: 'needle', per_page: 100 });
    const page1 = await search(admin.token, { scope: 'snippet_titles', search: 'needle', per_page: 2, page: 1 });
    assert.deepEqual([...page1.json, ...res.json], all.json.slice(0, 4));
  });

  it('pages the latest updated first when that is not the order they were made in', async () => {
    const make = async (title: string) =>
      (await t.ok('POST', '/snippets', alice.token, { title, visibility: 'public', files: files() }, 201)) as {
        id: number;
      };
    const oldest = await make('walrus one');
    const middle = await make('walrus two');
    const newest = await make('walrus three');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await t.must('PUT', `/snippets/${oldest.id}`, alice.token, { title: 'walrus one, edited' });
    const expected = [oldest.id, newest.id, middle.id];
    for (const scope of ['snippet_titles', 'snippet_blobs']) {
      const pages = [];
      for (const page of [1, 2]) {
        const res = await search(alice.token, { scope, search: 'walrus', per_page: 2, page });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['x-total'], '3', scope);
        pages.push((res.json as { id: number }[]).map((s) => s.id));
      }
      assert.deepEqual(pages, [expected.slice(0, 2), expected.slice(2)], scope);
    }
  });

  it('sees a write, a rename and a delete in the very next search', async () => {
    const s = await t.ok(
      'POST',
      '/snippets',
      alice.token,
      { title: 'fresh kiwi', visibility: 'private', files: files() },
      201,
    );
    const author = viewers.find((v) => v.name === 'author')!;
    const bob = viewers.find((v) => v.name === 'signed-in non-member')!;
    assert.deepEqual(await titlesFound(author, 'kiwi'), ['fresh kiwi']);
    assert.deepEqual(await titlesFound(bob, 'kiwi'), []);
    await t.must('PUT', `/snippets/${s.id}`, alice.token, { title: 'fresh mango', visibility: 'public' });
    assert.deepEqual(await titlesFound(author, 'kiwi'), []);
    assert.deepEqual(await titlesFound(bob, 'mango'), ['fresh mango']);
    await t.expect('DELETE', `/snippets/${s.id}`, alice.token, undefined, 204);
    assert.deepEqual(await titlesFound(bob, 'mango'), []);
    assert.deepEqual(await titlesFound(author, 'mango'), []);
  });
});
