// Random sequences of API updates and git pushes to one snippet, interleaved: afterwards what the database
// holds (the snippet's files as the API lists them, raw of each, the index of its head, the commit count)
// is exactly what git computes from a fresh clone, and both are what the steps made, as a model of the files
// kept apart from the server says; every push is accepted unless it deletes the last file, and every
// repository's rows pass snippetd's fsck.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';
import { fsck } from '../../src/domain/fsck.ts';

const NAMES = ['a.txt', 'b.rb', 'dir/c.md', 'dir/deep/d.txt'];

type Step =
  | { via: 'api'; action: 'create' | 'update' | 'delete'; file: string; content: string }
  | { via: 'push'; file: string; content: string | null };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    via: fc.constant('api' as const),
    action: fc.constantFrom('create' as const, 'update' as const, 'delete' as const),
    file: fc.constantFrom(...NAMES),
    content: fc.string({ maxLength: 20 }),
  }),
  fc.record({
    via: fc.constant('push' as const),
    file: fc.constantFrom(...NAMES),
    content: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: null }),
  }),
);

const gitEnv = {
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'P',
  GIT_AUTHOR_EMAIL: 'p@example.com',
  GIT_COMMITTER_NAME: 'P',
  GIT_COMMITTER_EMAIL: 'p@example.com',
};
const run = promisify(execFile);
/** Asynchronous: the server answering git runs in this process. */
const git = async (cwd: string, ...args: string[]) => (await run('git', args, { cwd, env: gitEnv })).stdout;
const tryGit = (cwd: string, ...args: string[]) =>
  git(cwd, ...args).then(
    () => true,
    () => false,
  );

describe('API updates and pushes, interleaved at random', () => {
  let t: TestApp;
  let project: { id: number; path_with_namespace: string };
  let base: string;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-prop-'));

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://root:${ROOT_TOKEN}@127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    project = await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'prop', visibility: 'public' }, 201);
  });
  after(async () => {
    await t.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('leaves the rows equal to what git computes from a clone', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 8 }), async (steps) => {
        const snippet = await t.ok(
          'POST',
          `/projects/${project.id}/snippets`,
          ROOT_TOKEN,
          { title: 'p', files: [{ file_path: 'a.txt', content: 'start' }] },
          201,
        );
        const url = `/projects/${project.id}/snippets/${snippet.id}`;
        const clone = path.join(work, `run-${run++}`);
        await git(work, 'clone', '-q', `${base}/${project.path_with_namespace}/snippets/${snippet.id}.git`, clone);
        let commits = 1;
        /** The files the snippet must hold, path to content: what the accepted steps made. */
        let model = new Map([['a.txt', 'start']]);
        const filesOf = async (dir: string) =>
          new Map(
            await Promise.all(
              (await git(dir, 'ls-files', '-z'))
                .split('\0')
                .filter(Boolean)
                .map(async (p) => [p, await fs.promises.readFile(path.join(dir, p), 'utf8')] as [string, string]),
            ),
          );
        for (const step of steps) {
          if (step.via === 'api') {
            const res = await t.api('PUT', url, ROOT_TOKEN, {
              files: [{ action: step.action, file_path: step.file, content: step.content }],
            });
            assert.ok(
              [200, 400, 422].includes(res.statusCode),
              `${JSON.stringify(step)}: ${res.statusCode} ${res.body}`,
            );
            if (res.statusCode !== 200) continue;
            commits++;
            if (step.action === 'delete') model.delete(step.file);
            else model.set(step.file, step.content);
            continue;
          }
          await git(clone, 'fetch', '-q', 'origin');
          await git(clone, 'reset', '-q', '--hard', 'origin/main');
          assert.deepEqual(await filesOf(clone), model, 'a fetch gives what the steps made so far');
          const next = new Map(model);
          const file = path.join(clone, step.file);
          if (step.content === null) {
            fs.rmSync(file, { force: true });
            next.delete(step.file);
          } else {
            fs.mkdirSync(path.dirname(file), { recursive: true });
            fs.writeFileSync(file, step.content);
            next.set(step.file, step.content);
          }
          await git(clone, 'add', '-A');
          // Nothing to commit: the same content, or a file that was not there.
          if (!(await tryGit(clone, 'commit', '-qm', 'push step'))) {
            assert.deepEqual(next, model, `${JSON.stringify(step)} changed nothing`);
            continue;
          }
          // The rules refuse a push that leaves no file; any other is accepted.
          const pushed = await tryGit(clone, 'push', '-q', 'origin', 'HEAD:main');
          assert.equal(pushed, next.size > 0, `${JSON.stringify(step)}: push accepted`);
          if (!pushed) continue;
          commits++;
          model = next;
        }

        const fresh = path.join(work, `fresh-${run}`);
        await git(work, 'clone', '-q', `${base}/${project.path_with_namespace}/snippets/${snippet.id}.git`, fresh);
        const tree = (await git(fresh, 'ls-tree', '-r', '-l', '-z', 'main'))
          .split('\0')
          .filter(Boolean)
          .map((line) => {
            const [meta, p] = line.split('\t');
            const [, , id, size] = meta.split(/\s+/);
            return { path: p, blob_id: id, size: Number(size) };
          });
        assert.equal(Number((await git(fresh, 'rev-list', '--count', 'main')).trim()), commits, 'commits');
        assert.deepEqual(await filesOf(fresh), model, 'a fresh clone holds what the steps made');
        const shown = await t.ok('GET', url, ROOT_TOKEN, undefined, 200);
        assert.deepEqual(
          shown.files.map((f: { path: string }) => f.path),
          tree.map((e) => e.path),
        );
        assert.deepEqual(await t.app.store.snippets.fileIndex(snippet.id), tree, 'the index of the head');
        for (const e of tree) {
          const raw = await t.request({
            method: 'GET',
            url: `/api/v4${url}/files/main/${encodeURIComponent(e.path)}/raw`,
          });
          assert.equal(raw.body, fs.readFileSync(path.join(fresh, e.path), 'utf8'), e.path);
        }
      }),
      { numRuns: 12 },
    );
    assert.deepEqual((await fsck(t.app.store, false)).problems, []);
  });
});
