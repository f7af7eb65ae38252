// Checkpoints of a SQLite database's write-ahead log, off the event loop. SQLite checkpoints on the
// connection whose commit takes the log past 1,000 pages, inside that commit: on our one connection that is
// the event loop, for as long as copying and syncing the pages takes (up to 200 ms on a busy disk here, and
// again every 4 MiB of a large write). A thread of its own checkpoints every second and whenever a large
// write asks, so the log rarely reaches the connection's own threshold, which stays as the backstop. Only
// after a write: an idle server's thread ends (piscina's idle timeout) and gives its memory back.
import { Piscina } from 'piscina';
import { shippedFile } from '../../shipped-files.ts';

const EVERY_MS = 1000;

export class WalCheckpoints {
  private readonly pool: Piscina;
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  /** Whether a write ended since the last checkpoint began. */
  private dirty = false;

  constructor(private readonly file: string) {
    // From source the worker is checkpoint-worker.ts (run through tsx, as its parent is); built, .js.
    const worker = import.meta.url.endsWith('.ts') ? 'checkpoint-worker.ts' : 'checkpoint-worker.js';
    this.pool = new Piscina({
      filename: shippedFile('storage', 'db', worker),
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: 5 * EVERY_MS,
    });
    // A thread failing outside a task must not end the server (an 'error' event nobody hears would).
    this.pool.on('error', (error: Error) => process.emitWarning(`a checkpoint thread failed: ${error.message}`));
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
    this.running ??= this.pool.run(this.file).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => {});
    await this.pool.destroy();
  }
}
