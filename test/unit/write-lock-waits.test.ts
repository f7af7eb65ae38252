// SQLite's one connection while a write waits for the write lock (src/storage/db/database.ts): the lock is
// held by the search indexer's step or, with several workers, by another worker's write, and the reads
// queued behind the waiting write are answered meanwhile instead of waiting with it. Here the test itself
// holds the lock, as a step does (the process's lock of the file, src/storage/db/write-lock.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { type Db, openDatabase } from '../../src/storage/db/database.ts';
import { processWriteLock } from '../../src/storage/db/write-lock.ts';

/** `promise`, or a failure naming `what` if it has not settled within two seconds. */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish while the write lock was held`)), 2000);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const count = async (db: Db) =>
  Number((await sql<{ n: number }>`SELECT count(*) AS n FROM notes`.execute(db.kysely)).rows[0].n);

// It opens a SQLite file of its own whatever SNIPPETD_TEST_DB says: once per `npm test` is enough.
const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'SQLite only: runs in the SQLite pass only';

describe('SQLite reads while a write waits for the write lock', { skip }, () => {
  let dir: string;
  let file: string;
  let db: Db;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-write-lock-'));
    file = path.join(dir, 'snippetd.sqlite3');
    db = openDatabase(`sqlite:${file}`);
    await sql`CREATE TABLE notes (text TEXT NOT NULL)`.execute(db.kysely);
  });
  after(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers reads while a single write and a transaction wait, then runs both writes in order', async () => {
    // Without workers the process's lock has no primary above it.
    const lock = processWriteLock(file, null);
    await lock.acquire();
    let lockReleased = false;
    const single = sql`INSERT INTO notes (text) VALUES ('single')`.execute(db.kysely).then(() => {
      assert.ok(lockReleased, 'the single write ran before the lock was released');
    });
    const transaction = db.kysely
      .transaction()
      .execute((tx) => sql`INSERT INTO notes (text) VALUES ('in a transaction')`.execute(tx))
      .then(() => assert.ok(lockReleased, 'the transaction ran before the lock was released'));
    try {
      assert.equal(await within(count(db), 'a read behind a waiting write'), 0);
      assert.equal(await within(count(db), 'a second read'), 0);
    } finally {
      lockReleased = true;
      lock.release();
    }
    await within(Promise.all([single, transaction]), 'the writes after the release');
    const texts = (await sql<{ text: string }>`SELECT text FROM notes ORDER BY rowid`.execute(db.kysely)).rows;
    assert.deepEqual(
      texts.map((r) => r.text),
      ['single', 'in a transaction'],
    );
  });

  it("a transaction SQLite ended on its own (a full disk's SQLITE_FULL) fails with its own error, and the next one runs", async () => {
    // SQLite rolls a transaction back itself on some errors; Kysely's rollback then found none, and its error
    // ("cannot rollback - no transaction is active") took the place of the one that said what happened.
    const failed = db.kysely.transaction().execute(async (tx) => {
      await sql`INSERT INTO notes (text) VALUES ('rolled back by SQLite')`.execute(tx);
      await sql`ROLLBACK`.execute(tx);
      throw new Error('database or disk is full');
    });
    await assert.rejects(failed, /database or disk is full/);
    await within(
      db.kysely.transaction().execute((tx) => sql`INSERT INTO notes (text) VALUES ('after')`.execute(tx)),
      'a transaction after it',
    );
    const texts = (await sql<{ text: string }>`SELECT text FROM notes ORDER BY rowid`.execute(db.kysely)).rows;
    assert.deepEqual(
      texts.map((r) => r.text),
      ['single', 'in a transaction', 'after'],
    );
  });
});
