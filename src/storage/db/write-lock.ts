// The write lock of a SQLite database file in this process: every write of the main connection (database.ts)
// and every step of the search indexer's connection (search-indexer.ts) takes it, waiting asynchronously, so
// that SQLite's own wait for the other connection's write (busy_timeout) never sleeps on the event loop.
// With several workers (cluster.ts) it then takes the primary's lock, which orders the processes.
import path from 'node:path';
import type { WriteLock } from '../../workers.ts';

const locks = new Map<string, WriteLock>();

/** The lock of `file` in this process (one per file, whichever connections write it), first come first served. */
export function processWriteLock(file: string, primary: WriteLock | null): WriteLock {
  const key = path.resolve(file);
  let lock = locks.get(key);
  if (!lock) {
    lock = fifoLock(primary);
    locks.set(key, lock);
  }
  return lock;
}

function fifoLock(primary: WriteLock | null): WriteLock {
  let held = false;
  const waiting: (() => void)[] = [];
  const releaseLocal = () => {
    const next = waiting.shift();
    if (next) next();
    else held = false;
  };
  return {
    async acquire() {
      if (held) await new Promise<void>((resolve) => waiting.push(resolve));
      else held = true;
      if (!primary) return;
      try {
        await primary.acquire();
      } catch (error) {
        releaseLocal();
        throw error;
      }
    },
    release() {
      primary?.release();
      releaseLocal();
    },
  };
}
