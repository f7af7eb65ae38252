// SQLite's background work in one thread per process (sqlite-background-worker.ts): the search indexer's steps
// (search-indexer.ts) and the log's checkpoints (wal-checkpoints.ts), for every database file the process has
// open. One thread, started by the first task and ended when idle for a while: a thread costs its own memory
// (about 20 MB run from source, 10 MB built), and two of them took a server's page test past its 512 MB.
import { Piscina } from 'piscina';
import { shippedFile } from '../../shipped-files.ts';
import type { BackgroundTask } from './sqlite-background-worker.ts';
import type { WriteLock } from '../../workers.ts';

const IDLE_MS = 5000;

let pool: Piscina | null = null;
/**
 * Tasks take turns here rather than in piscina's queue, so that a step takes the write lock only once the
 * thread is free for it: a step queued behind a checkpoint held the lock, and every write waited, for the
 * checkpoint's length (up to 80 ms under a paced mixed load).
 */
let turn: Promise<unknown> = Promise.resolve();

/**
 * A user of the thread for the database `file`: `run` a task; `release` when done, which closes the thread's
 * connection to `file`. The thread itself stays until idle (IDLE_MS), for the next database a process opens:
 * from source a thread takes about half a second of CPU to start, which a test process paid for every app.
 */
export function sqliteBackground(file: string): {
  /** Runs `task` in its turn, holding `lock` (if given) from when the thread is free for it until it ends. */
  run: (task: BackgroundTask, lock?: WriteLock) => Promise<{ idle: boolean }>;
  release: () => Promise<void>;
} {
  let released = false;
  const run = (task: BackgroundTask, lock?: WriteLock) => {
    const result = turn.then(async () => {
      const thread = await onlineThread();
      if (!lock) return thread.run(task);
      await lock.acquire();
      try {
        return await thread.run(task);
      } finally {
        lock.release();
      }
    });
    turn = result.catch(() => {});
    return result;
  };
  return {
    run,
    async release() {
      if (released) return;
      released = true;
      // A thread that ended (idle) took its connections with it: none is started to close one.
      if (pool?.threads.length) await run({ kind: 'close', file }).catch(() => {});
    },
  };
}

/**
 * The pool with its thread running: a thread that starts loads its code first (from the source through tsx,
 * writes waited 170-350 ms for it), which a task holding the write lock would make every write wait for.
 */
async function onlineThread(): Promise<Piscina> {
  const started = threadPool();
  if (started.threads.length === 0) await started.run({ kind: 'ready' } satisfies BackgroundTask);
  return started;
}

/** The thread's pool, made on first use; its thread ends when idle and starts again for the next task. */
function threadPool(): Piscina {
  if (!pool) {
    // From source the worker is sqlite-background-worker.ts (run through tsx, as its parent is); built, .js.
    const worker = import.meta.url.endsWith('.ts') ? 'sqlite-background-worker.ts' : 'sqlite-background-worker.js';
    pool = new Piscina({
      filename: shippedFile('storage', 'db', worker),
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: IDLE_MS,
    });
    // A thread failing outside a task must not end the server (an 'error' event nobody hears would).
    pool.on('error', (error: Error) => process.emitWarning(`SQLite's background thread failed: ${error.message}`));
  }
  return pool;
}
