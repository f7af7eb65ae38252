// snippetd's content search (docs/gitlab-compatibility.md#search, beyond GitLab): scope snippet_blobs on
// GET /search, and both scopes on GET /projects/:id/search and /groups/:id/search. Who finds what comes from
// the small oracle below (GitLab's SnippetsFinder and policies, written out), independent of src/domain; the
// index is checked after every kind of write, for binary and oversized files, and rebuilt from the rows as
// the migration does.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createTestApp, mustGit, ROOT_TOKEN, runGit, TEST_DB, type TestApp, untilSearchIndexed } from '../helper.ts';
import { indexStoredSnippets } from '../../src/storage/db/migrations/0010_snippet_search.ts';

type Level = 'private' | 'internal' | 'public';
type Feature = 'enabled' | 'private' | 'disabled';
const LEVELS: Level[] = ['private', 'internal', 'public'];

interface Viewer {
  name: string;
  token: string;
  id: number;
  admin?: boolean;
  external?: boolean;
  member?: boolean;
}
interface ProjectCase {
  visibility: Level;
  feature: Feature;
  id?: number;
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
  { visibility: 'public', feature: 'private' },
  { visibility: 'public', feature: 'disabled' },
];

/** GitLab's SnippetsFinder and read_snippet, written out: may the viewer find this snippet? */
function findable(v: Viewer, s: Made): boolean {
  if (s.project?.feature === 'disabled') return false;
  if (v.admin) return true;
  const seesLevel = (level: Level) => level === 'public' || (level === 'internal' && !v.external);
  if (s.project === null) return s.authorId === v.id || seesLevel(s.level);
  if (v.member) return true;
  return seesLevel(s.project.visibility) && s.project.feature === 'enabled' && seesLevel(s.level);
}

/** Each snippet of the matrix holds the word in its second line, and nowhere else. */
const CONTENT = 'first line\nthe Zebracorn lives here\nlast line\n';

describe('search API: snippet content (snippet_blobs) and project and group search', () => {
  let t: TestApp;
  const viewers: Viewer[] = [];
  const made: Made[] = [];
  let alice: { id: number; token: string };
  let groupId: number;

  const get = (token: string | null, path: string, query: Record<string, string | number>) =>
    t.api('GET', `${path}?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`, token);
  const found = async (token: string, term: string, path = '/search', scope = 'snippet_blobs') => {
    const res = await get(token, path, { scope, search: term, per_page: 100 });
    assert.equal(res.statusCode, 200, res.body);
    return res.json as { id: number; title: string; matches: unknown }[];
  };
  const titles = async (token: string, term: string, path?: string, scope?: string) =>
    (await found(token, term, path, scope)).map((s) => s.title).sort();

  before(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    const owner = await t.user('owner');
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
      const title = `personal ${level}`;
      const files = [{ file_path: 'notes.txt', content: CONTENT }];
      const s = await t.ok('POST', '/snippets', alice.token, { title, visibility: level, files }, 201);
      made.push({ id: s.id, title, level, authorId: alice.id, project: null });
    }
    const group = await t.must('POST', '/groups', ROOT_TOKEN, { name: 'team', path: 'team', visibility: 'public' });
    groupId = group.id;
    let n = 0;
    for (const p of PROJECTS) {
      const project = await t.must('POST', '/projects', ROOT_TOKEN, {
        name: `p${n++}`,
        visibility: p.visibility,
        namespace_id: groupId,
      });
      p.id = project.id;
      await t.must('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: guest.id, access_level: 10 });
      await t.must('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: owner.id, access_level: 50 });
      for (const level of LEVELS) {
        const title = `${p.visibility} project, snippets ${p.feature}, ${level}`;
        const files = [{ file_path: 'notes.txt', content: CONTENT }];
        const s = await t.ok(
          'POST',
          `/projects/${project.id}/snippets`,
          owner.token,
          { title, visibility: level, files },
          201,
        );
        made.push({ id: s.id, title, level, authorId: owner.id, project: p });
      }
      await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { snippets_access_level: p.feature });
    }
  });
  after(() => t.close());

  it('finds by content, for every viewer, exactly the snippets they may read, with the matching lines', async () => {
    for (const v of viewers) {
      const results = await found(v.token, 'zebraCORN');
      const expected = made.filter((s) => findable(v, s)).map((s) => s.title);
      assert.deepEqual(results.map((s) => s.title).sort(), expected.sort(), v.name);
      for (const r of results) {
        assert.deepEqual(r.matches, [{ path: 'notes.txt', lines: [{ number: 2, text: 'the Zebracorn lives here' }] }]);
        // The rest is the snippet entity the snippet's own endpoint answers.
        const { matches: _, ...entity } = r as Record<string, unknown>;
        const self = await t.api('GET', `/snippets/${r.id}`, v.token);
        assert.equal(self.statusCode, 200, `${v.name} reads ${r.title}`);
        assert.deepEqual(self.json, entity);
      }
      // snippet_titles does not look into the content.
      assert.deepEqual(await titles(v.token, 'zebracorn', '/search', 'snippet_titles'), [], v.name);
    }
  });

  it('pages and counts what each viewer finds, the latest updated first', async () => {
    for (const v of viewers) {
      // Made in turn, so the latest updated first is the newest first.
      const expected = made
        .filter((s) => findable(v, s))
        .map((s) => s.id)
        .sort((a, b) => b - a);
      const seen: number[] = [];
      for (let page = 1; ; page++) {
        const res = await get(v.token, '/search', { scope: 'snippet_blobs', search: 'zebraCORN', per_page: 4, page });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['x-total'], String(expected.length), `${v.name}, page ${page}`);
        assert.equal(res.headers['x-total-pages'], String(Math.ceil(expected.length / 4)), v.name);
        seen.push(...(res.json as { id: number }[]).map((s) => s.id));
        if (res.headers['x-next-page'] === '') break;
        assert.equal(res.headers['x-next-page'], String(page + 1), v.name);
      }
      assert.deepEqual(seen, expected, v.name);
    }
  });

  it("lists a found snippet's matching files only, each with its first 10 matching lines, as they read", async () => {
    const lines = [
      'okapi at the start, okapi again',
      `okapi ${'x'.repeat(600)}`,
      ...Array.from({ length: 20 }, (_, i) => (i % 2 ? `line ${i}` : `an OKAPI on line ${i}`)),
    ];
    const files = [
      { file_path: 'a.txt', content: `${lines.join('\r\n')}\r\n` },
      { file_path: 'b.txt', content: 'nothing here\n' },
      { file_path: 'İstanbul okapi.txt', content: 'İİ okapi\nİ\nokapi İ\n' },
    ];
    const s = await t.ok('POST', '/snippets', alice.token, { title: 'animals', visibility: 'private', files }, 201);
    const [hit] = (await found(alice.token, 'okapi')).filter((r) => r.id === s.id);
    // In git's order of paths, the file without it not listed; a line once however often it holds it, without
    // its CR, cut at 500 characters; the first 10 such lines.
    const shown = [1, 2, 3, 5, 7, 9, 11, 13, 15, 17].map((n) => ({ number: n, text: lines[n - 1].slice(0, 500) }));
    assert.deepEqual(hit.matches, [
      { path: 'a.txt', lines: shown },
      {
        path: 'İstanbul okapi.txt',
        lines: [
          { number: 1, text: 'İİ okapi' },
          { number: 3, text: 'okapi İ' },
        ],
      },
    ]);
  });

  it('lists the lines of files of 6 MiB, read a piece at a time (256 Ki characters), sixteen files a statement', async () => {
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_indexed_file_size_limit_kb: 8192 });
    try {
      const big = (n: number) => `${'filler line\n'.repeat(6 * 1024 * 87)}the narwhal of file ${n}\n`;
      const files = [3, 1, 2].map((n) => ({ file_path: `n${n}.txt`, content: big(n) }));
      const s = await t.ok('POST', '/snippets', alice.token, { title: 'big', visibility: 'private', files }, 201);
      const [hit] = (await found(alice.token, 'narwhal')).filter((r) => r.id === s.id);
      const line = 6 * 1024 * 87 + 1;
      assert.deepEqual(
        hit.matches,
        [1, 2, 3].map((n) => ({ path: `n${n}.txt`, lines: [{ number: line, text: `the narwhal of file ${n}` }] })),
      );
      await t.ok('DELETE', `/snippets/${s.id}`, alice.token, undefined, 204);
    } finally {
      await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_indexed_file_size_limit_kb: 1024 });
    }
  });

  it('finds lines across the pieces a file is read in: a text, a CR and a long line cut at a piece end', async (c) => {
    // More searches than search_rate_limit's 30 a minute, which this is not about.
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_rate_limit: 0 });
    c.after(() => t.must('PUT', '/application/settings', ROOT_TOKEN, { search_rate_limit: 30 }));
    // Where the pieces end: 16 Ki characters, then each piece four times longer (src/domain/snippets/search.ts).
    const ends = [16, 80, 336, 1360, 5456].map((k) => k * 1024);
    let content = '';
    /** Filler lines, then dots on the line that goes on with `text`, which starts at character `at`. */
    const placeAt = (at: number, text: string) => {
      while (content.length < at - 10) content += 'filler\n';
      content += `${'.'.repeat(at - content.length)}${text}`;
    };
    content += 'an okapi on the first line\nλόγος, written in lowercase\n';
    placeAt(ends[0] - 2, 'OKAPI split by the first piece end\n');
    placeAt(ends[1] - 9, 'an okapi\r\nthen the line after a CR at the second piece end, another Okapi\r\n');
    placeAt(ends[2] - 600, `${'y'.repeat(900)}okapi late in a long line\n`);
    placeAt(ends[3] - 1000, 'okapi end\nnext line\nokapi end\n');
    // Σ lowercases to ς at a word's end, which the next piece's first letter alone cannot tell (the line above,
    // in lowercase, is what the database's own lowercasing finds the file by).
    placeAt(ends[3] - 4, 'ΛΌΓΟΣ at a word end\n');
    // A CR that is the 500th character of its line, not its last, is kept.
    placeAt(ends[4] - 10, `\nabc${'x'.repeat(496)}\ry\nthe last line`);
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_indexed_file_size_limit_kb: 8192 });
    const s = await t
      .ok(
        'POST',
        '/snippets',
        alice.token,
        { title: 'pieces', visibility: 'private', files: [{ file_path: 'long.txt', content }] },
        201,
      )
      .finally(() => t.must('PUT', '/application/settings', ROOT_TOKEN, { search_indexed_file_size_limit_kb: 1024 }));
    /** The oracle: the lines where `text` starts, in any case, once each, the first 10. */
    const expected = (text: string) => {
      const lower = content.toLowerCase();
      const numbers = new Set<number>();
      for (let at = lower.indexOf(text); at !== -1; at = lower.indexOf(text, at + 1))
        numbers.add(content.slice(0, at).split('\n').length);
      const lines = content.split('\n');
      return [...numbers].slice(0, 10).map((n) => ({ number: n, text: lines[n - 1].replace(/\r$/, '').slice(0, 500) }));
    };
    for (const text of ['okapi', 'kapi split', 'okapi late', 'okapi end\nnext', 'λόγος', 'abcxx']) {
      const [hit] = (await found(alice.token, text)).filter((r) => r.id === s.id);
      const lines = expected(text);
      assert.ok(lines.length > 0, text);
      assert.deepEqual(hit?.matches, [{ path: 'long.txt', lines }], JSON.stringify(text));
    }
    await t.ok('DELETE', `/snippets/${s.id}`, alice.token, undefined, 204);
  });

  it('finds letters beyond ASCII in any case, in titles, paths and text, as PostgreSQL lower() folds them', async (c) => {
    // More searches than search_rate_limit's 30 a minute, which this is not about.
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_rate_limit: 0 });
    c.after(() => t.must('PUT', '/application/settings', ROOT_TOKEN, { search_rate_limit: 30 }));
    const s = await t.ok(
      'POST',
      '/snippets',
      alice.token,
      {
        title: 'Äpfel Ölmühle',
        visibility: 'private',
        files: [{ file_path: 'ÉCOLE/Straße.txt', content: 'first\nDIE ÄPFEL DER ÖLMÜHLE\nlast\n' }],
      },
      201,
    );
    const line = { number: 2, text: 'DIE ÄPFEL DER ÖLMÜHLE' };
    for (const text of ['äpfel', 'ÄPFEL', 'Äpfel', 'ölmühle']) {
      assert.deepEqual(await titles(alice.token, text, '/search', 'snippet_titles'), ['Äpfel Ölmühle'], text);
      const [hit] = (await found(alice.token, text)).filter((r) => r.id === s.id);
      assert.deepEqual(hit?.matches, [{ path: 'ÉCOLE/Straße.txt', lines: [line] }], text);
    }
    // A path's own letters: the file is listed, no line holds them.
    const [byPath] = (await found(alice.token, 'école/straße')).filter((r) => r.id === s.id);
    assert.deepEqual(byPath?.matches, [{ path: 'ÉCOLE/Straße.txt', lines: [] }]);
    await t.ok('DELETE', `/snippets/${s.id}`, alice.token, undefined, 204);
  });

  it('finds texts that hold punctuation exactly, in any case, and never by the letters the index spells it with', async (c) => {
    const marks = [...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'];
    const files = [
      { file_path: 'code.py', content: 'x = Beta(42) + alpha_4\nsecond line\n' },
      // What PostgreSQL's marked text spells `beta(4` and `alpha_4` with (migration 0013), and near misses.
      { file_path: 'decoy.txt', content: 'betaQ4 alphaV4\nbeta 4 alpha-4\n' },
      // `?` shares its letter there with `!`.
      { file_path: 'shared.txt', content: 'is x?y\n' },
      { file_path: 'marks.txt', content: `start\n${marks.map((m) => `q${m}z`).join(' ')}\n` },
    ];
    const s = await t.ok('POST', '/snippets', alice.token, { title: 'marks', visibility: 'private', files }, 201);
    // Over forty searches in a minute: more than GitLab's default limit lets one user make.
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_rate_limit: 0 });
    c.after(() => t.must('PUT', '/application/settings', ROOT_TOKEN, { search_rate_limit: 30 }));
    // The snippet's matching files and lines, or null when it is not found at all.
    const matches = async (term: string) =>
      (await found(alice.token, term)).find((r) => r.id === s.id)?.matches ?? null;
    const code = [{ path: 'code.py', lines: [{ number: 1, text: 'x = Beta(42) + alpha_4' }] }];
    assert.deepEqual(await matches('beta(4'), code);
    assert.deepEqual(await matches('BETA(42) + ALPHA_4'), code);
    assert.deepEqual(await matches('alpha_4'), code);
    assert.deepEqual(await matches('betaq4'), [{ path: 'decoy.txt', lines: [{ number: 1, text: 'betaQ4 alphaV4' }] }]);
    assert.deepEqual(await matches('is x?y'), [{ path: 'shared.txt', lines: [{ number: 1, text: 'is x?y' }] }]);
    assert.equal(await matches('is x!y'), null);
    assert.deepEqual(await matches('alpha-4'), [{ path: 'decoy.txt', lines: [{ number: 2, text: 'beta 4 alpha-4' }] }]);
    const line = { number: 2, text: marks.map((m) => `q${m}z`).join(' ') };
    for (const m of marks) assert.deepEqual(await matches(`Q${m}Z`), [{ path: 'marks.txt', lines: [line] }], m);
    // `B` is what `!` and `?` are kept as; `qbz` is nowhere in the text.
    assert.equal(await matches('qbz'), null);
    assert.equal(await matches('%_\\'), null);
    await t.expect('DELETE', `/snippets/${s.id}`, alice.token, undefined, 204);
  });

  it('keeps the index in step with every write: create, change, rename, delete', async () => {
    const s = await t.ok(
      'POST',
      '/snippets',
      alice.token,
      { title: 'fruit', visibility: 'private', files: [{ file_path: 'a.txt', content: 'a kumquat here\n' }] },
      201,
    );
    assert.deepEqual(await titles(alice.token, 'kumquat'), ['fruit']);
    await t.must('PUT', `/snippets/${s.id}`, alice.token, {
      files: [{ action: 'update', file_path: 'a.txt', content: 'now a persimmon\n' }],
    });
    assert.deepEqual(await titles(alice.token, 'kumquat'), []);
    assert.deepEqual(await titles(alice.token, 'persimmon'), ['fruit']);
    await t.must('PUT', `/snippets/${s.id}`, alice.token, {
      files: [{ action: 'move', previous_path: 'a.txt', file_path: 'tamarind.txt' }],
    });
    const [moved] = await found(alice.token, 'tamarind');
    assert.deepEqual(moved.matches, [{ path: 'tamarind.txt', lines: [] }]);
    assert.deepEqual(await titles(alice.token, 'persimmon'), ['fruit']);
    await t.expect('DELETE', `/snippets/${s.id}`, alice.token, undefined, 204);
    assert.deepEqual(await titles(alice.token, 'persimmon'), []);
    assert.deepEqual(await titles(alice.token, 'tamarind'), []);
  });

  it("answers the same before and after SQLite's indexer took a write (long texts, an edited description)", async () => {
    const db = t.app.store.kysely;
    /** SQLite indexes off the write (search-indexing.ts): until its queue is empty; PostgreSQL at once. */
    const indexed = () => (TEST_DB === 'sqlite' ? untilSearchIndexed(db) : Promise.resolve());
    /** Each text (beyond the first 8 KiB piece of a long one, and longer than an FTS phrase) in `expected`. */
    const expectFound = async (expected: Record<string, string[]>) => {
      for (const [text, found] of Object.entries(expected))
        assert.deepEqual(await titles(alice.token, text), found, text);
      await indexed();
      for (const [text, found] of Object.entries(expected))
        assert.deepEqual(await titles(alice.token, text), found, `${text}, indexed`);
    };
    // Each text is searched twice a step: more than search_rate_limit's 30 a minute, which this is not about.
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_rate_limit: 0 });
    try {
      const long = (word: string) => `${'lorem ipsum '.repeat(1000)}${word}${' dolor'.repeat(20)}`;
      const longWord = `guava${'-x'.repeat(40)}-end`;
      await indexed();
      const s = await t.ok(
        'POST',
        '/snippets',
        alice.token,
        {
          title: 'orchard',
          description: long('feijoa'),
          visibility: 'private',
          files: [{ file_path: 'a.txt', content: long(`lychee ${longWord}`) }],
        },
        201,
      );
      await expectFound({ feijoa: ['orchard'], lychee: ['orchard'], [longWord]: ['orchard'], [`${longWord}!`]: [] });
      await t.must('PUT', `/snippets/${s.id}`, alice.token, {
        description: long('rambutan'),
        files: [{ action: 'update', file_path: 'a.txt', content: long('durian') }],
      });
      await expectFound({ feijoa: [], rambutan: ['orchard'], lychee: [], [longWord]: [], durian: ['orchard'] });
      await t.expect('DELETE', `/snippets/${s.id}`, alice.token, undefined, 204);
      await expectFound({ rambutan: [], durian: [] });
    } finally {
      await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_rate_limit: 30 });
    }
  });

  it('keeps the index in step with a git push', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const host = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-search-push-'));
    try {
      const s = await t.ok(
        'POST',
        '/snippets',
        alice.token,
        { title: 'pushed', visibility: 'private', files: [{ file_path: 'a.txt', content: 'a lychee\n' }] },
        201,
      );
      const dir = path.join(work, 'clone');
      const clone = await runGit(['clone', `http://oauth2:${alice.token}@${host}/snippets/${s.id}.git`, dir]);
      assert.equal(clone.code, 0, clone.stderr);
      fs.writeFileSync(path.join(dir, 'a.txt'), 'no fruit\n');
      fs.writeFileSync(path.join(dir, 'b.txt'), 'x\nthen a rambutan\n');
      assert.equal((await runGit(['add', '.'], dir)).code, 0);
      assert.equal((await runGit(['commit', '-m', 'change'], dir)).code, 0);
      const push = await runGit(['push', 'origin', 'HEAD:main'], dir);
      assert.equal(push.code, 0, push.stderr);
      assert.deepEqual(await titles(alice.token, 'lychee'), []);
      const [hit] = await found(alice.token, 'RAMBUTAN');
      assert.deepEqual(hit.matches, [{ path: 'b.txt', lines: [{ number: 2, text: 'then a rambutan' }] }]);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it('takes the text of files up to search_indexed_file_size_limit_kb, as a create, an update and a push write them', async () => {
    if (!t.app.server.listening) await t.app.listen({ host: '127.0.0.1', port: 0 });
    const host = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-search-limit-'));
    /** 2,000 bytes: over a limit of 1 KiB, within the default 1 MiB. */
    const sized = (word: string) => `${'z '.repeat(990)}${word}\n`.padEnd(2000, '.');
    const made: number[] = [];
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_rate_limit: 0 });
    try {
      const kept = await t.ok(
        'POST',
        '/snippets',
        alice.token,
        { title: 'kept', visibility: 'private', files: [{ file_path: 'k.txt', content: sized('quince') }] },
        201,
      );
      made.push(kept.id);
      assert.deepEqual(await titles(alice.token, 'quince'), ['kept']);
      await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_indexed_file_size_limit_kb: 1 });
      const capped = await t.ok(
        'POST',
        '/snippets',
        alice.token,
        {
          title: 'capped',
          visibility: 'private',
          files: [
            { file_path: 'c.txt', content: sized('quince') },
            { file_path: 'small.txt', content: 'a small medlar\n' },
          ],
        },
        201,
      );
      made.push(capped.id);
      // Written before the change: kept's text stays searched until it is written again (or fsck --repair).
      assert.deepEqual(await titles(alice.token, 'quince'), ['kept']);
      assert.deepEqual(await titles(alice.token, 'c.txt'), ['capped']);
      assert.deepEqual(await titles(alice.token, 'medlar'), ['capped']);
      await t.must('PUT', `/snippets/${kept.id}`, alice.token, {
        files: [{ action: 'update', file_path: 'k.txt', content: sized('loquat') }],
      });
      assert.deepEqual(await titles(alice.token, 'quince'), []);
      assert.deepEqual(await titles(alice.token, 'loquat'), []);
      assert.deepEqual(await titles(alice.token, 'k.txt'), ['kept']);

      const dir = path.join(work, 'clone');
      await mustGit(['clone', `http://oauth2:${alice.token}@${host}/snippets/${capped.id}.git`, dir]);
      fs.writeFileSync(path.join(dir, 'p.txt'), sized('sapodilla'));
      fs.writeFileSync(path.join(dir, 'q.txt'), 'a small sapodilla\n'.padEnd(1024, '.'));
      await mustGit(['add', '.'], dir);
      await mustGit(['commit', '-m', 'over and within the limit'], dir);
      await mustGit(['push', 'origin', 'HEAD:main'], dir);
      const [hit] = await found(alice.token, 'sapodilla');
      assert.equal(hit.title, 'capped');
      assert.deepEqual(hit.matches, [{ path: 'q.txt', lines: [{ number: 1, text: 'a small sapodilla' }] }]);
      assert.deepEqual(await titles(alice.token, 'p.txt'), ['capped']);
    } finally {
      await t.must('PUT', '/application/settings', ROOT_TOKEN, {
        search_rate_limit: 30,
        search_indexed_file_size_limit_kb: 1024,
      });
      // Their rows follow the limit of their writes, not the default a rebuild (a later test) follows.
      for (const id of made) await t.expect('DELETE', `/snippets/${id}`, alice.token, undefined, 204);
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it('indexes binary and oversized files by path only; title and description match too', async () => {
    const mk = (title: string, files: object[], extra: object = {}) =>
      t.ok('POST', '/snippets', alice.token, { title, visibility: 'private', files, ...extra }, 201);
    await mk('binary', [{ file_path: 'blob.bin', content: 'x\u0000 guava inside\n' }]);
    await mk('large', [{ file_path: 'big.txt', content: `${'y'.repeat(1024 * 1024)}\nguava at the end\n` }]);
    await mk('small', [{ file_path: 'small.txt', content: 'one guava\n' }]);
    await mk('described', [{ file_path: 'd.txt', content: 'x' }], { description: 'the GUAVA notes' });
    await mk('guava title', [{ file_path: 'e.txt', content: 'x' }]);
    assert.deepEqual(await titles(alice.token, 'guava'), ['described', 'guava title', 'small']);
    assert.deepEqual(await titles(alice.token, 'blob.bin'), ['binary']);
    assert.deepEqual(await titles(alice.token, 'big.txt'), ['large']);
  });

  it('searches within a project or a group, both scopes, with the order of checks of GitLab', async () => {
    const bob = viewers.find((v) => v.name === 'signed-in non-member')!;
    const guest = viewers.find((v) => v.member)!;
    for (const p of PROJECTS) {
      for (const v of [bob, guest]) {
        const expected = made.filter((s) => s.project === p && findable(v, s)).map((s) => s.title);
        const path = `/projects/${p.id}/search`;
        if (p.visibility === 'private' && !v.member) {
          await t.fails('GET', `${path}?scope=snippet_blobs&search=zebracorn`, v.token, undefined, 404, {
            message: '404 Project Not Found',
          });
          continue;
        }
        assert.deepEqual(await titles(v.token, 'zebracorn', path), expected.sort(), `${v.name} in ${p.id}`);
        assert.deepEqual(await titles(v.token, 'snippets', `/projects/${p.id}/-/search`, 'snippet_titles'), expected);
      }
    }
    for (const v of viewers) {
      const expected = made.filter((s) => s.project !== null && findable(v, s)).map((s) => s.title);
      assert.deepEqual(await titles(v.token, 'zebracorn', `/groups/${groupId}/search`), expected.sort(), v.name);
    }
    await t.fails('GET', `/projects/${PROJECTS[0].id}/search`, null, undefined, 401, { message: '401 Unauthorized' });
    await t.fails('GET', '/projects/99999/search', bob.token, undefined, 400, {
      error: 'search is missing, scope is missing',
    });
    await t.fails('GET', '/projects/99999/search?scope=snippet_blobs&search=x', bob.token, undefined, 404, {
      message: '404 Project Not Found',
    });
    await t.fails('GET', '/groups/99999/search?scope=snippet_blobs&search=x', bob.token, undefined, 404, {
      message: '404 Group Not Found',
    });
  });

  it('rebuilds the index from the rows as the migration does', async () => {
    const db = t.app.store.kysely;
    const before = await sql`SELECT snippet_id, path, content FROM snippet_file_text ORDER BY snippet_id, path`.execute(
      db,
    );
    await sql`DELETE FROM snippet_file_text`.execute(db);
    assert.deepEqual(await titles(alice.token, 'zebracorn'), []);
    await indexStoredSnippets(db);
    const rebuilt =
      await sql`SELECT snippet_id, path, content FROM snippet_file_text ORDER BY snippet_id, path`.execute(db);
    assert.deepEqual(rebuilt.rows, before.rows);
    const author = viewers[0];
    assert.deepEqual(
      await titles(alice.token, 'zebracorn'),
      made
        .filter((s) => findable(author, s))
        .map((s) => s.title)
        .sort(),
    );
  });
});
