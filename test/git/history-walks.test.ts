// A walk through history with a path reads, for every commit, the path's entry in its tree. A tree over the
// object cache's largest (256 KiB) is read from its row and parsed again each time, and the walk took its turn
// every 500 steps: 130 commits sharing one 700 KB root tree held the event loop for seconds (helper-56).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';
import { longestGapDuring } from '../stall.ts';

const GIT_ENV = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' };
const ENTRIES = 21_000;
const COMMITS = 130;

describe('a history of 130 commits sharing a root tree of 21,000 entries', () => {
  let t: TestApp;
  let project: { id: number };

  before(async () => {
    t = await createTestApp();
    project = await t.ok(
      'POST',
      '/projects',
      ROOT_TOKEN,
      { path: 'wide', visibility: 'public', initialize_with_readme: true },
      201,
    );
    const dir = (await t.gitDir('project', project.id))!;
    const lines = ['blob', 'mark :1', 'data 2', 'x', ''];
    lines.push('commit refs/heads/main', 'committer T <t@example.com> 1600000000 +0000', 'data 4', 'wide');
    lines.push('from refs/heads/main^0');
    for (let i = 0; i < ENTRIES; i++) lines.push(`M 100644 :1 file-${String(i).padStart(6, '0')}`);
    for (let i = 1; i <= COMMITS; i++)
      lines.push(
        '',
        'commit refs/heads/main',
        `committer T <t@example.com> ${1600000000 + i} +0000`,
        'data 5',
        'empty',
      );
    execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, env: GIT_ENV, input: `${lines.join('\n')}\n\n` });
    await t.importGitDir('project', project.id);
  });
  after(() => t.close());

  it('lists the commits changing a path that none has, the event loop free meanwhile', async () => {
    const url = `/projects/${project.id}/repository/commits?path=nothing-here&per_page=1`;
    const { answer, longestGap } = await longestGapDuring(() => t.api('GET', url, ROOT_TOKEN));
    assert.equal(answer.statusCode, 200);
    assert.deepEqual(answer.json, []);
    assert.ok(longestGap < 250, `the event loop went ${longestGap.toFixed(0)} ms without a turn`);
  });

  it('lists its root through the API a page at a time, and on its page the first thousand entries', async () => {
    const url = `/projects/${project.id}/repository/tree?per_page=2&page=3`;
    const { answer, longestGap } = await longestGapDuring(() => t.api('GET', url, ROOT_TOKEN));
    assert.equal(answer.statusCode, 200);
    assert.deepEqual(
      answer.json.map((e: { path: string }) => e.path),
      ['file-000003', 'file-000004'],
    );
    assert.ok(longestGap < 250, `the event loop went ${longestGap.toFixed(0)} ms without a turn`);
    const page = await t.request({ method: 'GET', url: '/root/wide/-/tree/main' });
    assert.equal(page.statusCode, 200);
    assert.equal(page.body.match(/<li><a href="[^"]*\/-\/blob\/main\//g)?.length, 1000);
    assert.match(page.body, /The first 1,000 entries are shown, 20,001 more are not\./);
  });

  it('finds the commit that added a file among them', async () => {
    const url = `/projects/${project.id}/repository/commits?path=file-000007`;
    const { answer, longestGap } = await longestGapDuring(() => t.api('GET', url, ROOT_TOKEN));
    assert.equal(answer.statusCode, 200);
    assert.deepEqual(
      answer.json.map((c: { title: string }) => c.title),
      ['wide'],
    );
    assert.ok(longestGap < 250, `the event loop went ${longestGap.toFixed(0)} ms without a turn`);
  });
});
