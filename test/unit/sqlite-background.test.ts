// SQLite's background thread (storage/db/sqlite-background.ts) indexes and checkpoints every database a process
// opens, one after another, and stays for the next one: closing an app must still leave none of its database's
// files open in the process, and the next app is indexed as the first was.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createTestApp, ROOT_TOKEN, TEST_DB, untilSearchIndexed } from '../helper.ts';

/** The files below `dir` this process (any of its threads) has open, deleted ones included. */
function openFilesBelow(dir: string): string[] {
  return fs.readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = fs.readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(`${dir}/`) ? [target] : [];
    } catch {
      return []; // closed since the listing
    }
  });
}

describe("SQLite's background thread across apps", { skip: TEST_DB !== 'sqlite' && 'SQLite only' }, () => {
  it('a closed app leaves no file of its database open, and the next app is indexed as the first', async () => {
    for (const word of ['quokka', 'wombat']) {
      const t = await createTestApp();
      const dataDir = t.config.dataDir;
      try {
        const snippet = await t.ok(
          'POST',
          '/snippets',
          ROOT_TOKEN,
          { title: word, visibility: 'private', files: [{ file_path: 'a.txt', content: `a ${word} here\n` }] },
          201,
        );
        // The indexer's steps empty its queue in the thread, on a connection of its own to the database.
        await untilSearchIndexed(t.app.store.kysely);
        const found = await t.ok('GET', `/search?scope=snippet_blobs&search=${word}`, ROOT_TOKEN, undefined, 200);
        assert.deepEqual(
          found.map((s: { id: number }) => s.id),
          [snippet.id],
        );
      } finally {
        await t.close();
      }
      assert.deepEqual(openFilesBelow(dataDir), []);
    }
  });
});
