// Opens the database named by a URL: `sqlite:<file>` (embedded default) or `postgres://...` (scale-out).
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { addSqlFunctions } from './sqlite-functions.ts';
import type * as Pg from 'pg';
import { DEFAULT_SEARCH_TIMEOUT_MS } from '../../config.ts';
import {
  CompiledQuery,
  type DatabaseConnection,
  Kysely,
  type LogEvent,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  SqliteDialect,
  type SqliteDatabase,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import type { Database } from './schema.ts';
import { requireFromHere } from '../../shipped-files.ts';
import { createPrivateFile, makePrivateDir, tightenPrivate } from '../private-files.ts';
import { primaryWriteLock, type WriteLock } from '../../workers.ts';
import { WalCheckpoints } from './wal-checkpoints.ts';
import { sqliteReader } from './sqlite-reader.ts';
import { processWriteLock } from './write-lock.ts';
import { SearchIndexer } from './search-indexer.ts';

export type DialectName = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: DialectName;
  /**
   * SELECTs off the event loop (sqlite-reader.ts), for the reads that may take long (search); on PostgreSQL
   * and an in-memory SQLite database the main Kysely, whose queries never hold the event loop or cannot.
   */
  reader: Kysely<Database>;
  /**
   * The searches' SELECTs: the reader on SQLite. On PostgreSQL a pool of its own, of SEARCH_CONNECTIONS, whose
   * statements stop after the search time limit: a search for a long text over long files runs for seconds in
   * the database, and ten at once took every connection of the main pool (helper-70: others waited 39 s).
   */
  searcher: Kysely<Database>;
  /** The committed values of the change epochs (migrations 0003 and 0014); null when they cannot be known now. */
  readEpoch(): Epochs | null | Promise<Epochs | null>;
  close(): Promise<void>;
}

/**
 * The change epochs: `access` moves with every committed change to the tables that decide who may read what
 * (migration 0003), `content` with every change to what a snippet's answers are read from (migration 0014).
 */
export interface Epochs {
  access: number;
  content: number;
}

/** Both epochs in one row, so that one read sees them as of one commit. */
export const EPOCHS_SQL =
  'SELECT (SELECT value FROM change_epoch WHERE id = 1) AS access, (SELECT value FROM change_epoch WHERE id = 2) AS content';

let pgDriver: typeof Pg | null = null;

/**
 * The PostgreSQL driver, loaded when first needed: a server on SQLite never uses it, and loading it is a
 * tenth of a start (an ephemeral server for a test suite starts in a few hundred milliseconds).
 */
export function postgresDriver(): typeof Pg {
  if (!pgDriver) {
    pgDriver = requireFromHere('pg') as typeof Pg;
    // PostgreSQL's bigint (count(*)) arrives as a string by default; our counts fit in a JS number.
    pgDriver.types.setTypeParser(pgDriver.types.builtins.INT8, (value: string) => Number(value));
  }
  return pgDriver;
}

/** Told of every query Kysely runs and how long it took (the server's metrics); never its parameters. */
export type QueryObserver = (sql: string, failed: boolean, milliseconds: number) => void;

export interface DatabaseOptions {
  /** Milliseconds a search's statement may run on PostgreSQL (SNIPPETD_SEARCH_TIMEOUT_MS). */
  searchTimeoutMs?: number;
}

export function openDatabase(url: string, observe?: QueryObserver, options: DatabaseOptions = {}): Db {
  const log =
    observe && ((event: LogEvent) => observe(event.query.sql, event.level === 'error', event.queryDurationMillis));
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length), log);
  return openPostgres(url, log, options.searchTimeoutMs ?? DEFAULT_SEARCH_TIMEOUT_MS);
}

/** Searches running at once on PostgreSQL, in each process; the others wait their turn for a connection. */
const SEARCH_CONNECTIONS = 2;

function openSqlite(file: string, log?: (event: LogEvent) => void): Db {
  if (file !== ':memory:') {
    makePrivateDir(path.dirname(path.resolve(file)));
    // 0600 before SQLite makes it 0644 (its -wal and -shm follow the file); an older one is tightened.
    if (!createPrivateFile(file)) tightenPrivate([file, `${file}-wal`, `${file}-shm`]);
  }
  const sqlite = new SQLite(file);
  try {
    addSqlFunctions(sqlite);
    // A new database gives the pages it no longer uses back to the file system, a few at a time (the search
    // indexer's steps: search-indexing.ts); an existing one keeps its mode (only VACUUM would change it).
    sqlite.pragma('auto_vacuum = INCREMENTAL');
    sqlite.pragma('journal_mode = WAL');
    // FULL: a transaction is on disk before we acknowledge it, so a crash loses nothing acknowledged.
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
  } catch (error) {
    sqlite.close(); // a file that is not a database, say: nothing else would close it
    throw error;
  }
  const database = withStatementCache(sqlite);
  const inMemory = file === ':memory:';
  const checkpoints = inMemory ? null : new WalCheckpoints(path.resolve(file));
  // A file has a second writer, the search indexer's thread: the main connection's writes take the lock too.
  // Each write's end tells the checkpoints there is something to checkpoint.
  const fileLock = checkpoints ? processWriteLock(file, primaryWriteLock()) : null;
  const lock = fileLock && checkpoints ? afterEachWrite(fileLock, checkpoints) : primaryWriteLock();
  const kysely = new Kysely<Database>({
    dialect: new QueuedSqliteDialect({ database }, sqlite, lock),
    log,
  });
  const epoch = sqliteEpochReader(sqlite, file);
  if (checkpoints) walCheckpoints.set(kysely, checkpoints);
  const reader = inMemory ? kysely : sqliteReader(path.resolve(file));
  // The bare lock for the indexer: it checkpoints its own writes.
  const indexer = new SearchIndexer(fileLock ? { file, lock: fileLock, main: sqlite } : { sqlite, kysely });
  searchIndexers.set(kysely, indexer);
  return {
    kysely,
    dialect: 'sqlite',
    reader,
    searcher: reader,
    readEpoch: epoch.read,
    close: async () => {
      await indexer.close();
      await checkpoints?.close();
      epoch.close();
      if (reader !== kysely) await reader.destroy();
      await kysely.destroy();
    },
  };
}

const walCheckpoints = new WeakMap<Kysely<Database>, WalCheckpoints>();

/** `lock`, telling `checkpoints` of every write when it releases the lock. */
const afterEachWrite = (lock: WriteLock, checkpoints: WalCheckpoints): WriteLock => ({
  acquire: () => lock.acquire(),
  release: () => {
    lock.release();
    checkpoints.written();
  },
});

/**
 * Brings a SQLite database's log into its file off the event loop (wal-checkpoints.ts); nothing elsewhere. A
 * large write calls it as it goes, so that neither a checkpoint nor its commit's sync of the whole log falls
 * on the event loop.
 */
export async function checkpointWal(db: Kysely<Database>): Promise<void> {
  await walCheckpoints.get(db)?.run();
}

const searchIndexers = new WeakMap<Kysely<Database>, SearchIndexer>();

/**
 * Starts keeping SQLite's search index up with the writes (search-indexer.ts), once the migrations made
 * its tables; nothing on PostgreSQL, whose indexes are kept by the writes themselves.
 */
export function startSearchIndexer(db: Db): void {
  searchIndexers.get(db.kysely)?.start();
}

/** A backstop only (data_version is SQLite's documented answer): at most one query a second, whatever it says. */
const MAX_SKIP_MS = 1000;

/**
 * The epoch as committed: read on a connection of its own, because the main connection would also see
 * a transaction it has open and may yet roll back. Opened on first use (the table comes with migrations).
 * An in-memory database has no second connection; there the value is unknown while a transaction is open.
 *
 * `PRAGMA data_version` changes when another connection committed, and this read-only one never commits,
 * so any commit changes it; the query runs only then. It is read before the query and recorded only after
 * the query succeeded, so a commit in between or a failed query makes the next call query. In memory the
 * reader is the main connection, whose own commits leave data_version alone: the query runs every time.
 */
function sqliteEpochReader(main: SQLite.Database, file: string) {
  const inMemory = file === ':memory:';
  let connection: SQLite.Database | null = null;
  let query: SQLite.Statement | null = null;
  let dataVersion: SQLite.Statement | null = null;
  /** The values the last successful query returned, the data_version read before it, and when it ran. */
  let epoch: Epochs | null = null;
  let version: number | null = null;
  let queriedAt = 0;
  return {
    read(): Epochs | null {
      if (!main.open || (inMemory && main.inTransaction)) return null;
      if (!query) {
        connection = inMemory ? main : new SQLite(file, { readonly: true, fileMustExist: true, timeout: 5000 });
        query = connection.prepare(EPOCHS_SQL);
        if (!inMemory) dataVersion = connection.prepare('PRAGMA data_version').pluck();
      }
      const now = dataVersion ? (dataVersion.get() as number) : null;
      if (now !== null && now === version && performance.now() - queriedAt < MAX_SKIP_MS) return epoch;
      epoch = query.get() as Epochs;
      version = now;
      queriedAt = performance.now();
      return epoch;
    },
    close() {
      if (connection && connection !== main) connection.close();
    },
  };
}

/**
 * SQLite has one connection, which Kysely's driver lends out under a lock that wakes every waiting query on
 * each release, only for all but one to wait again: with N requests queued behind a write, every statement
 * costs N wake-ups, so a backlog grows the work quadratically just as the server falls behind. This driver
 * hands the connection to the longest waiting query instead, one wake-up a release (Kysely's own lock then
 * never has a waiter).
 *
 * Transactions begin IMMEDIATE: one that read first and then wrote would fail at once (SQLITE_BUSY, no
 * waiting) if another process committed in between. A write also takes the write lock first (write-lock.ts:
 * this process's search indexer, and with several workers (cluster.ts) the primary's), waiting
 * asynchronously: SQLite's own wait for another connection's write (busy_timeout) sleeps on the event loop,
 * and a push holds its transaction while it streams objects.
 */
class QueuedSqliteDriver extends SqliteDriver {
  #lent = false;
  #waiting: (() => void)[] = [];
  readonly #sqlite: SQLite.Database;
  readonly #database: SqliteDatabase;
  readonly #lock: WriteLock | null;
  /** Whether this connection holds the primary's write lock (for a transaction). */
  #holding = false;

  constructor(config: SqliteDialectConfig, sqlite: SQLite.Database, lock: WriteLock | null) {
    super(config);
    this.#sqlite = sqlite;
    this.#database = config.database as SqliteDatabase;
    this.#lock = lock;
  }

  /** The one connection as lent out: made on the first loan, which takes Kysely's own lock and keeps it. */
  #connection: DatabaseConnection | null = null;

  /** Waits for the connection: behind every query waiting, or (`first`) before them. */
  async #take(first: boolean): Promise<void> {
    if (!this.#lent) this.#lent = true;
    else await new Promise<void>((resolve) => (first ? this.#waiting.unshift(resolve) : this.#waiting.push(resolve)));
  }

  /** Lends the connection to the query that has waited longest. */
  #handOn(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#lent = false;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.#take(false);
    if (!this.#connection) {
      const connection = await super.acquireConnection();
      this.#connection = this.#lock ? this.#lockingWrites(connection, this.#lock) : connection;
    }
    return this.#connection;
  }

  /** Kysely's lock stays taken: the queue above lends the connection, one query at a time. */
  override async releaseConnection() {
    this.#handOn();
  }

  /**
   * The write lock, taken with the connection lent on to the queries waiting meanwhile and taken back
   * before them: a write waits for the lock as long as the other workers' writes and the search indexer's
   * steps hold it, and the reads queued behind it waited that long too (a paced mixed load's p99 70-300 ms).
   */
  async #acquireLockLending(lock: WriteLock): Promise<void> {
    this.#handOn();
    try {
      await lock.acquire();
    } finally {
      await this.#take(true);
    }
  }

  override async beginTransaction(connection: DatabaseConnection) {
    if (this.#lock) {
      await this.#acquireLockLending(this.#lock);
      this.#holding = true;
    }
    try {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    } catch (error) {
      this.#unlock();
      throw error;
    }
  }

  override async commitTransaction(connection: DatabaseConnection) {
    try {
      await super.commitTransaction(connection);
    } finally {
      if (!this.#sqlite.inTransaction) this.#unlock();
    }
  }

  override async rollbackTransaction(connection: DatabaseConnection) {
    try {
      // SQLite ends a transaction itself on some errors (SQLITE_FULL): a rollback then would fail, and its error
      // would take the place of the one that says what happened.
      if (this.#sqlite.inTransaction) await super.rollbackTransaction(connection);
    } finally {
      this.#unlock();
    }
  }

  #unlock() {
    if (!this.#holding) return;
    this.#holding = false;
    this.#lock!.release();
  }

  /** A writing statement outside a transaction takes the write lock around itself. */
  #lockingWrites(connection: DatabaseConnection, lock: WriteLock): DatabaseConnection {
    const sqlite = this.#sqlite;
    const database = this.#database;
    const holding = () => this.#holding;
    const acquireLending = () => this.#acquireLockLending(lock);
    return {
      async executeQuery(query) {
        // A transaction's statements (its BEGIN IMMEDIATE too) run under the lock it took; the statement is
        // the statement cache's (preparing costs more than our small queries).
        if (holding() || sqlite.inTransaction || (database.prepare(query.sql) as unknown as SQLite.Statement).readonly)
          return connection.executeQuery(query);
        await acquireLending();
        try {
          return await connection.executeQuery(query);
        } finally {
          lock.release();
        }
      },
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
  }
}

class QueuedSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #sqlite: SQLite.Database;
  readonly #lock: WriteLock | null;
  constructor(config: SqliteDialectConfig, sqlite: SQLite.Database, lock: WriteLock | null) {
    super(config);
    this.#config = config;
    this.#sqlite = sqlite;
    this.#lock = lock;
  }
  override createDriver() {
    return new QueuedSqliteDriver(this.#config, this.#sqlite, this.#lock);
  }
}

const MAX_CACHED_STATEMENTS = 1000;

/**
 * Kysely prepares every query anew, and preparing costs more than running our small queries. Our SQL
 * texts are parameterised and few, so each is prepared once. Kysely runs one query at a time on this
 * connection, so a statement is never in use twice at once.
 */
export function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (!statement) {
        if (cache.size >= MAX_CACHED_STATEMENTS) cache.clear();
        statement = sqlite.prepare(sql);
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}

function openPostgres(url: string, log: ((event: LogEvent) => void) | undefined, searchTimeoutMs: number): Db {
  const pool = postgresPool({ connectionString: url, max: 10 });
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withNamedStatements(pool) }), log });
  const searchPool = postgresPool({
    connectionString: url,
    max: SEARCH_CONNECTIONS,
    statement_timeout: searchTimeoutMs,
  });
  const searcher = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: withNamedStatements(searchPool) }),
    log,
  });
  // A named statement: each pooled connection prepares it once (the epoch is read on most read requests).
  // A time limit: read requests wait for this query, so one that hangs must fail them, not stall them all.
  const epochQuery = {
    name: 'snippetd_change_epochs',
    text: EPOCHS_SQL,
    query_timeout: 5000,
  };
  const readEpoch = async (): Promise<Epochs | null> => {
    const { rows } = await pool.query<{ access: string | null; content: string | null }>(epochQuery);
    const [row] = rows;
    return row?.access != null && row.content != null
      ? { access: Number(row.access), content: Number(row.content) }
      : null;
  };
  return {
    kysely,
    dialect: 'postgres',
    reader: kysely,
    searcher,
    readEpoch,
    close: async () => {
      await searcher.destroy();
      await kysely.destroy();
    },
  };
}

function postgresPool(config: Pg.PoolConfig): Pg.Pool {
  const pool = new (postgresDriver().Pool)(config);
  // PostgreSQL ends connections (a restart, a failover, an administrator): an error event on the pool for an
  // idle one, on the client for one in use, and one nobody hears stops the process. The pool drops such a
  // connection (at its release, for one in use) and opens another; a query it was running fails as any does.
  pool.on('error', (error) => process.emitWarning(`a PostgreSQL connection failed: ${error.message}`));
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** Whether `error` is PostgreSQL's for a statement stopped at its time limit (query_canceled). */
export const isStatementTimeout = (error: unknown) => (error as { code?: unknown })?.code === '57014';

/** SQL texts given a name; later new texts run unnamed (a bound on what each connection keeps prepared). */
const MAX_NAMED_STATEMENTS = 1000;

/**
 * A text matched with LIKE against a value: how many rows hold it decides the plan (an index for a rare text,
 * a walk that stops early for a common one), and a named statement's generic plan, made without the value,
 * guesses (it read 100,000 index entries to count 10,001 snippets of a common word: 59 ms, not 10 ms).
 */
const PLAN_DEPENDS_ON_VALUE = /\bI?LIKE \$\d/i;

/**
 * PostgreSQL parses and plans an unnamed statement on every run, which costs more than running our small
 * queries (a join by key here: 0.20 ms unnamed, 0.07 ms named), and a write runs a dozen. Like SQLite's
 * statement cache above: our SQL texts are parameterised and few, so each gets a name and every pooled
 * connection prepares it once (the driver remembers which it has). Searches run unnamed, planned for their
 * text each time (PLAN_DEPENDS_ON_VALUE).
 */
function withNamedStatements(pool: Pg.Pool): PostgresPool {
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    if (PLAN_DEPENDS_ON_VALUE.test(text)) return undefined;
    let name = names.get(text);
    if (name === undefined && names.size < MAX_NAMED_STATEMENTS) {
      name = `snippetd_${names.size}`;
      names.set(text, name);
    }
    return name;
  };
  const clients = new WeakMap<Pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let named = clients.get(client);
      if (!named) {
        // No JIT compilation: it starts on a plan's estimated cost, and a count over 10,001 rows of a large
        // table costs enough, so a query of a few milliseconds spent 20-40 ms compiling itself (our queries
        // are short). Set before the connection's first query of ours, never beside it (pg deprecates two
        // queries at once on a connection; pg 9 refuses them). The epoch's query, through the pool, needs no JIT.
        try {
          await client.query('SET jit = off');
        } catch (error) {
          client.release(error as Error);
          throw error;
        }
        // Without Kysely's cursor form of query(), which we never use (no streamed queries).
        named = {
          query: (text: string, values: readonly unknown[]) =>
            client.query({ name: nameOf(text), text, values: [...values] }),
          release: () => client.release(),
        } as unknown as PostgresPoolClient;
        clients.set(client, named);
      }
      return named;
    },
    end: () => pool.end(),
  };
}

/** A row that names another which is gone (a snippet of a project deleted meanwhile). */
export function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: string };
  return e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || e?.code === '23503';
}

/** Unique-constraint violations look different in each driver; callers only need to know it was one. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string };
  return e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || e?.code === '23505';
}
