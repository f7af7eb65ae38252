// A thread of the SQLite reader (sqlite-reader.ts): answers a compiled SELECT on a read-only connection of
// its own to the database file, kept for the thread's life with its prepared statements. In WAL mode a
// reader sees every committed write and never blocks the writer.
import SQLite from 'better-sqlite3';
import { addSqlFunctions } from './sqlite-functions.ts';

export interface ReadTask {
  file: string;
  sql: string;
  parameters: unknown[];
}

/** Statements prepared per SQL text; a bound on what a thread keeps, as the main connection's cache has. */
const MAX_CACHED_STATEMENTS = 500;

let connection: { file: string; sqlite: SQLite.Database; statements: Map<string, SQLite.Statement> } | null = null;

function open(file: string) {
  if (connection?.file === file) return connection;
  connection?.sqlite.close();
  const sqlite = new SQLite(file, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 5000');
  addSqlFunctions(sqlite);
  connection = { file, sqlite, statements: new Map() };
  return connection;
}

export default function read({ file, sql, parameters }: ReadTask): unknown[] {
  const c = open(file);
  let statement = c.statements.get(sql);
  if (!statement) {
    if (c.statements.size >= MAX_CACHED_STATEMENTS) c.statements.clear();
    statement = c.sqlite.prepare(sql);
    c.statements.set(sql, statement);
  }
  // Structured cloning gives a Buffer parameter back as a Uint8Array, which better-sqlite3 does not bind.
  return statement.all(parameters.map((p) => (p instanceof Uint8Array ? Buffer.from(p) : p)));
}
