// Checkpoints of a SQLite database's write-ahead log, off the event loop. SQLite checkpoints on the
// connection whose commit takes the log past 1,000 pages, inside that commit: on our one connection that is
// the event loop, for as long as copying and syncing the pages takes (up to 200 ms on a busy disk here, and
// again every 4 MiB of a large write). SQLite's background thread (sqlite-background.ts) checkpoints a second
// after a write and whenever a large write asks, so the log rarely reaches the connection's own threshold,
// which stays as the backstop. Only after a write: an idle server's thread ends and gives its memory back.
import { sqliteBackground } from './sqlite-background.ts';

const EVERY_MS = 1000;

export class WalCheckpoints {
  private readonly thread: ReturnType<typeof sqliteBackground>;
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  /** Whether a write ended since the last checkpoint began. */
  private dirty = false;

  constructor(private readonly file: string) {
    this.thread = sqliteBackground(file);
    this.timer = setInterval(() => {
      if (this.dirty) void this.run().catch(() => {});
    }, EVERY_MS).unref();
  }

  /** A write ended: the next tick checkpoints. */
  written(): void {
    this.dirty = true;
  }

  /** A checkpoint now, or the one running; refused only when the thread failed (the backstop remains). */
  run(): Promise<void> {
    this.dirty = false;
    this.running ??= this.thread
      .run({ file: this.file, kind: 'checkpoint', budgetMs: 0 })
      .then(() => {})
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => {});
    await this.thread.release();
  }
}
