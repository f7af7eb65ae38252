// A compare runs up to three git processes (merge-base, rev-list, diff-tree): they share one git time budget
// (SNIPPETD_RENDER_BUDGET_MS), so the request answers 408 {"message":"408 Request Timeout"} within one budget, not
// within three. Each of the three is slowed by a git in front of the real one on the PATH the server gives git.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, projectWithSideBranch, type TestApp } from '../helper.ts';

const BUDGET_MS = 1000;
const TIMEOUT = { message: '408 Request Timeout' };

describe("a compare's git processes share one time budget", () => {
  let t: TestApp;
  let token: string;
  let P: number;
  let work: string;
  let gitEnv: { PATH: string | undefined };
  let pathBefore: string | undefined;

  /** From now on, each of a compare's three git commands starts `ms` late. */
  function slowCompareSteps(ms: number) {
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const dir = fs.mkdtempSync(path.join(work, 'bin-'));
    // git --git-dir <dir> <command> …: the command is the third argument.
    fs.writeFileSync(
      path.join(dir, 'git'),
      `#!/bin/sh\ncase "$3" in merge-base|rev-list|diff-tree) sleep ${ms / 1000} </dev/null >/dev/null 2>&1;; esac\nexec ${real} "$@"\n`,
      { mode: 0o755 },
    );
    gitEnv.PATH = `${dir}:${pathBefore}`;
  }

  before(async () => {
    t = await createTestApp({ renderBudgetMs: BUDGET_MS });
    ({ GIT_ENV: gitEnv } = await import('../../src/storage/git/history.ts'));
    pathBefore = gitEnv.PATH;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-compare-budget-'));
    token = (await t.user('alice')).token;
    P = await projectWithSideBranch(t, token);
  });
  after(async () => {
    if (gitEnv) gitEnv.PATH = pathBefore;
    await t?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('answers when the three steps together stay within the budget', async () => {
    // A tenth each: well within the budget on a loaded machine too.
    slowCompareSteps(BUDGET_MS / 10);
    try {
      const res = await t.ok('GET', `/projects/${P}/repository/compare?from=main&to=side`, token, undefined, 200);
      assert.deepEqual(
        res.diffs.map((d: { new_path: string }) => d.new_path),
        ['a.txt'],
      );
    } finally {
      gitEnv.PATH = pathBefore;
    }
  });

  it('answers 408 within a budget or so when each step takes under one but the three together more', async () => {
    slowCompareSteps(BUDGET_MS * 0.45);
    try {
      const started = performance.now();
      await t.fails('GET', `/projects/${P}/repository/compare?from=main&to=side`, token, undefined, 408, TIMEOUT);
      const took = performance.now() - started;
      // Three steps of 0.45 each answered 200 after about 1.4 budgets when each had a budget of its own.
      assert.ok(took < BUDGET_MS * 2, `the compare took ${Math.round(took)} ms, over two budgets of ${BUDGET_MS}`);
    } finally {
      gitEnv.PATH = pathBefore;
    }
  });
});
