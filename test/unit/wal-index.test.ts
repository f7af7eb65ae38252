// The WAL-index header check that lets the change-epoch query be skipped (src/storage/db/wal-index.ts):
// a commit by any connection, in this process or another, must always show as a change.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { WalIndexHeader } from '../../src/storage/db/wal-index.ts';

describe('WalIndexHeader', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wal-index-'));
  const file = path.join(dir, 'db.sqlite3');
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (n INTEGER)');
  const header = new WalIndexHeader(file);
  after(() => {
    header.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** What the epoch reader does: ask, and record only after a successful query. */
  const check = () => {
    const same = header.unchanged();
    if (!same) header.accept();
    return same;
  };

  it('says "changed" until a header was recorded, then "unchanged" while nothing is committed', () => {
    assert.equal(check(), false);
    assert.equal(check(), true);
    db.prepare('SELECT count(*) FROM t').get(); // reads change nothing
    assert.equal(check(), true);
  });

  it('sees every commit of this process, one after another', () => {
    for (let i = 0; i < 20; i++) {
      db.prepare('INSERT INTO t VALUES (?)').run(i);
      assert.equal(check(), false, `commit ${i}`);
      assert.equal(check(), true);
    }
  });

  it('sees a commit of another process', () => {
    const script = `const D = require('better-sqlite3'); const d = new D(${JSON.stringify(file)}); d.prepare('INSERT INTO t VALUES (1)').run(); d.close();`;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.equal(check(), false);
    assert.equal(check(), true);
  });

  it('sees a commit after a checkpoint restarted the WAL from its start', () => {
    db.pragma('wal_checkpoint(TRUNCATE)');
    check();
    db.prepare('INSERT INTO t VALUES (2)').run();
    assert.equal(check(), false);
  });

  it('keeps saying "changed" while the query after it fails (nothing is recorded without accept)', () => {
    db.prepare('INSERT INTO t VALUES (3)').run();
    assert.equal(header.unchanged(), false); // the query would run now, and fail: no accept()
    assert.equal(header.unchanged(), false);
    header.accept();
    assert.equal(header.unchanged(), true);
  });

  it('watches the index beside the real file when the database path is a symbolic link', () => {
    const link = path.join(dir, 'link.sqlite3');
    fs.symlinkSync(file, link);
    fs.writeFileSync(`${link}-shm`, Buffer.alloc(32768)); // a stale file where a naive path would look
    const linked = new WalIndexHeader(link);
    const linkedCheck = () => {
      const same = linked.unchanged();
      if (!same) linked.accept();
      return same;
    };
    linkedCheck();
    assert.equal(linkedCheck(), true);
    db.prepare('INSERT INTO t VALUES (4)').run();
    assert.equal(linkedCheck(), false);
    linked.close();
  });

  it('never trusts a header that is not a valid one (not initialised, unknown format)', () => {
    const fake = path.join(dir, 'fake.sqlite3');
    fs.writeFileSync(`${fake}-shm`, Buffer.alloc(32768));
    const zeros = new WalIndexHeader(fake);
    for (let i = 0; i < 3; i++) {
      assert.equal(zeros.unchanged(), false);
      zeros.accept();
    }
    zeros.close();
  });

  it('without a WAL index (no such file) always says "changed"', () => {
    const missing = new WalIndexHeader(path.join(dir, 'nothing.sqlite3'));
    assert.equal(missing.unchanged(), false);
    missing.accept();
    assert.equal(missing.unchanged(), false);
    missing.close();
  });
});
