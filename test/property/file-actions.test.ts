// Random sequences of snippet file actions (create/update/delete/move, docs/gitlab-compatibility.md#file-actions and
// #d4) checked against an in-memory model written here from that document, independently of
// src/domain/snippets/files.ts. Each generated run creates a snippet through HTTP, then sends every action on its own
// as PUT /projects/:id/snippets/:sid {files:[action]}. After every step the status and body must match the model, the
// snippet must list exactly the model's paths (byte order) and file raw must give the model's content for each path.
// After the run the bare repository must pass `git fsck --strict`, its tree at `main` must hold exactly the model's
// files, and it must have 1 + (successful updates) commits.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { createTestApp, type TestApp } from '../helper.ts';

// ---- the model (docs/gitlab-compatibility.md#file-actions) ----

interface Action {
  action: string;
  file_path?: string;
  previous_path?: string;
  content?: string;
}

type Outcome =
  | { status: 200; files: Map<string, string> }
  | { status: 400; body: unknown }
  | { status: 422; body: unknown };

const MAX_FILES = 10;
const INVALID_ACTIONS = { message: { error: 'Snippet actions have invalid data' } };
const REPO_ERROR = { message: { error: 'Repository Error updating the snippet' } };
const INVALID_NAME = { message: { error: 'Repository Error updating the snippet - Invalid file name' } };
const TOO_MANY = {
  message: { error: `Repository Error updating the snippet - Snippet can't have more than ${MAX_FILES} files` },
};
const INVALID_ACTION_NAME = { error: 'files[0][action] does not have a valid value' };
/** Deleting every file is refused, as a push doing so is. */
const NO_FILES = { message: { error: 'Repository Error updating the snippet - A snippet needs at least one file' } };

/** Ruby's blank?: nil, empty or only whitespace. */
const blank = (v: string | undefined) => v === undefined || /^\s*$/.test(v);

/** Git refuses empty segments (and '.', '..', '.git', which the generator never produces). */
const gitValid = (p: string) =>
  p.split('/').every((s) => s !== '' && s !== '.' && s !== '..' && s.toLowerCase() !== '.git');

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const sortedPaths = (files: Map<string, string>) => [...files.keys()].sort(byteOrder);

/** snippetfile<N>.txt with N one above the highest N among the current files. */
function generatedName(files: Map<string, string>): string {
  let n = 0;
  for (const p of files.keys()) {
    const m = /^snippetfile(\d+)\.txt$/.exec(p);
    if (m) n = Math.max(n, Number(m[1]));
  }
  return `snippetfile${n + 1}.txt`;
}

/** SnippetInputAction validations: 422 when an action is malformed on its own. */
function wellFormed(a: Action): boolean {
  switch (a.action) {
    case 'create':
      return !blank(a.content);
    case 'update':
      return !blank(a.file_path) && !blank(a.content) && (blank(a.previous_path) || a.previous_path === a.file_path);
    case 'delete':
      return !blank(a.file_path);
    case 'move':
      return !blank(a.previous_path) && a.file_path !== a.previous_path;
    default:
      return false;
  }
}

/**
 * The acceptable outcomes of one request {files:[a]} on `files`. Usually one; two where the document
 * leaves the order of two git-level checks open (a move from a missing path onto an invalid name).
 */
function model(files: Map<string, string>, a: Action): Outcome[] {
  if (!['create', 'update', 'delete', 'move'].includes(a.action)) return [{ status: 400, body: INVALID_ACTION_NAME }];
  if (!wellFormed(a)) return [{ status: 422, body: INVALID_ACTIONS }];
  const next = new Map(files);
  const fail = (body: unknown): Outcome => ({ status: 400, body });
  switch (a.action) {
    case 'create': {
      const p = blank(a.file_path) ? generatedName(files) : a.file_path!;
      if (!gitValid(p)) return [fail(INVALID_NAME)];
      if (next.has(p)) return [fail(REPO_ERROR)];
      next.set(p, a.content!);
      break;
    }
    case 'update': {
      if (!next.has(a.file_path!)) return [fail(REPO_ERROR)];
      next.set(a.file_path!, a.content!);
      break;
    }
    case 'delete': {
      if (!next.delete(a.file_path!)) return [fail(REPO_ERROR)];
      break;
    }
    case 'move': {
      const from = a.previous_path!;
      const to = blank(a.file_path) ? (/^snippetfile\d+\.txt$/.test(from) ? from : generatedName(files)) : a.file_path!;
      const missing = !next.has(from);
      const invalid = !gitValid(to);
      if (missing && invalid) return [fail(REPO_ERROR), fail(INVALID_NAME)];
      if (missing) return [fail(REPO_ERROR)];
      if (invalid) return [fail(INVALID_NAME)];
      if (to !== from && next.has(to)) return [fail(REPO_ERROR)];
      const old = next.get(from)!;
      next.delete(from);
      next.set(to, a.content ?? old);
      break;
    }
  }
  if (next.size > MAX_FILES) return [fail(TOO_MANY)];
  if (next.size === 0) return [fail(NO_FILES)];
  return [{ status: 200, files: next }];
}

// ---- generators ----

const PATHS = ['a.txt', 'b.rb', 'dir/c.md', 'snippetfile1.txt', 'dir/sub/d.txt'];
const path_ = fc.constantFrom<string>(...PATHS);
const content = fc.constantFrom<string>('hello\n', 'puts 1\n', 'x', 'a\nb\nc\n', 'ünïcødé ✓\n', '#!/bin/sh\necho hi\n');
const blankContent = fc.constantFrom('', ' ', '\n');
const blankPath = fc.constantFrom('', ' ');
/** An optional value: mostly `value`, sometimes blank or absent. */
const opt = <T extends string>(value: fc.Arbitrary<T>, blanks: fc.Arbitrary<string> = fc.constant('')) =>
  fc.oneof(
    { arbitrary: value, weight: 6 },
    { arbitrary: blanks, weight: 1 },
    { arbitrary: fc.constant(undefined), weight: 1 },
  );

/** Removes keys whose value is undefined, so they are absent from the JSON body. */
function compact(a: Record<string, string | undefined>): Action {
  return Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as unknown as Action;
}

const createAction = fc
  .record({
    file_path: fc.oneof(
      { arbitrary: opt(path_, blankPath), weight: 12 },
      { arbitrary: fc.constant('e//f.txt'), weight: 1 },
    ),
    content: opt(content, blankContent),
  })
  .map((r) => compact({ action: 'create', ...r }));
const updateAction = fc
  .record({
    file_path: opt(path_, blankPath),
    content: opt(content, blankContent),
    previous_path: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 4 },
      { arbitrary: fc.constant('same'), weight: 2 },
      { arbitrary: path_, weight: 1 },
    ),
  })
  .map((r) =>
    compact({ action: 'update', ...r, previous_path: r.previous_path === 'same' ? r.file_path : r.previous_path }),
  );
const deleteAction = fc.record({ file_path: opt(path_, blankPath) }).map((r) => compact({ action: 'delete', ...r }));
const moveAction = fc
  .record({
    previous_path: opt(path_, blankPath),
    file_path: fc.oneof(
      { arbitrary: opt(path_, blankPath), weight: 12 },
      { arbitrary: fc.constant('e//f.txt'), weight: 1 },
    ),
    // content is either absent (pure rename) or non-blank: an explicitly blank content on move is not specified.
    content: fc.option(content, { nil: undefined }),
  })
  .map((r) => compact({ action: 'move', ...r }));
const badAction = fc.constantFrom<Action>(
  { action: 'rename', file_path: 'a.txt', previous_path: 'b.rb' },
  { action: 'CREATE', file_path: 'z.txt', content: 'z' },
);

const action = fc.oneof(
  { arbitrary: createAction, weight: 4 },
  { arbitrary: updateAction, weight: 3 },
  { arbitrary: deleteAction, weight: 2 },
  { arbitrary: moveAction, weight: 3 },
  { arbitrary: badAction, weight: 1 },
);

const initialFiles = fc.uniqueArray(fc.tuple(path_, content), { selector: ([p]) => p, minLength: 1, maxLength: 3 });

// ---- the test ----

describe('snippet file actions against an in-memory model (property)', () => {
  let t: TestApp;
  let projectId: number;

  before(async () => {
    t = await createTestApp();
    const project = await t.request({
      method: 'POST',
      url: '/api/v4/projects',
      payload: { name: 'file-actions-prop' },
    });
    assert.equal(project.statusCode, 201, project.body);
    projectId = project.json.id;
  });
  after(() => t.close());

  /** git on a repository as the database holds it (this node's serving cache, brought up to date: t.gitDir). */
  const git = (dir: string, args: string[]) =>
    execFileSync('git', ['--git-dir', dir, ...args], {
      encoding: 'buffer',
      stdio: ['ignore', 'pipe', 'pipe'],
    });

  /** The snippet as served over HTTP must show exactly the model's files. */
  async function assertServed(sid: number, files: Map<string, string>, where: string) {
    const base = `/api/v4/projects/${projectId}/snippets/${sid}`;
    const shown = await t.request({ method: 'GET', url: base });
    assert.equal(shown.statusCode, 200, `${where}: ${shown.body}`);
    const expected = sortedPaths(files);
    assert.deepEqual(
      shown.json.files.map((f: { path: string }) => f.path),
      expected,
      `${where}: files`,
    );
    if (expected.length) assert.equal(shown.json.file_name, expected[0], `${where}: file_name is the first path`);
    for (const p of expected) {
      const raw = await t.request({ method: 'GET', url: `${base}/files/main/${encodeURIComponent(p)}/raw` });
      assert.equal(raw.statusCode, 200, `${where}: raw ${p}: ${raw.body}`);
      assert.deepEqual(raw.rawPayload, Buffer.from(files.get(p)!), `${where}: content of ${p}`);
    }
    if (expected.length) {
      const raw = await t.request({ method: 'GET', url: `${base}/raw` });
      assert.equal(raw.statusCode, 200, `${where}: snippet raw`);
      assert.deepEqual(raw.rawPayload, Buffer.from(files.get(expected[0])!), `${where}: snippet raw is the first file`);
    }
  }

  it('every step matches the model; the repository is sound and holds the model', async () => {
    await fc.assert(
      fc.asyncProperty(initialFiles, fc.array(action, { minLength: 1, maxLength: 8 }), async (initial, actions) => {
        const created = await t.request({
          method: 'POST',
          url: `/api/v4/projects/${projectId}/snippets`,
          payload: { title: 'prop', files: initial.map(([file_path, c]) => ({ file_path, content: c })) },
        });
        assert.equal(created.statusCode, 201, created.body);
        const sid: number = created.json.id;
        let files = new Map<string, string>(initial);
        let commits = 1;
        await assertServed(sid, files, 'after create');

        for (const [i, a] of actions.entries()) {
          const where = `step ${i} ${JSON.stringify(a)} on ${JSON.stringify(sortedPaths(files))}`;
          const expected = model(files, a);
          const res = await t.request({
            method: 'PUT',
            url: `/api/v4/projects/${projectId}/snippets/${sid}`,
            payload: { files: [a] },
          });
          assert.ok(
            expected.some((o) => o.status === res.statusCode),
            `${where}: status ${res.statusCode} ${res.body}, expected ${expected.map((o) => o.status).join(' or ')}`,
          );
          if (res.statusCode === 200) {
            files = (expected[0] as { files: Map<string, string> }).files;
            commits += 1;
          } else {
            assert.ok(
              expected.some(
                (o) =>
                  o.status === res.statusCode && 'body' in o && JSON.stringify(o.body) === JSON.stringify(res.json),
              ),
              `${where}: body ${res.body}, expected ${expected.map((o) => JSON.stringify('body' in o ? o.body : null)).join(' or ')}`,
            );
          }
          await assertServed(sid, files, where);
        }

        const dir = (await t.gitDir('snippet', sid))!;
        const fsck = (() => {
          try {
            git(dir, ['fsck', '--strict', '--no-progress']);
            return '';
          } catch (error) {
            const e = error as { stdout?: Buffer; stderr?: Buffer };
            return `${e.stdout ?? ''}${e.stderr ?? ''}` || String(error);
          }
        })();
        assert.equal(fsck, '', 'git fsck --strict');
        const tree = git(dir, ['ls-tree', '-r', '-z', '--name-only', 'main'])
          .toString('utf8')
          .split('\0')
          .filter(Boolean);
        assert.deepEqual(tree, sortedPaths(files), 'git ls-tree -r main');
        for (const p of tree)
          assert.deepEqual(
            git(dir, ['cat-file', 'blob', `main:${p}`]),
            Buffer.from(files.get(p)!),
            `git content of ${p}`,
          );
        assert.equal(
          Number(git(dir, ['rev-list', '--count', 'main']).toString().trim()),
          commits,
          'commit count = 1 + successful updates',
        );
        const messages = git(dir, ['log', '--format=%s', 'main']).toString().trim().split('\n');
        assert.deepEqual(messages, [...Array(commits - 1).fill('Update snippet'), 'Initial commit'], 'commit messages');
      }),
      {
        numRuns: 25,
        // Hand-picked sequences that random runs seldom reach, checked on every run of the file.
        examples: [
          // More than 10 files: the eighth unnamed create makes 11 (docs/gitlab-compatibility.md#d4).
          [
            [
              ['a.txt', 'x'],
              ['b.rb', 'x'],
              ['dir/c.md', 'x'],
            ],
            Array.from({ length: 8 }, () => ({ action: 'create', content: 'x' })),
          ],
          // Deleting every file, generated names, a move that keeps a generated name, then a rename.
          [
            [['a.txt', 'x']],
            [
              { action: 'delete', file_path: 'a.txt' },
              { action: 'create', file_path: '', content: 'y' },
              { action: 'create', content: 'y2' },
              { action: 'move', previous_path: 'snippetfile1.txt', file_path: '', content: 'z' },
              { action: 'move', previous_path: 'snippetfile2.txt', file_path: 'dir/sub/d.txt' },
              { action: 'move', previous_path: 'dir/sub/d.txt' },
            ],
          ],
          // Conflicts and malformed actions leave everything as it was.
          [
            [
              ['a.txt', 'x'],
              ['b.rb', 'y'],
            ],
            [
              { action: 'move', previous_path: 'a.txt', file_path: 'b.rb' },
              { action: 'create', file_path: 'a.txt', content: 'again' },
              { action: 'update', file_path: 'a.txt', previous_path: 'b.rb', content: 'q' },
              { action: 'update', file_path: 'dir/c.md', content: 'q' },
              { action: 'delete', file_path: 'dir/c.md' },
              { action: 'move', previous_path: 'a.txt', file_path: 'a.txt' },
              { action: 'create', file_path: 'e//f.txt', content: 'bad' },
              { action: 'update', file_path: 'b.rb', previous_path: 'b.rb', content: 'ok' },
            ],
          ],
        ],
      },
    );
  });
});
