// Two writers of one repository's refs on PostgreSQL, where transactions run at once: each takes the
// repository's row before any ref's. A push that moved its refs first and counted the move after (the row
// last) deadlocked a file write that had taken the row first (helper-60: 40P01 after a second).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestApp, ROOT_TOKEN, TEST_DB, type TestApp } from '../helper.ts';
import { RefConflict } from '../../src/storage/git/repository.ts';

describe('the order writers lock a repository and its refs in', {
  skip: TEST_DB !== 'postgres' && 'PostgreSQL only: SQLite has one writer',
}, () => {
  let t: TestApp;
  let projectId: number;
  before(async () => {
    t = await createTestApp();
    projectId = (await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'locks', initialize_with_readme: true }, 201)).id;
  });
  after(() => t.close());

  it('a push waits for a write that took the repository first, then moves its refs, without a deadlock', async () => {
    const store = t.app.store;
    const repo = (await store.git.find('project', projectId))!;
    const main = (await repo.readBranch('main'))!;
    let writeHolds!: () => void;
    const holding = new Promise<void>((resolve) => (writeHolds = resolve));
    let goOn!: () => void;
    const wait = new Promise<void>((resolve) => (goOn = resolve));
    // A file write's last try: the repository's row first, then its branch.
    const write = store.transaction(async (tx) => {
      const mine = repo.on(tx.kysely);
      await mine.lockRefs();
      writeHolds();
      await wait;
      await mine.moveRef('refs/tags/written', null, main);
      await mine.moveRef('refs/heads/main', main, main);
    });
    await holding;
    // A push that brings no objects (it deletes a branch): its transaction takes no row before its refs'.
    const push = store
      .transaction((tx) => repo.on(tx.kysely).moveRefs([{ ref: 'refs/heads/main', old: main, new: null }]))
      .then(
        () => 'moved',
        (error) => (error instanceof RefConflict ? 'conflict' : `failed: ${(error as Error).message}`),
      );
    await sleep(200); // the push is waiting now, for the row or for the branch
    goOn();
    await write;
    assert.equal(await push, 'moved');
  });
});
