// SQLite's search indexer (storage/db/search-indexing.ts) takes a large source in steps, each within its budget,
// the later steps from the text the first one read. One thread, or an in-memory database's main thread, indexes
// every database its process opened: a step of one database must never take another's text.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { openDatabase } from '../../src/storage/db/database.ts';
import { migrateToLatest } from '../../src/storage/db/migrate.ts';
import { indexStepTransaction } from '../../src/storage/db/search-indexing.ts';

// It opens SQLite files of its own whatever SNIPPETD_TEST_DB says: once per `npm test` is enough.
const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'SQLite only: runs in the SQLite pass only';

describe("the search indexer's steps", { skip }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'index-steps-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A migrated database file holding one snippet with one file of `content`, its indexing queued. */
  async function databaseWith(name: string, content: string): Promise<SQLite.Database> {
    const file = path.join(dir, `${name}.sqlite3`);
    const db = openDatabase(`sqlite:${file}`);
    await migrateToLatest(db);
    await db.close();
    const sqlite = new SQLite(file);
    sqlite.pragma('foreign_keys = OFF'); // a snippet without its author: only the indexer reads these rows
    sqlite
      .prepare(
        "INSERT INTO snippets (id, title, visibility, author_id, created_at, updated_at) VALUES (1, 't', 'private', 1, '', '')",
      )
      .run();
    sqlite
      .prepare('INSERT INTO snippet_file_text (snippet_id, path, content) VALUES (1, ?, ?)')
      .run(`${name}.txt`, content);
    // The file's work alone: the same queued work id in both databases.
    sqlite.prepare("DELETE FROM search_index_queue WHERE kind = 'fields'").run();
    return sqlite;
  }
  /** Whether any piece indexed holds the trigram (the index keeps no positions: no phrases). */
  const holds = (sqlite: SQLite.Database, trigram: string) =>
    (
      sqlite
        .prepare('SELECT count(*) AS n FROM snippet_file_text_fts WHERE snippet_file_text_fts MATCH ?')
        .get(`"${trigram}"`) as { n: number }
    ).n > 0;

  it("indexes each database's own text, however their steps interleave", async () => {
    const words = (word: string) => Array.from({ length: 200_000 }, (_, i) => `${word}${i} `).join('');
    const alpha = await databaseWith('alpha', words('alpha'));
    const bravo = await databaseWith('bravo', words('bravo'));
    try {
      // A step of alpha's that leaves its source half done, then bravo's steps to the end, then alpha's.
      assert.equal(indexStepTransaction(alpha, 1).idle, false);
      while (!indexStepTransaction(bravo, 5).idle);
      while (!indexStepTransaction(alpha, 5).idle);
      // Bravo's same queued work id took alpha's text, its path included: its own words were never found.
      assert.deepEqual([holds(bravo, 'bra'), holds(bravo, 'alp'), holds(bravo, 'o.t')], [true, false, true]);
      assert.deepEqual([holds(alpha, 'alp'), holds(alpha, 'bra'), holds(alpha, 'a.t')], [true, false, true]);
    } finally {
      alpha.close();
      bravo.close();
    }
  });
});
