// Keeps SQLite's search index (search-indexing.ts) up with the queue its triggers fill, off the event loop:
// SQLite's background thread (sqlite-background.ts) with its own connection does the work in steps of about
// STEP_BUDGET_MS, each under the process's write lock (write-lock.ts), so a write of a request waits at most
// one step, asynchronously. An in-memory database (ephemeral mode) has no second connection: there the steps
// run on the main connection, between queries, STEP_BUDGET_MS at a time.
import { inspect } from 'node:util';
import type SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';
import type { WriteLock } from '../../workers.ts';
import { hasQueuedWork, indexStepTransaction } from './search-indexing.ts';
import { sqliteBackground } from './sqlite-background.ts';

/** Work per step (a piece or a merge may overrun it): what a write of a request may wait for. */
const STEP_BUDGET_MS = 10;
/** How often an idle indexer looks at the queue (searches read queued rows meanwhile, so none is missed). */
const IDLE_POLL_MS = 200;
/** The longest wait before trying again after failed steps (twice as long after each failure until then). */
const MAX_RETRY_MS = 30_000;
/**
 * How often a busy indexer checkpoints SQLite's log, outside the write lock: its steps write the log fast
 * (FTS5 segments), and SQLite would otherwise checkpoint inside some commit when the log passes 1,000 pages,
 * on the event loop if that commit is the main connection's.
 */
const CHECKPOINT_EVERY_MS = 250;
/**
 * The main connection's own checkpoint threshold once the indexer runs, in pages (SQLite's default is 1,000):
 * a backstop only, below which this thread's and wal-checkpoints.ts's (every second) keep the log. At 1,000
 * the log, which the thread's steps fill fast, passed it between two checkpoints, and some request's commit
 * copied the thread's pages on the event loop (loop delays of 100-330 ms while indexing, 23-45 ms without).
 */
const MAIN_CHECKPOINT_PAGES = 10_000;

type Step = (peek: boolean) => Promise<{ idle: boolean }>;
type Options =
  | { file: string; lock: WriteLock; main: SQLite.Database }
  | { sqlite: SQLite.Database; kysely: Kysely<Database> };

export class SearchIndexer {
  private closed = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private thread: ReturnType<typeof sqliteBackground> | null = null;

  constructor(private readonly options: Options) {}

  /** Starts the steps; until then nothing is loaded (a command of the CLI opens the database without them). */
  start(): void {
    this.loop ??= this.run();
  }

  private async steps(): Promise<Step> {
    const options = this.options;
    if (!('file' in options)) {
      const { sqlite, kysely } = options;
      // The connection lent to us alone (QueuedSqliteDriver), then used directly for one step.
      return (peek) =>
        kysely
          .connection()
          .execute(async () =>
            peek ? { idle: !hasQueuedWork(sqlite) } : indexStepTransaction(sqlite, STEP_BUDGET_MS),
          );
    }
    const { file, lock, main } = options;
    const thread = sqliteBackground(file);
    this.thread = thread;
    main.pragma(`wal_autocheckpoint = ${MAIN_CHECKPOINT_PAGES}`);
    let checkpointedAt = performance.now();
    const checkpoint = async () => {
      await thread.run({ file, kind: 'checkpoint', budgetMs: 0 });
      checkpointedAt = performance.now();
    };
    return async (peek) => {
      // An idle indexer looks at the queue on the main connection (one indexed row read), so that its thread
      // ends with piscina's idle timeout and gives its memory back. A transaction of the main connection's
      // under way may show rows it has not committed: a step then finds nothing, and says idle.
      if (peek) return { idle: !hasQueuedWork(main) };
      const result = await thread.run({ file, kind: 'step', budgetMs: STEP_BUDGET_MS }, lock);
      if (result.idle || performance.now() - checkpointedAt >= CHECKPOINT_EVERY_MS) await checkpoint();
      return result;
    };
  }

  private async run(): Promise<void> {
    const step = await this.steps();
    // A look at the queue first: the thread starts only when there is work for it.
    let idle = true;
    let failures = 0;
    while (!this.closed) {
      try {
        const peeked: boolean = idle;
        idle = (await step(peeked)).idle;
        if (!peeked) failures = 0;
      } catch (error) {
        if (this.closed) break;
        failures++;
        const reason = error instanceof Error ? error.message : inspect(error);
        process.emitWarning(`a search index step failed (${failures} in a row): ${reason}`);
        // The work is there still: a step again once the wait is over, not a look at the queue first.
        idle = false;
      }
      // Busy: the next step as soon as the event loop has had its turn; idle: a look at the queue later; after
      // failures, later and later: on a full disk each try grew the log by what a file's removal had just freed,
      // five times a second. Closing ends any wait.
      const wait = failures ? Math.min(IDLE_POLL_MS * 2 ** failures, MAX_RETRY_MS) : idle ? IDLE_POLL_MS : 0;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.loop;
    await this.thread?.release();
  }
}
