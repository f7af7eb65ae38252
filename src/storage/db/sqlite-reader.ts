// SQLite answers a query on the thread that asks, so a long read (a search counting 10,001 matches, 10-20
// ms, over 100 on a busy machine) holds every other request for its whole length. The reads that can take
// that long run here instead: a Kysely whose queries go to a worker thread with a read-only connection to the
// same file (sqlite-read-worker.ts). WAL lets it read beside the writer, and it sees every committed write,
// so a search still finds what the request before it wrote. An in-memory database has no file to share:
// its reads stay on the main connection.
import os from 'node:os';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { Piscina } from 'piscina';
import { shippedFile } from '../../shipped-files.ts';
import type { Database } from './schema.ts';
import type { ReadTask } from './sqlite-read-worker.ts';

/** A Kysely for SELECTs only, answered by worker threads on their own read-only connections to `file`. */
export function sqliteReader(file: string): Kysely<Database> {
  return new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new WorkerReadDriver(file),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
}

class WorkerReadDriver implements Driver {
  #pool: Piscina | null = null;
  readonly #file: string;

  constructor(file: string) {
    this.#file = file;
  }

  async init(): Promise<void> {}

  /** Started on the first read, so a server that never searches starts no thread. */
  #workers(): Piscina {
    if (this.#pool) return this.#pool;
    // From source the worker is sqlite-read-worker.ts (run through tsx, as its parent is); built, .js.
    const worker = import.meta.url.endsWith('.ts') ? 'sqlite-read-worker.ts' : 'sqlite-read-worker.js';
    this.#pool = new Piscina({
      filename: shippedFile('storage', 'db', worker),
      minThreads: 1,
      // Threads beyond the event loop's own core, at most 2: each holds a connection and its statements.
      maxThreads: Math.max(1, Math.min(2, os.availableParallelism() - 1)),
      idleTimeout: 60_000,
    });
    // A thread failing outside a task must not end the server (an 'error' event nobody hears would).
    this.#pool.on('error', (error: Error) => process.emitWarning(`a SQLite read thread failed: ${error.message}`));
    return this.#pool;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
        const task: ReadTask = { file: this.#file, sql: query.sql, parameters: [...query.parameters] };
        return { rows: (await this.#workers().run(task)) as R[] };
      },
      streamQuery: () => {
        throw new Error('the SQLite reader does not stream');
      },
    };
  }

  async beginTransaction(): Promise<void> {
    throw new Error('the SQLite reader only reads, outside transactions');
  }

  async commitTransaction(): Promise<void> {}

  async rollbackTransaction(): Promise<void> {}

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    await this.#pool?.destroy();
  }
}
