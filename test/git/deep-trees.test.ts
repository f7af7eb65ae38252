// A path through a chain of large trees: each one over the object cache's largest (256 KiB) is read from its
// row and parsed again at every look-up, 30-45 ms a level here. A file fourteen such levels deep held the event
// loop for the whole descent at each request (helper-57: 321 ms at eight); it now takes turns between levels.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, gitSync, ROOT_TOKEN, type TestApp } from '../helper.ts';
import { longestGapDuring } from '../stall.ts';

const LEVELS = 14;
/** About 940 KB a tree: under the 1 MiB inflated at once, over the 256 KiB the object cache keeps. */
const ENTRIES = 24_000;
const DEEP = Array.from({ length: LEVELS }, () => 'd').join('/');

describe(`a file ${LEVELS} levels down a chain of trees of ${ENTRIES.toLocaleString('en')} entries`, () => {
  let t: TestApp;
  let project: { id: number };

  before(async () => {
    t = await createTestApp();
    project = await t.ok(
      'POST',
      '/projects',
      ROOT_TOKEN,
      { path: 'deep', visibility: 'public', initialize_with_readme: true },
      201,
    );
    const dir = (await t.gitDir('project', project.id))!;
    const git = gitSync(dir);
    const blob = git(['hash-object', '-w', '--stdin'], 'x\n');
    // The trees as git writes them (`<mode> <name>\0<id>`, in git's order: `d` before the files), all written by
    // one git process: a `git mktree` a level, each parsing 24,000 lines, took 4 s of CPU a run.
    const entry = (mode: string, name: string, id: string) =>
      Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(id, 'hex')]);
    const files = Buffer.concat(
      Array.from({ length: ENTRIES }, (_, i) => entry('100644', `file-${String(i).padStart(6, '0')}`, blob)),
    );
    const idOf = (body: Buffer) => crypto.createHash('sha1').update(`tree ${body.length}\0`).update(body).digest('hex');
    const trees = [entry('100644', 'target', blob)];
    for (let level = 0; level < LEVELS; level++)
      trees.push(Buffer.concat([entry('40000', 'd', idOf(trees.at(-1)!)), files]));
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-deep-trees-'));
    const paths = trees.map((body, i) => {
      fs.writeFileSync(path.join(work, `${i}`), body);
      return path.join(work, `${i}`);
    });
    const written = git(['hash-object', '-w', '-t', 'tree', '--stdin-paths'], `${paths.join('\n')}\n`).split('\n');
    fs.rmSync(work, { recursive: true, force: true });
    assert.deepEqual(written, trees.map(idOf), 'git wrote the trees as built');
    const tree = written.at(-1)!;
    git(['update-ref', 'refs/heads/main', git(['commit-tree', tree, '-p', 'main', '-m', 'deep'])]);
    await t.importGitDir('project', project.id);
  });
  after(() => t.close());

  for (const [what, url, expected] of [
    [
      'its raw',
      () => `/projects/${project.id}/repository/files/${encodeURIComponent(`${DEEP}/target`)}/raw?ref=main`,
      'x\n',
    ],
    [
      'the folder it is in',
      () => `/projects/${project.id}/repository/tree?path=${DEEP}&per_page=1`,
      [`${DEEP}/target`],
    ],
    ['the commits that changed it', () => `/projects/${project.id}/repository/commits?path=${DEEP}/target`, ['deep']],
  ] as const) {
    it(`answers ${what} taking turns on the way down`, async () => {
      await t.api('GET', url(), ROOT_TOKEN); // compiled and warm
      const { answer, longestGap } = await longestGapDuring(() => t.api('GET', url(), ROOT_TOKEN));
      assert.equal(answer.statusCode, 200);
      const body =
        typeof expected === 'string'
          ? answer.body
          : answer.json.map((e: { path?: string; title?: string }) => e.path ?? e.title);
      assert.deepEqual(body, expected);
      assert.ok(longestGap < 200, `the event loop went ${longestGap.toFixed(0)} ms without a turn`);
    });
  }
});
