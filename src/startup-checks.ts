// What `serve` needs, checked before it listens: without these it would start and then answer 500
// (or a misleading 404) to every request that writes or touches git. Each failure is one line naming the
// setting or the program.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { type Config, ConfigError } from './config.ts';
import { type Db, openDatabase, type QueryObserver } from './storage/db/database.ts';
import { migrateToLatest } from './storage/db/migrate.ts';
import { makePrivateDir, tightenPrivate } from './storage/private-files.ts';

/**
 * Checks the data directory and the database file at once; answers the check of git, which runs while the
 * caller goes on (opening the database and migrating it take longer than git does) and must be awaited
 * before the server listens.
 */
export function checkServeEnvironment(config: Config): Promise<void> {
  writableDirectory(config.dataDir, 'the data directory', 'SNIPPETD_DATA_DIR');
  // Made 0700, and one an earlier version made 0755 is tightened: it holds the database and caches.
  tightenPrivate([config.dataDir]);
  if (config.databaseUrl.startsWith('sqlite:')) {
    const file = config.databaseUrl.slice('sqlite:'.length);
    if (file !== ':memory:') writableSqlite(path.resolve(file));
  }
  return new Promise((resolve, reject) =>
    execFile('git', ['--version'], (error) => {
      if (!error) return resolve();
      const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : 'not working';
      reject(new ConfigError(`git is ${why} on the PATH; snippetd runs it for every clone and push`));
    }),
  );
}

function writableDirectory(dir: string, what: string, setting: string): void {
  try {
    makePrivateDir(dir);
  } catch (error) {
    throw new ConfigError(`${what} ${dir} (${setting}) cannot be created: ${(error as Error).message}`);
  }
  // access() asks the kernel, so a read-only file system counts too (even for root).
  if (!accessible(dir, fs.constants.W_OK | fs.constants.X_OK))
    throw new ConfigError(`${what} ${dir} (${setting}) is not writable`);
}

/** SQLite writes the file and, beside it, its write-ahead log and shared-memory index. */
function writableSqlite(file: string): void {
  writableDirectory(path.dirname(file), 'the directory of the database', 'SNIPPETD_DATABASE_URL');
  for (const f of [file, `${file}-wal`, `${file}-shm`])
    if (fs.existsSync(f) && !accessible(f, fs.constants.R_OK | fs.constants.W_OK))
      throw new ConfigError(`the database ${f} (SNIPPETD_DATABASE_URL) is not writable`);
}

function accessible(file: string, mode: number): boolean {
  try {
    fs.accessSync(file, mode);
    return true;
  } catch {
    return false;
  }
}

/**
 * Opens the database the configuration names, migrates it and checks that snippetd may write every table.
 * A database that cannot be reached, read or written stops the start with one line naming the setting and
 * carrying the driver's message (or a server would start and answer 500 to every write).
 */
export async function openConfiguredDatabase(config: Config, observe?: QueryObserver): Promise<Db> {
  const named = `the database ${redactDatabaseUrl(config.databaseUrl)} (SNIPPETD_DATABASE_URL)`;
  let db: Db | null = null;
  try {
    db = openDatabase(config.databaseUrl, observe, { searchTimeoutMs: config.searchTimeoutMs });
    await migrateToLatest(db);
    if (db.dialect === 'postgres') {
      const refused = await privilegesMissing(db);
      if (refused.length) throw new ConfigError(`${named} does not let this role ${refused.join(' or ')}`);
    }
    return db;
  } catch (error) {
    await db?.close().catch(() => {});
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`${named} cannot be used: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * What this role may not do that a write needs, in the connection's schema: read and change every table,
 * and take ids from every sequence. A role granted only SELECT passes the migrations once another role has
 * run them, and would then fail every write. (A read-only transaction or standby fails earlier, at the
 * migrations' CREATE TABLE IF NOT EXISTS.)
 */
async function privilegesMissing(db: Db): Promise<string[]> {
  const { rows } = await sql<{ relname: string; relkind: string }>`
    SELECT relname, relkind FROM pg_class
    WHERE relnamespace = current_schema()::regnamespace AND (
      -- one privilege a call: given several, has_table_privilege answers whether any of them is held
      (relkind = 'r' AND NOT (has_table_privilege(oid, 'SELECT') AND has_table_privilege(oid, 'INSERT')
        AND has_table_privilege(oid, 'UPDATE') AND has_table_privilege(oid, 'DELETE')))
      -- nextval needs USAGE or UPDATE; given both, has_sequence_privilege answers whether either is held
      OR (relkind = 'S' AND NOT has_sequence_privilege(oid, 'USAGE, UPDATE')))
    ORDER BY relname`.execute(db.kysely);
  const names = (kind: string) => rows.filter((r) => r.relkind === kind).map((r) => r.relname);
  const missing: string[] = [];
  if (names('r').length) missing.push(`write the tables ${names('r').join(', ')}`);
  if (names('S').length) missing.push(`use the sequences ${names('S').join(', ')}`);
  return missing;
}

/**
 * The database URL with its password hidden, for lines that name it: the user's password and any query
 * parameter that could hold one. A PostgreSQL URL that does not parse is not shown at all.
 */
export function redactDatabaseUrl(url: string): string {
  if (url.startsWith('sqlite:')) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${url.slice(0, url.indexOf(':') + 1) || 'postgres:'}//***`;
  }
  if (parsed.password) parsed.password = '***';
  for (const key of [...parsed.searchParams.keys()])
    if (/pass|secret|sslkey/i.test(key)) parsed.searchParams.set(key, '***');
  return parsed.toString();
}
