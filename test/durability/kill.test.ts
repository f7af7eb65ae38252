// kill -9 in the middle of API updates, git pushes, snippet creates and deletes, again and again: after each
// restart every acknowledged write is there and every acknowledged delete stays deleted (a write or delete
// in flight is wholly there or wholly absent), every snippet's files in the API equal a fresh clone's file by
// file, fresh clones pass `git fsck --strict`, nothing of a killed process is left behind, `snippetd fsck`
// finds nothing, and the snippets take new writes. The rules are in ./kill-rounds.ts, shared with
// bench/kill-loop.ts for long runs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { processStorage } from '../helper.ts';
import { killLoop } from './kill-rounds.ts';

const KILLS = 5;

describe('durability under kill -9', () => {
  let storage: Awaited<ReturnType<typeof processStorage>>;
  before(async () => {
    storage = await processStorage('snippetd-kill-');
  });
  after(() => storage.remove());

  it(`loses nothing acknowledged and leaves nothing behind across ${KILLS} kills`, async () => {
    const totals = await killLoop({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, kills: KILLS });
    assert.deepEqual(totals.problems, []);
    assert.equal(totals.kills, KILLS);
    assert.ok(totals.acknowledgedWrites > KILLS * 5, `the writers made progress (${totals.acknowledgedWrites} writes)`);
    assert.ok(totals.acknowledgedDeletes > 0, 'snippets were deleted');
    // The kills met writes in the middle (each then found wholly done or wholly absent, above).
    assert.ok(totals.inFlightAtKill >= KILLS, `writes in flight at the kills: ${totals.inFlightAtKill}`);
  });
});
