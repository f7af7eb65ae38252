// Does one hostile request hurt the others? `whileHostile` sends it to a real server process while a stream
// of cheap requests goes on, and reads what happened meanwhile from the server itself: the longest event-loop
// delay (prom-client's monitorEventLoopDelay behind /-/metrics, reset by each scrape) and the peak resident
// memory (Linux's VmHWM, reset through clear_refs), besides the cheap requests' own latency.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Spawned } from '../scripts/spawn-server.ts';

export interface Calm {
  /** The median latency of the cheap request before the hostile one was sent. */
  normalMs: number;
  /** The slowest cheap request while the hostile one went on. */
  worstMs: number;
  /** How many cheap requests were answered meanwhile. */
  answered: number;
  /** The longest the server's event loop was held while the hostile request went on. */
  loopDelayMaxMs: number;
  /** The server's peak resident memory while the hostile request went on. */
  peakRssBytes: number;
}

export const MiB = 1024 * 1024;

async function timed(url: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(url);
  await res.arrayBuffer();
  if (res.status >= 500) throw new Error(`${url} answered ${res.status} while the hostile request went on`);
  return performance.now() - start;
}

async function loopDelayMaxSeconds(server: Spawned): Promise<number> {
  const text = await (await fetch(`${server.url}/-/metrics`)).text();
  const m = /^snippetd_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
  if (!m) throw new Error('/-/metrics has no snippetd_nodejs_eventloop_lag_max_seconds');
  return Number(m[1]);
}

/** A memory figure of the server's process from /proc/<pid>/status (VmRSS now, VmHWM its peak), in bytes. */
function statusBytes(server: Spawned, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(
    fs.readFileSync(`/proc/${server.child.pid}/status`, 'utf8'),
  );
  if (!m) throw new Error(`no ${field} in /proc/<pid>/status`);
  return Number(m[1]) * 1024;
}

/** The server's resident memory now: a baseline for assertCalm's `rssBytes`. */
export const currentRss = (server: Spawned) => statusBytes(server, 'VmRSS');

const peakRss = (server: Spawned) => statusBytes(server, 'VmHWM');

/**
 * Runs `hostile` against `server` while `probePath` (a cheap GET) is asked again and again, one at a time.
 * Answers what `hostile` answered and how calm the server stayed.
 */
export async function whileHostile<T>(
  server: Spawned,
  hostile: () => Promise<T>,
  probePath = '/api/v4/version',
): Promise<{ answer: T; calm: Calm }> {
  const probe = `${server.url}${probePath}`;
  const before: number[] = [];
  for (let i = 0; i < 15; i++) before.push(await timed(probe));
  before.sort((a, b) => a - b);
  await loopDelayMaxSeconds(server); // a scrape resets the delay histogram
  fs.writeFileSync(`/proc/${server.child.pid}/clear_refs`, '5'); // resets VmHWM to the current RSS

  let done = false;
  const during: number[] = [];
  const probing = (async () => {
    while (!done) {
      during.push(await timed(probe));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  let answer: T;
  try {
    answer = await hostile();
  } finally {
    done = true;
    await probing;
  }
  during.push(await timed(probe));
  return {
    answer,
    calm: {
      normalMs: before[Math.floor(before.length / 2)],
      worstMs: Math.max(...during),
      answered: during.length,
      loopDelayMaxMs: (await loopDelayMaxSeconds(server)) * 1000,
      peakRssBytes: peakRss(server),
    },
  };
}

/**
 * The issue's bound: other requests' latency within `stallMs` of normal, the event loop never held longer,
 * and the server's memory under `rssBytes`.
 */
export function assertCalm(calm: Calm, bounds: { stallMs?: number; rssBytes?: number } = {}): void {
  const { stallMs = 250, rssBytes = 512 * MiB } = bounds;
  const seen = JSON.stringify({
    ...calm,
    peakRssMiB: Math.round(calm.peakRssBytes / MiB),
    rssBoundMiB: Math.round(rssBytes / MiB),
  });
  // SNIPPETD_TEST_PRINT_CALM=1 prints every measure, passing or not, for bench/RESULTS.md's before and after.
  if (process.env.SNIPPETD_TEST_PRINT_CALM === '1') console.error(`calm: ${seen}`);
  assert.ok(calm.worstMs - calm.normalMs <= stallMs, `a cheap request waited too long: ${seen}`);
  assert.ok(calm.loopDelayMaxMs <= stallMs, `the event loop was held too long: ${seen}`);
  assert.ok(calm.peakRssBytes <= rssBytes, `the server took too much memory: ${seen}`);
}

/** In-process tests (an app in the test's own process): the longest the event loop went without a turn while `work` ran. */
export async function longestGapDuring<T>(work: () => Promise<T>): Promise<{ answer: T; longestGap: number }> {
  let last = performance.now();
  let longestGap = 0;
  const ticks = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 1);
  try {
    const answer = await work();
    // The stretch from the last tick to the work's end counts too: a stall at the end has no tick after it.
    return { answer, longestGap: Math.max(longestGap, performance.now() - last) };
  } finally {
    clearInterval(ticks);
  }
}

/**
 * In-process tests: how long each of the snippet creates `write` (one every 100 ms, one at a time) waited while
 * `command` ran: git's command, against the app's own server, without holding this process's loop.
 */
export async function writeWaitsDuring(
  command: { args: string[]; cwd: string; env: NodeJS.ProcessEnv },
  write: () => Promise<unknown>,
): Promise<number[]> {
  let done = false;
  const ran = new Promise<void>((resolve, reject) =>
    execFile('git', command.args, { cwd: command.cwd, env: command.env }, (error) => {
      done = true;
      if (error) reject(error);
      else resolve();
    }),
  );
  const waits: number[] = [];
  while (!done) {
    const start = performance.now();
    await write();
    waits.push(performance.now() - start);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await ran;
  return waits;
}

/** In-process tests: what `work` answered, and the share of its time the event loop was busy meanwhile. */
export async function busyShareDuring<T>(work: () => Promise<T>): Promise<{ answer: T; share: number; ms: string }> {
  const before = performance.eventLoopUtilization();
  const answer = await work();
  const during = performance.eventLoopUtilization(before);
  return { answer, share: during.utilization, ms: (during.active + during.idle).toFixed(0) };
}
