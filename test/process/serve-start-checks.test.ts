// `serve` stops at start, with one line saying which and exit 1, when the data directory or the database
// is not writable, the database cannot be reached, or git is not on the PATH (it used to start and answer
// 500 to every write).
// Root may write anywhere, so under root the server runs as nobody (65534) to meet the permissions.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { cliCommand } from '../../scripts/spawn-server.ts';
import { openDatabase } from '../../src/storage/db/database.ts';
import { migrateToLatest } from '../../src/storage/db/migrate.ts';
import { POSTGRES_URL, postgresSchemaUrl, TEST_DB } from '../helper.ts';

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
let dir: string;

function serve(dataDir: string, extra: { env?: NodeJS.ProcessEnv; unprivileged?: boolean } = {}) {
  return spawnSync(...cliCommand('serve', '--port', '0'), {
    env: {
      ...process.env,
      SNIPPETD_DATA_DIR: dataDir,
      SNIPPETD_DATABASE_URL: `sqlite:${path.join(dataDir, 'snippetd.sqlite3')}`,
      SNIPPETD_LOG_LEVEL: 'warn',
      ...extra.env,
    },
    encoding: 'utf8',
    // A server that started anyway would run until this timeout: status null, and the test fails.
    timeout: 30_000,
    ...(extra.unprivileged && asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
  });
}

// These starts use their own SQLite file, an unreachable PostgreSQL server or none whatever SNIPPETD_TEST_DB
// says: once per `npm test` is enough.
describe('serve start-up checks', {
  skip: TEST_DB === 'postgres' && 'uses its own SQLite file: runs in the SQLite pass only',
}, () => {
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-start-checks-'));
    fs.chmodSync(dir, 0o755); // nobody must reach what is inside
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a data directory that is not writable', () => {
    const dataDir = path.join(dir, 'read-only');
    fs.mkdirSync(dataDir, { mode: 0o555 });
    const result = serve(dataDir, { unprivileged: true });
    assert.equal(result.status, 1, result.stderr);
    assert.equal(result.stderr, `snippetd: the data directory ${dataDir} (SNIPPETD_DATA_DIR) is not writable\n`);
  });

  it('a data directory that cannot be created', () => {
    const dataDir = path.join(dir, 'a-file', 'data');
    fs.writeFileSync(path.join(dir, 'a-file'), '');
    const result = serve(dataDir);
    assert.equal(result.status, 1, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(`^snippetd: the data directory ${dataDir} \\(SNIPPETD_DATA_DIR\\) cannot be created: ENOTDIR.*\\n$`),
    );
  });

  it('a SQLite database file that is not writable', () => {
    const dataDir = path.join(dir, 'read-only-database');
    fs.mkdirSync(dataDir);
    if (asRoot) fs.chownSync(dataDir, NOBODY, NOBODY);
    const file = path.join(dataDir, 'snippetd.sqlite3');
    fs.writeFileSync(file, ''); // an empty file is an empty SQLite database
    fs.chmodSync(file, 0o444);
    const result = serve(dataDir, { unprivileged: true });
    assert.equal(result.status, 1, result.stderr);
    assert.equal(result.stderr, `snippetd: the database ${file} (SNIPPETD_DATABASE_URL) is not writable\n`);
  });

  it('a PostgreSQL server that does not answer', () => {
    const result = serve(path.join(dir, 'no-postgres'), {
      env: { SNIPPETD_DATABASE_URL: 'postgres://snippetd:secret@127.0.0.1:1/test' },
    });
    assert.equal(result.status, 1, result.stderr);
    assert.equal(
      result.stderr,
      'snippetd: the database postgres://snippetd:***@127.0.0.1:1/test (SNIPPETD_DATABASE_URL) cannot be used: connect ECONNREFUSED 127.0.0.1:1\n',
    );
  });

  it('git not on the PATH', () => {
    const empty = path.join(dir, 'empty-path');
    fs.mkdirSync(empty);
    const result = serve(path.join(dir, 'no-git'), { env: { PATH: empty } });
    assert.equal(result.status, 1, result.stderr);
    assert.equal(result.stderr, 'snippetd: git is not found on the PATH; snippetd runs it for every clone and push\n');
  });

  it('a database a newer version migrated', async () => {
    // An older binary started on it (a downgrade, a newer backup restored) served it: searches failed with 500,
    // and its writes skipped what the newer version keeps up (refs_moved, the search index's queue).
    const dataDir = path.join(dir, 'newer');
    const file = path.join(dataDir, 'snippetd.sqlite3');
    const db = openDatabase(`sqlite:${file}`);
    await migrateToLatest(db);
    await db.kysely
      .insertInto('snippetd_migrations' as never)
      .values({ name: '9999_from_a_newer_version', applied_at: new Date().toISOString() } as never)
      .execute();
    await db.close();
    const result = serve(dataDir);
    assert.equal(result.status, 1, result.stderr);
    assert.equal(
      result.stderr,
      `snippetd: the database sqlite:${file} (SNIPPETD_DATABASE_URL) cannot be used: it was migrated by a newer snippetd (migration 9999_from_a_newer_version, unknown to this one); run that version or a later one, or restore a backup made before it\n`,
    );
  });

  it('with all of them, it starts', async () => {
    // The checks must not refuse what works: a fresh directory, as the unprivileged user where there is one.
    const dataDir = path.join(dir, 'fine');
    fs.mkdirSync(dataDir);
    if (asRoot) fs.chownSync(dataDir, NOBODY, NOBODY);
    const child = spawn(...cliCommand('serve', '--port', '0'), {
      env: { ...process.env, SNIPPETD_DATA_DIR: dataDir, SNIPPETD_DATABASE_URL: '', SNIPPETD_LOG_LEVEL: 'warn' },
      ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    let out = '';
    child.stderr.on('data', (chunk) => (out += chunk));
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        if (/listening on http:\/\//.test(out)) resolve();
      });
      child.on('exit', () => reject(new Error(out)));
    });
    child.kill('SIGTERM');
    assert.equal(await exit, 0);
  });
});

describe('serve start-up checks on PostgreSQL', {
  skip: TEST_DB === 'postgres' ? false : 'needs PostgreSQL: roles that may not write',
}, () => {
  // Roles belong to the whole server, not to the schema: named apart for each run.
  const suffix = crypto.randomBytes(4).toString('hex');
  const role = (what: string) => `t_${process.pid}_${suffix}_${what}`;
  const ROLES = ['ro', 'select', 'noseq'];
  let schema: Awaited<ReturnType<typeof postgresSchemaUrl>>;
  /** The schema's URL, connecting as `user` (trust authentication: the password is only there to be hidden). */
  const as = (user: string) => {
    const url = new URL(schema.url);
    url.username = user;
    url.password = 'secret';
    return url.toString();
  };
  const admin = async (statements: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(statements);
    } finally {
      await client.end();
    }
  };
  const schemaName = () => new URL(schema.url).searchParams.get('options')!.replace('-c search_path=', '');

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-start-checks-pg-'));
    schema = await postgresSchemaUrl();
    // Migrated by its owner, as an operator would before giving the service a role of its own.
    const db = openDatabase(schema.url);
    await migrateToLatest(db);
    await db.close();
    const name = schemaName();
    await admin(`
      ${ROLES.map((r) => `CREATE ROLE ${role(r)} LOGIN PASSWORD 'secret'; GRANT USAGE, CREATE ON SCHEMA ${name} TO ${role(r)};`).join('\n')}
      ALTER ROLE ${role('ro')} SET default_transaction_read_only = on;
      GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${name} TO ${role('ro')};
      GRANT SELECT ON ALL TABLES IN SCHEMA ${name} TO ${role('select')};
      GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${name} TO ${role('noseq')};`);
  });
  after(async () => {
    await schema.drop();
    for (const r of ROLES) await admin(`DROP OWNED BY ${role(r)}; DROP ROLE ${role(r)}`);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a role whose transactions are read-only', () => {
    const url = as(role('ro'));
    const result = serve(path.join(dir, 'read-only-role'), { env: { SNIPPETD_DATABASE_URL: url } });
    assert.equal(result.status, 1, result.stderr);
    assert.equal(
      result.stderr,
      `snippetd: the database ${url.replace(':secret@', ':***@')} (SNIPPETD_DATABASE_URL) cannot be used: cannot execute CREATE TABLE in a read-only transaction\n`,
    );
  });

  it('a role that may read the tables but not change them', () => {
    const url = as(role('select'));
    const result = serve(path.join(dir, 'select-only-role'), { env: { SNIPPETD_DATABASE_URL: url } });
    assert.equal(result.status, 1, result.stderr);
    const [, tables, sequences] =
      /^snippetd: the database \S+ \(SNIPPETD_DATABASE_URL\) does not let this role write the tables (.+) or use the sequences (.+)\n$/.exec(
        result.stderr,
      ) ?? assert.fail(result.stderr);
    assert.ok(result.stderr.includes(url.replace(':secret@', ':***@')), result.stderr);
    assert.ok(tables.split(', ').includes('snippets'), tables);
    assert.ok(tables.split(', ').includes('git_refs'), tables);
    assert.ok(sequences.split(', ').includes('snippets_id_seq'), sequences);
  });

  it('a role that may change the tables but take no ids from their sequences', () => {
    const url = as(role('noseq'));
    const result = serve(path.join(dir, 'no-sequences-role'), { env: { SNIPPETD_DATABASE_URL: url } });
    assert.equal(result.status, 1, result.stderr);
    const [, sequences] =
      /^snippetd: the database \S+ \(SNIPPETD_DATABASE_URL\) does not let this role use the sequences (.+)\n$/.exec(
        result.stderr,
      ) ?? assert.fail(result.stderr);
    assert.ok(sequences.split(', ').includes('snippets_id_seq'), sequences);
    assert.ok(sequences.split(', ').includes('users_id_seq'), sequences);
  });
});
