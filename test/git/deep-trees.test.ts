// A path through a chain of large trees: each one over the object cache's largest (256 KiB) is read from its
// row and parsed again at every look-up, 30-45 ms a level here. A file fourteen such levels deep held the event
// loop for the whole descent at each request (helper-57: 321 ms at eight); it now takes turns between levels.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
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
    const files = Array.from({ length: ENTRIES }, (_, i) => `100644 blob ${blob}\tfile-${String(i).padStart(6, '0')}`);
    let tree = git(['mktree'], `100644 blob ${blob}\ttarget\n`);
    for (let level = 0; level < LEVELS; level++)
      tree = git(['mktree'], `${[...files, `040000 tree ${tree}\td`].join('\n')}\n`);
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
