// `snippetd serve --workers N` (N > 1): the primary process, as GitLab's Puma runs in cluster mode. It
// prepares the database once (migrations, repaired settings, root and its token printed once), then forks N
// workers with node:cluster, which share one port (the primary hands them connections in turn). It
// replaces a worker that dies, stops them all on SIGTERM/SIGINT (each finishes what it is answering), and
// tells them how many serve, for /-/readiness. With SQLite it also holds what the workers must share of one
// database file: the rate-limit counts and the write lock (workers.ts is the workers' side).
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { memoryCounters } from './storage/rate-counters.ts';
import type { Question, ToPrimary, ToWorker } from './workers.ts';

/**
 * Every worker's metrics summed (counters and histograms added, prom-client's own rule for each default metric),
 * asked of each worker over the IPC channel; prom-client is loaded on the first scrape.
 */
async function workersMetrics(): Promise<{ text: string } | { error: string }> {
  const { AggregatorRegistry } = (await import('prom-client')).default;
  try {
    return { text: await new AggregatorRegistry().clusterMetrics() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** A worker that dies sooner than this after it was forked is replaced only after this long (a crash loop). */
const RESTART_DELAY_MS = 1000;

export interface PrimaryOptions {
  lifecycle: Logger;
  /** Everything `serve` checks and does to the database before listening, done once here. */
  prepare: () => Promise<void>;
  /** The "listening on …" line, once every worker listens. */
  listening: (address: string) => void;
}

export async function runPrimary(config: Config, options: PrimaryOptions): Promise<void> {
  const { lifecycle } = options;
  await options.prepare();
  const wanted = config.workers;
  const serving = new Set<Worker>();
  const forkedAt = new Map<Worker, number>();
  const counters = memoryCounters();
  const lock = writeLock();
  let started = false;
  let stopping = false;

  const broadcast = () => {
    const message: ToWorker = { snippetd: 'workers', serving: serving.size, wanted };
    for (const worker of Object.values(cluster.workers ?? {})) if (worker?.isConnected()) worker.send(message);
  };
  const fork = () => forkedAt.set(cluster.fork(), Date.now());
  /** Replacements of workers that died, each waiting its delay. */
  const replacing = new Set<NodeJS.Timeout>();

  const answer = (worker: Worker, id: number, value: unknown) => {
    if (worker.isConnected()) worker.send({ snippetd: 'answer', id, answer: value } satisfies ToWorker);
  };
  const ask = async (worker: Worker, id: number, question: Question) => {
    if (question.kind === 'hit') answer(worker, id, await counters.hit(question.key, question.periodSeconds));
    else if (question.kind === 'metrics') answer(worker, id, await workersMetrics());
    else lock.acquire(worker, () => answer(worker, id, undefined));
  };

  cluster.on('message', (worker, message: ToPrimary) => {
    if (message?.snippetd === 'ask') void ask(worker, message.id, message.question);
    else if (message?.snippetd === 'unlock') lock.release(worker);
    else if (message?.snippetd === 'serving') {
      serving.add(worker);
      broadcast();
      if (!started && serving.size === wanted) {
        started = true;
        options.listening(message.address);
      }
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    serving.delete(worker);
    lock.forget(worker);
    const age = Date.now() - (forkedAt.get(worker) ?? 0);
    forkedAt.delete(worker);
    if (stopping) {
      broadcast();
      // The status stop() set: a start that failed exits non-zero, a SIGTERM 0.
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(process.exitCode ?? 0);
      return;
    }
    if (!started) {
      // A worker that could not start printed why; the others would fail alike.
      lifecycle.error(`worker ${worker.id} exited before it served (${signal ?? `code ${code}`}); stopping`);
      stop(1);
      return;
    }
    broadcast();
    lifecycle.warn(
      `worker ${worker.id} (pid ${worker.process.pid}) exited (${signal ?? `code ${code}`}); replacing it`,
    );
    const timer = setTimeout(
      () => {
        replacing.delete(timer);
        fork();
      },
      age < RESTART_DELAY_MS ? RESTART_DELAY_MS : 0,
    );
    replacing.add(timer);
  });

  const stop = (status: number) => {
    stopping = true;
    // A replacement still to come would serve on, and keep the primary from ever exiting.
    for (const timer of replacing) clearTimeout(timer);
    const workers = Object.values(cluster.workers ?? {});
    if (workers.length === 0) process.exit(status);
    // Each worker closes as a single server does on SIGTERM: in-flight requests finish, then it exits.
    for (const worker of workers) worker?.process.kill('SIGTERM');
    if (status !== 0) process.exitCode = status;
  };
  const shutdown = (signal: string) => {
    if (stopping) return;
    lifecycle.info(`${signal} received, closing ${Object.keys(cluster.workers ?? {}).length} workers`);
    stop(0);
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));

  for (let i = 0; i < wanted; i++) fork();
}

/**
 * One write lock for the workers of a SQLite database, granted in the order asked. A worker that dies
 * holding it (or waiting for it) gives it up.
 */
function writeLock() {
  let holder: Worker | null = null;
  const waiting: { worker: Worker; granted: () => void }[] = [];
  const next = () => {
    const first = waiting.shift();
    holder = first?.worker ?? null;
    first?.granted();
  };
  return {
    acquire(worker: Worker, granted: () => void) {
      if (holder) waiting.push({ worker, granted });
      else {
        holder = worker;
        granted();
      }
    },
    release(worker: Worker) {
      if (holder === worker) next();
    },
    forget(worker: Worker) {
      for (let i = waiting.length - 1; i >= 0; i--) if (waiting[i].worker === worker) waiting.splice(i, 1);
      if (holder === worker) next();
    },
  };
}
