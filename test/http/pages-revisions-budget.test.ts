// The revisions pages within their time budget (SNIPPETD_RENDER_BUDGET_MS, here 1 ms; each revision rewrites
// every line of a 20,000-line file, so git's diffs take it far longer): the revisions are listed without their
// files, with a notice; a diff says it took too long; neither fails, and no git process is left running.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const gitChildren = () =>
  execFileSync('ps', ['-o', 'args=', '--ppid', String(process.pid)])
    .toString()
    .split('\n')
    .filter((line) => line.startsWith('git --git-dir'));

describe('revisions pages over their time budget', () => {
  let t: TestApp;
  let snippet: any;

  before(async () => {
    t = await createTestApp({ renderBudgetMs: 1 });
    const lines = (n: number) => Array.from({ length: 20_000 }, (_, i) => `line ${i} of revision ${n}\n`).join('');
    snippet = await t.must('POST', '/snippets', ROOT_TOKEN, {
      title: 'slow',
      visibility: 'public',
      files: [{ file_path: 'a.txt', content: lines(0) }],
    });
    for (let n = 1; n <= 5; n++)
      await t.must('PUT', `/snippets/${snippet.id}`, ROOT_TOKEN, {
        files: [{ action: 'update', file_path: 'a.txt', content: lines(n) }],
      });
  });
  after(() => t.close());

  it('lists the revisions without their files, and a diff says it took too long', async () => {
    const web = new URL(snippet.web_url).pathname;
    const list = await t.request({ method: 'GET', url: `${web}/revisions`, token: null });
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /<p class="notice">The files these revisions changed could not be listed here/);
    const ids = [...list.body.matchAll(/<h2><a href="[^"]*\/revisions\/([0-9a-f]{40})">([^<]*)<\/a><\/h2>/g)];
    assert.deepEqual(
      ids.map((m) => m[2]),
      ['Update snippet', 'Update snippet', 'Update snippet', 'Update snippet', 'Update snippet', 'Initial commit'],
    );
    assert.doesNotMatch(list.body, /class="changes"/);
    const diff = await t.request({ method: 'GET', url: `${web}/revisions/${ids[0][1]}`, token: null });
    assert.equal(diff.statusCode, 200);
    assert.match(diff.body, /<p class="notice">Working out this revision's changes took too long\.<\/p>/);
    assert.doesNotMatch(diff.body, /class="file diff-file"/);
    assert.deepEqual(gitChildren(), []);
  });
});
