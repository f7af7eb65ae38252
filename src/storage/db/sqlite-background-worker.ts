// SQLite's background work (sqlite-background.ts): the search index's steps (search-indexing.ts; FTS5 inserts
// and merges hold their thread for milliseconds to seconds, never the event loop), each one short transaction
// run while the main thread holds the process's write lock, and checkpoints of the log. Run through tsx from
// src/; built as storage/db/sqlite-background-worker.js (scripts/build.mjs).
import SQLite from 'better-sqlite3';
import { indexStepTransaction } from './search-indexing.ts';

/** A connection of this thread's own per database file, kept between tasks. */
const connections = new Map<string, SQLite.Database>();

function connection(file: string): SQLite.Database {
  let sqlite = connections.get(file);
  if (!sqlite) {
    sqlite = new SQLite(file, { fileMustExist: true, timeout: 5000 });
    // NORMAL: a step lost to a crash is lost with its queue row's progress, so it is done again, not skipped.
    sqlite.pragma('synchronous = NORMAL');
    // Not in a step's commit, under the write lock every write waits for: `checkpoint` tasks do it outside.
    sqlite.pragma('wal_autocheckpoint = 0');
    connections.set(file, sqlite);
  }
  return sqlite;
}

export type BackgroundTask =
  | {
      file: string;
      /** `checkpoint`: bring the log into the database file (it writes no row, so it needs no write lock);
       * `step`: index for about budgetMs. */
      kind: 'checkpoint' | 'step';
      budgetMs: number;
    }
  /** Nothing: answered once the thread has started. */
  | { kind: 'ready' }
  /** The connection to `file` closed: its database was closed on the main thread. */
  | { kind: 'close'; file: string };

export default function run(task: BackgroundTask): { idle: boolean } {
  if (task.kind === 'ready') return { idle: true };
  if (task.kind === 'close') {
    connections.get(task.file)?.close();
    connections.delete(task.file);
    return { idle: true };
  }
  const sqlite = connection(task.file);
  if (task.kind === 'checkpoint') {
    // PASSIVE: as much as no reader or writer needs, never waiting for one, so that none waits for it either.
    sqlite.pragma('wal_checkpoint(PASSIVE)');
    return { idle: true };
  }
  return indexStepTransaction(sqlite, task.budgetMs);
}
