// SQL functions snippetd adds to every SQLite connection that answers its queries (database.ts, and the reader
// threads of sqlite-read-worker.ts): each is also there on PostgreSQL, as a built-in or under the same name.
import type SQLite from 'better-sqlite3';

export function addSqlFunctions(sqlite: SQLite.Database): void {
  // SQLite's lower() folds ASCII letters only (Ä stays Ä); PostgreSQL's folds every letter, as this does.
  // A match with a text beyond ASCII goes through it (page.ts, lowerFunction); ASCII keeps the built-in.
  // Never in an index or a generated column: the connections without it (the background thread's, the sqlite3
  // shell) could not write such a table, and Node's next Unicode data could change what it stored.
  sqlite.function('unicode_lower', { deterministic: true }, (text: unknown) =>
    typeof text === 'string' ? text.toLowerCase() : text,
  );
}
