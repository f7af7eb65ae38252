// `snippetd backup create FILE` and `snippetd backup restore FILE`. The database is the only state, git
// repositories included, so a backup of it is a backup of everything. SQLite: SQLite's online backup API,
// one consistent copy while the service keeps writing. PostgreSQL: pg_dump's custom format (one snapshot)
// and pg_restore, run as the programs PostgreSQL ships. A backup holds what the database does (password
// hashes, private snippets): it is made 0600, and the database password reaches PostgreSQL's programs
// through their environment (PGPASSWORD), never their command line, which any user may read in `ps`.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';

import { postgresDriver } from './database.ts';
import { createPrivateFile, makePrivateDir, tightenPrivate } from '../private-files.ts';

const run = promisify(execFile);

export class BackupError extends Error {}

const sqliteFile = (url: string) => (url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : null);

export async function createBackup(databaseUrl: string, file: string): Promise<void> {
  const source = sqliteFile(databaseUrl);
  if (source === ':memory:') throw new BackupError('an in-memory database has nothing to back up');
  // Made here, 0600 and new, before SQLite or pg_dump write into it (both keep a file's mode).
  if (!createPrivateFile(file)) throw new BackupError(`${file} exists already; name a new file`);
  try {
    if (source) return await copySqlite(source, file);
    const { args, env } = postgresTarget(databaseUrl);
    await runTool('pg_dump', ['--format=custom', `--file=${file}`, ...args], env);
  } catch (error) {
    fs.rmSync(file, { force: true });
    throw error;
  }
}

/** Restores into an empty database (a new SQLite file, or a PostgreSQL database or schema without tables). */
export async function restoreBackup(databaseUrl: string, file: string): Promise<void> {
  if (!fs.existsSync(file)) throw new BackupError(`${file} does not exist`);
  const target = sqliteFile(databaseUrl);
  if (target) {
    if (fs.existsSync(target) && fs.statSync(target).size > 0)
      throw new BackupError(`${target} exists already; restore into a new database file`);
    makePrivateDir(path.dirname(path.resolve(target)));
    if (!createPrivateFile(target)) tightenPrivate([target]);
    try {
      await copySqlite(file, target);
      checkRestored(target, file);
    } catch (error) {
      // Nothing half-restored is left to be served, or to stand in the way of the next try.
      for (const leftover of [target, `${target}-wal`, `${target}-shm`]) fs.rmSync(leftover, { force: true });
      if (error instanceof BackupError) throw error;
      throw new BackupError(`${file} is damaged or not a backup: ${(error as Error).message}`);
    }
    return;
  }
  const dumped = await dumpedSchema(file);
  const client = new (postgresDriver().Client)({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      'SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema()',
    );
    if (rows[0].n > 0) throw new BackupError('the PostgreSQL database is not empty; restore into an empty one');
    // The dump recreates its own schema: into another, the service would find its schema empty and start afresh.
    const schema = await targetSchema(client);
    if (schema !== dumped)
      throw new BackupError(
        `${file} holds the schema ${dumped}, and SNIPPETD_DATABASE_URL uses the schema ${schema}; restore with search_path=${dumped} in its options`,
      );
    // The search index's operator class comes from pg_trgm, an extension of the database, not of the dumped
    // schema: the dump names it but does not bring it. Installed as migration 0010 installs it.
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public');
  } finally {
    await client.end();
  }
  // The dump names its schema; pg_restore recreates it as it was.
  // One transaction: a restore that fails part-way leaves the database empty, to be restored again.
  const { args, env } = postgresTarget(databaseUrl);
  await runTool('pg_restore', ['--no-owner', '--single-transaction', args[0], file], env);
}

/** The schema of snippetd's tables in a pg_dump archive, from its table of contents. */
async function dumpedSchema(file: string): Promise<string> {
  const list = await runTool('pg_restore', ['--list', file], {});
  // `215; 1259 16390 TABLE s1 snippetd_migrations postgres`
  const schema = /^\d+; \d+ \d+ TABLE (\S+) snippetd_migrations /m.exec(list)?.[1];
  if (!schema) throw new BackupError(`${file} is not a backup of snippetd's database`);
  return schema;
}

/** The schema the service's tables go in: the first of search_path that exists, or that a restore will create. */
async function targetSchema(client: { query(text: string): Promise<{ rows: Record<string, string | null>[] }> }) {
  const { rows } = await client.query("SELECT current_schema() AS current, current_setting('search_path') AS path");
  const first = (rows[0].path ?? '')
    .split(',')
    .map((name) => name.trim().replace(/^"(.*)"$/, '$1'))
    .find((name) => name && name !== '$user');
  return rows[0].current ?? first ?? 'public';
}

/**
 * SQLite's online backup API: a consistent copy while other connections keep writing. In one step: SQLite starts
 * a copy made in steps again whenever another connection writes, and better-sqlite3's steps of 100 pages never
 * ended on a 95 MB database written 18 times a second (helper-77). One step holds a read transaction, which WAL
 * lets writers work beside.
 */
async function copySqlite(from: string, to: string): Promise<void> {
  const db = new SQLite(from, { readonly: true, fileMustExist: true });
  try {
    await db.backup(to, { progress: () => ALL_PAGES });
  } finally {
    db.close();
  }
}

/** better-sqlite3's largest step: every page left. */
const ALL_PAGES = 0x7fffffff;

/**
 * A restored copy is served only if SQLite finds it whole and it is snippetd's: a backup file damaged in storage
 * was restored, and served, with its b-trees broken; a file cut short left an empty database.
 */
function checkRestored(target: string, file: string): void {
  const db = new SQLite(target, { readonly: true, fileMustExist: true });
  try {
    const problems = db.pragma('integrity_check', { simple: false }) as { integrity_check: string }[];
    if (problems[0]?.integrity_check !== 'ok')
      throw new BackupError(`${file} is damaged: ${problems[0]?.integrity_check ?? 'SQLite found no pages'}`);
    const ours = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'snippetd_migrations'").get();
    if (!ours) throw new BackupError(`${file} is not a backup of snippetd's database`);
  } finally {
    db.close();
  }
}

/**
 * pg_dump takes the connection URL without its password, which goes in PGPASSWORD (libpq reads it there;
 * the URL's `password=` parameter too). A schema chosen with `options=-c search_path=…` (one database
 * shared by several instances; libpq also takes `-csearch_path=…` and `--search_path=…`) becomes its
 * --schema flag: without it, a backup would hold every schema of the database.
 */
function postgresTarget(databaseUrl: string): { args: string[]; env: Record<string, string> } {
  const url = new URL(databaseUrl);
  const password = url.password ? decodeURIComponent(url.password) : url.searchParams.get('password');
  url.password = '';
  url.searchParams.delete('password');
  const options = url.searchParams.get('options');
  const schema = options && /(?:^|\s)(?:-c\s*|--)search_path\s*=\s*([A-Za-z0-9_]+)/.exec(options)?.[1];
  url.searchParams.delete('options');
  const args = [`--dbname=${url}`];
  if (schema) args.push(`--schema=${schema}`);
  return { args, env: password ? { PGPASSWORD: password } : {} };
}

/** Runs one of PostgreSQL's programs; answers what it printed. */
async function runTool(tool: string, args: string[], env: Record<string, string>): Promise<string> {
  try {
    return (await run(tool, args, { maxBuffer: 1 << 24, env: { ...process.env, ...env } })).stdout;
  } catch (error) {
    const e = error as { code?: string; stderr?: string };
    if (e.code === 'ENOENT') throw new BackupError(`${tool} is not installed (it comes with PostgreSQL's client)`);
    throw new BackupError(`${tool} failed: ${(e.stderr ?? String(error)).trim()}`);
  }
}
