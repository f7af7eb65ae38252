// SQLite's search indexer (storage/db/search-indexer.ts) when its steps fail, as on a full disk: it tried again
// five times a second, each try growing the log by what had just been freed, and said why as "undefined" when
// the error had no message. It now waits twice as long after each failure in a row, and closing ends the wait.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDatabase, startSearchIndexer } from '../../src/storage/db/database.ts';
import { migrateToLatest } from '../../src/storage/db/migrate.ts';

// It opens SQLite databases of its own whatever SNIPPETD_TEST_DB says: once per `npm test` is enough.
const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'SQLite only: runs in the SQLite pass only';

describe("the search indexer's failing steps", { skip }, () => {
  it('are tried again later and later, each named, and closing does not wait for the next try', async () => {
    const db = openDatabase('sqlite::memory:');
    await migrateToLatest(db);
    // Work queued that no step can do: the full-text table it writes is gone.
    await sql`PRAGMA foreign_keys = OFF`.execute(db.kysely);
    await sql`INSERT INTO snippets (id, title, visibility, author_id, created_at, updated_at)
      VALUES (1, 't', 'private', 1, '', '')`.execute(db.kysely);
    await sql`DROP TABLE snippet_file_text_fts`.execute(db.kysely);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => {
      if (warning.message.startsWith('a search index step failed')) warnings.push(warning.message);
    };
    process.on('warning', onWarning);
    let closed = false;
    try {
      startSearchIndexer(db);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      // At 200 ms a try: a dozen. Waiting 400, 800, 1,600 ms after the first three: three, maybe four.
      assert.ok(warnings.length >= 2 && warnings.length <= 4, `${warnings.length} tries in 2.5 s`);
      assert.match(warnings[0], /^a search index step failed \(1 in a row\): .*snippet_file_text_fts/);
      assert.match(warnings[1], /^a search index step failed \(2 in a row\): /);
      const closing = performance.now();
      await db.close();
      closed = true;
      assert.ok(performance.now() - closing < 1000, 'closed without waiting for the next try');
    } finally {
      process.off('warning', onWarning);
      if (!closed) await db.close(); // else the indexer's tries keep the test's process alive
    }
  });
});
