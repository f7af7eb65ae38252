// Ephemeral mode, for test suites that start snippetd as a GitLab stand-in (`serve --ephemeral`,
// startSnippetd in api.ts): the database lives in memory, files in a temporary directory removed at exit,
// and two controls: seed (add a seed document, all of it or nothing) and reset (back to the state right
// after start: root and the start seed). docs/tool-authors.md is the user's side of this.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from './config.ts';
import type { Store } from './storage/db/store.ts';
import type { ServingCaches } from './storage/git/serving-cache.ts';
import { restoreSnapshot, saveSnapshot } from './storage/db/snapshot.ts';
import { isProcessAlive, pidInName } from './storage/leftovers.ts';
import { applySeed, type SeedResult } from './domain/seed.ts';

const DIR_PREFIX = 'snippetd-ephemeral-';
/** Exactly what mkdtemp makes below: nothing else in the temporary directory is ever ours to remove. */
const OWN_DIR = /^snippetd-ephemeral-\d+-[A-Za-z0-9]{6}$/;

/**
 * The configuration an ephemeral server runs with: an in-memory database and a new temporary data
 * directory (`snippetd-ephemeral-<pid>-…`, so that one left by a killed process is removed here).
 */
export function ephemeralConfig(config: Config): Config {
  const tmp = os.tmpdir();
  for (const name of fs.readdirSync(tmp)) {
    if (OWN_DIR.test(name) && !isProcessAlive(pidInName(name, DIR_PREFIX)))
      try {
        fs.rmSync(path.join(tmp, name), { recursive: true, force: true });
      } catch {
        // Another user's on a shared machine, say: theirs to remove, and no reason for this start to fail.
      }
  }
  const dataDir = fs.mkdtempSync(path.join(tmp, `${DIR_PREFIX}${process.pid}-`));
  return { ...config, ephemeral: true, dataDir, databaseUrl: 'sqlite::memory:' };
}

/** The state right after start, and the state before a seed that may yet fail. */
const STARTED = 'started';
const BEFORE_SEED = 'before_seed';

export class EphemeralControls {
  /** seed and reset run one at a time, in the order they were asked for. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly servingCaches: ServingCaches,
    /** The rate limits' counts: an ephemeral server's are in its memory (rate-counters.ts). */
    private readonly rateCounters: { clear(): void },
  ) {}

  /** Applies the start seed (if any) and remembers the result as the state reset returns to. */
  start(seed: unknown | null): Promise<SeedResult | null> {
    return this.serially(async () => {
      // No snapshot before it: a start seed that fails stops the start.
      const result = seed === null ? null : await applySeed(this.store, seed);
      await saveSnapshot(this.store.db, STARTED);
      return result;
    });
  }

  /** Adds what `doc` lists; on any problem nothing of it stays. */
  seed(doc: unknown): Promise<SeedResult> {
    return this.serially(() => this.seedWhole(doc));
  }

  /** Back to the state right after start; ids given after a reset are those given after the start. */
  reset(): Promise<void> {
    return this.serially(async () => {
      await this.restore(STARTED);
      // Counted by user, project and path: ids given out again would inherit the counts of those taken away. (A
      // failed seed gives out no id another had, and keeps the counts.)
      this.rateCounters.clear();
    });
  }

  private async seedWhole(doc: unknown): Promise<SeedResult> {
    await saveSnapshot(this.store.db, BEFORE_SEED);
    try {
      return await applySeed(this.store, doc);
    } catch (error) {
      await this.restore(BEFORE_SEED);
      throw error;
    }
  }

  private async restore(name: string): Promise<void> {
    await restoreSnapshot(this.store.db, name);
    // Both are keyed by repository id, and a restore gives ids out again (the read cache sees the epoch move).
    this.store.objects.clear();
    await this.servingCaches.clear();
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => {});
    return result;
  }
}
