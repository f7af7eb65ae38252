// The SQLite change-epoch reader (openSqlite in src/storage/db/database.ts): it runs the epoch query only
// when `PRAGMA data_version` says something was committed since the query last succeeded. A commit by any
// connection, in this process or another, must always be seen; a still database must not be queried again.
// Queries are counted by wrapping better-sqlite3's Statement.get (the library's, not ours).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { type Db, EPOCHS_SQL, type Epochs, openDatabase } from '../../src/storage/db/database.ts';
import { migrateToLatest } from '../../src/storage/db/migrate.ts';
import { insertUserRow, snippetRow } from '../helper.ts';

/** The access epoch moved on by `n` commits to the access tables. */
const plus = (epochs: unknown, n: number) => ({ ...(epochs as Epochs), access: (epochs as Epochs).access + n });

/** Counts the epoch queries run by any connection of this process. */
function countEpochQueries() {
  const probe = new SQLite(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1'));
  probe.close();
  const original = proto.get;
  const counter = { runs: 0, restore: () => (proto.get = original) };
  proto.get = function (this: SQLite.Statement, ...args: unknown[]) {
    if (this.source === EPOCHS_SQL) counter.runs++;
    return original.apply(this, args);
  };
  return counter;
}

async function openMigrated(url: string): Promise<Db> {
  const db = openDatabase(url);
  await migrateToLatest(db);
  return db;
}

/** A committed change to an access table, on the Db's own (Kysely) connection: the trigger moves the epoch. */
const setSetting = (db: Db, value: string) =>
  db.kysely
    .insertInto('application_settings')
    .values({ key: 'epoch-test', value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();

// It opens SQLite files of its own whatever SNIPPETD_TEST_DB says: once per `npm test` is enough.
const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'SQLite only: runs in the SQLite pass only';

describe('SQLite epoch reader', { skip }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'epoch-reader-'));
  const file = path.join(dir, 'db.sqlite3');
  const queries = countEpochQueries();
  let db: Db;
  let other: SQLite.Database;

  /** readEpoch's answer and how many epoch queries it ran. */
  const read = () => {
    const before = queries.runs;
    const epoch = db.readEpoch();
    return { epoch, queried: queries.runs - before };
  };

  before(async () => {
    db = await openMigrated(`sqlite:${file}`);
    other = new SQLite(file); // another connection, as a second node in this process would have
  });
  after(async () => {
    if (other.open) other.close();
    await db.close();
    queries.restore();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('queries on the first call, then not while nothing is committed (reads change nothing)', async () => {
    const first = read();
    assert.equal(first.queried, 1);
    assert.equal(typeof (first.epoch as Epochs).access, 'number');
    assert.equal(typeof (first.epoch as Epochs).content, 'number');
    assert.deepEqual(read(), { epoch: first.epoch, queried: 0 });
    await db.kysely.selectFrom('application_settings').selectAll().execute();
    other.prepare('SELECT count(*) FROM users').get();
    assert.deepEqual(read(), { epoch: first.epoch, queried: 0 });
  });

  it("sees each commit of the Db's own connection on the next call", async () => {
    for (let i = 0; i < 10; i++) {
      const { epoch } = read();
      await setSetting(db, `own-${i}`);
      assert.deepEqual(read(), { epoch: plus(epoch, 1), queried: 1 }, `commit ${i}`);
      assert.deepEqual(read(), { epoch: plus(epoch, 1), queried: 0 });
    }
  });

  it('a commit to a snippet table moves the content epoch alone, one to an access table the access epoch', async () => {
    const now = '2026-01-01T00:00:00.000Z';
    const { epoch } = read();
    const author = await insertUserRow(db.kysely, now);
    const withUser = read();
    assert.deepEqual(withUser, { epoch: plus(epoch, 1), queried: 1 });
    await db.kysely
      .insertInto('snippets')
      .values(snippetRow(author.id, now, { visibility: 'private' }))
      .execute();
    const { access, content } = withUser.epoch as Epochs;
    assert.deepEqual(read(), { epoch: { access, content: content + 1 }, queried: 1 });
  });

  it('sees a commit of another connection in this process', () => {
    const { epoch } = read();
    other.prepare("UPDATE application_settings SET value = 'other' WHERE key = 'epoch-test'").run();
    assert.deepEqual(read(), { epoch: plus(epoch, 1), queried: 1 });
    assert.deepEqual(read(), { epoch: plus(epoch, 1), queried: 0 });
  });

  it('sees a commit of another process', () => {
    const { epoch } = read();
    const script = `const D = require('better-sqlite3'); const d = new D(${JSON.stringify(file)}); d.prepare("UPDATE application_settings SET value = 'process' WHERE key = 'epoch-test'").run(); d.close();`;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(read(), { epoch: plus(epoch, 1), queried: 1 });
  });

  it('sees a commit after a checkpoint restarted the WAL from its start', async () => {
    other.pragma('wal_checkpoint(TRUNCATE)');
    const { epoch } = read();
    await setSetting(db, 'after-checkpoint');
    assert.deepEqual(read(), { epoch: plus(epoch, 1), queried: 1 });
  });

  it('after a failed query, queries again on the next call rather than answer the last epoch', () => {
    const { epoch } = read();
    other.exec('ALTER TABLE change_epoch RENAME TO change_epoch_away');
    for (let i = 0; i < 2; i++) {
      const before = queries.runs;
      assert.throws(() => db.readEpoch(), /no such table: change_epoch/);
      assert.equal(queries.runs - before, 1, `attempt ${i}`);
    }
    other.exec('ALTER TABLE change_epoch_away RENAME TO change_epoch');
    assert.deepEqual(read(), { epoch, queried: 1 });
    assert.deepEqual(read(), { epoch, queried: 0 });
  });

  it('closes its own connection with the Db (the last one to close removes the WAL file)', async () => {
    other.close();
    assert.ok(fs.existsSync(`${file}-wal`));
    await db.close();
    assert.equal(db.readEpoch(), null);
    assert.equal(fs.existsSync(`${file}-wal`), false);
  });

  it('works in rollback-journal mode too', async () => {
    const rollback = path.join(dir, 'rollback.sqlite3');
    db = await openMigrated(`sqlite:${rollback}`);
    await sql`PRAGMA journal_mode = DELETE`.execute(db.kysely);
    other = new SQLite(rollback);
    assert.equal(other.pragma('journal_mode', { simple: true }), 'delete');
    const { epoch } = read();
    assert.deepEqual(read(), { epoch, queried: 0 });
    await setSetting(db, 'rollback-own');
    assert.deepEqual(read(), { epoch: plus(epoch, 1), queried: 1 });
    other.prepare("UPDATE application_settings SET value = 'rollback-other' WHERE key = 'epoch-test'").run();
    assert.deepEqual(read(), { epoch: plus(epoch, 2), queried: 1 });
    assert.deepEqual(read(), { epoch: plus(epoch, 2), queried: 0 });
  });

  it('in memory, queries every time and sees its own commits; unknown while a transaction is open', async () => {
    const memory = await openMigrated('sqlite::memory:');
    try {
      const before = queries.runs;
      const epoch = memory.readEpoch();
      await setSetting(memory, 'memory');
      assert.deepEqual(memory.readEpoch(), plus(epoch, 1));
      assert.deepEqual(memory.readEpoch(), plus(epoch, 1));
      assert.equal(queries.runs - before, 3);
      await memory.kysely.transaction().execute(async (tx) => {
        await tx.insertInto('application_settings').values({ key: 'in-tx', value: 'x' }).execute();
        assert.equal(memory.readEpoch(), null);
      });
      assert.deepEqual(memory.readEpoch(), plus(epoch, 2));
    } finally {
      await memory.close();
    }
  });
});
