// SQLite's search indexing (search-indexing.ts), in a worker thread of search-indexer.ts: FTS5 inserts and
// merges hold their thread for milliseconds to seconds, never the event loop. Each task is one short
// transaction, run while the main thread holds the process's write lock. Run through tsx from src/; built as
// storage/db/search-index-worker.js (scripts/build.mjs).
import SQLite from 'better-sqlite3';
import { hasQueuedWork, indexStepTransaction } from './search-indexing.ts';

/** A connection of this thread's own per database file, kept between tasks. */
const connections = new Map<string, SQLite.Database>();

function connection(file: string): SQLite.Database {
  let sqlite = connections.get(file);
  if (!sqlite) {
    sqlite = new SQLite(file, { fileMustExist: true, timeout: 5000 });
    // NORMAL: a step lost to a crash is lost with its queue row's progress, so it is done again, not skipped.
    sqlite.pragma('synchronous = NORMAL');
    connections.set(file, sqlite);
  }
  return sqlite;
}

export interface IndexTask {
  file: string;
  /** Only say whether work is queued (read without the write lock). */
  peek?: boolean;
  budgetMs: number;
}

export default function run(task: IndexTask): { idle: boolean } {
  const sqlite = connection(task.file);
  if (task.peek) return { idle: !hasQueuedWork(sqlite) };
  return indexStepTransaction(sqlite, task.budgetMs);
}
