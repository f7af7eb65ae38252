// Counters for rate limits (domain/rate-limits.ts), over fixed windows as GitLab's Rack::Attack counts.
// PostgreSQL: in the database, so that every node counts against the same limit. SQLite: in memory, since a
// SQLite database has one server (a count in the database would cost a synchronous commit on every raw
// read): this process's, or with several workers the primary's, which each worker asks (workers.ts).
import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from './db/database.ts';
import { primaryCounter } from '../workers.ts';

export interface RateCounters {
  /** Counts one request under `key` in the current window of `periodSeconds`; answers the count so far. */
  hit(key: string, periodSeconds: number): Promise<{ count: number; secondsLeft: number }>;
}

/** Windows older than this are deleted now and then (the longest period a setting may take is far shorter). */
const KEEP_SECONDS = 7 * 24 * 3600;
/** Entries kept in memory before old windows are swept. */
const SWEEP_AT = 100_000;

/**
 * The stored key of a counter: a long one (a raw file's path may be 16 KB, and each path read counts on its
 * own) by its hash, so that a hundred thousand counters hold a few megabytes, not 1.6 GB.
 */
function counterId(periodSeconds: number, key: string): string {
  const id = `${periodSeconds}:${key}`;
  return id.length <= 128 ? id : `${periodSeconds}:sha256:${crypto.createHash('sha256').update(key).digest('base64')}`;
}

function windowOf(periodSeconds: number) {
  const now = Math.floor(Date.now() / 1000);
  const start = now - (now % periodSeconds);
  return { start, secondsLeft: start + periodSeconds - now };
}

export function rateCounters(db: Db): RateCounters {
  if (db.dialect === 'postgres') return databaseCounters(db);
  return primaryCounter() ?? memoryCounters();
}

/**
 * Counts in this process's memory: a single server's, or the primary's for its workers (cluster.ts). `clear`
 * forgets them all: an ephemeral server's reset (ephemeral.ts) gives the ids they are counted by out again.
 */
export function memoryCounters(): RateCounters & { clear(): void } {
  const counts = new Map<string, { start: number; count: number }>();
  return {
    async hit(key, periodSeconds) {
      const { start, secondsLeft } = windowOf(periodSeconds);
      const id = counterId(periodSeconds, key);
      let entry = counts.get(id);
      if (!entry || entry.start !== start) {
        if (counts.size >= SWEEP_AT) {
          const now = Date.now() / 1000;
          for (const [k, e] of counts) if (e.start + KEEP_SECONDS < now) counts.delete(k);
          if (counts.size >= SWEEP_AT) counts.clear();
        }
        entry = { start, count: 0 };
        counts.set(id, entry);
      }
      entry.count++;
      return { count: entry.count, secondsLeft };
    },
    clear() {
      counts.clear();
    },
  };
}

function databaseCounters(db: Db): RateCounters {
  let hits = 0;
  return {
    async hit(key, periodSeconds) {
      const { start, secondsLeft } = windowOf(periodSeconds);
      const id = counterId(periodSeconds, key);
      const { rows } = await sql<{ count: number }>`
        INSERT INTO rate_limit_counters (key, window_start, count) VALUES (${id}, ${start}, 1)
        ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limit_counters.count + 1
        RETURNING count`.execute(db.kysely);
      if (++hits % 10_000 === 0)
        await sql`DELETE FROM rate_limit_counters WHERE window_start < ${start - KEEP_SECONDS}`.execute(db.kysely);
      return { count: Number(rows[0].count), secondsLeft };
    },
  };
}
