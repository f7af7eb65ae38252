// A worker's side of `serve --workers N` (cluster.ts is the primary's): what it asks the primary over
// node:cluster's IPC channel. The primary holds what must be one for all workers of a SQLite database: the
// rate-limit counts (in the database on PostgreSQL, rate-counters.ts) and the write lock (database.ts).
// Outside a cluster worker every function here answers null: the process is the only one.
import cluster from 'node:cluster';
import type { RateCounters } from './storage/rate-counters.ts';

/** A message between the primary and its workers; `snippetd` names its kind. */
export type ToPrimary =
  | { snippetd: 'serving'; address: string }
  | { snippetd: 'ask'; id: number; question: Question }
  | { snippetd: 'unlock' };
export type Question = { kind: 'hit'; key: string; periodSeconds: number } | { kind: 'lock' } | { kind: 'metrics' };
export type ToWorker =
  | { snippetd: 'workers'; serving: number; wanted: number }
  | { snippetd: 'answer'; id: number; answer: unknown };

export interface WriteLock {
  acquire(): Promise<void>;
  release(): void;
}

let linked = false;
let nextId = 0;
const pending = new Map<number, (answer: unknown) => void>();
/** Workers serving and wanted, as the primary last told; none known yet counts as not all serving. */
let workers = { serving: 0, wanted: 1 };

function link(): void {
  if (linked) return;
  linked = true;
  process.on('message', (message: ToWorker) => {
    if (message?.snippetd === 'answer') {
      const resolve = pending.get(message.id);
      pending.delete(message.id);
      resolve?.(message.answer);
    } else if (message?.snippetd === 'workers') workers = { serving: message.serving, wanted: message.wanted };
  });
}

function send(message: ToPrimary): void {
  process.send!(message);
}

/** Asks the primary and waits for its answer. */
function ask<T>(question: Question): Promise<T> {
  link();
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve as (answer: unknown) => void);
    send({ snippetd: 'ask', id, question });
  });
}

export const inWorker = () => cluster.isWorker;

/** The primary's rate-limit counts (rate-counters.ts), in a worker; else null. */
export function primaryCounter(): RateCounters | null {
  if (!cluster.isWorker) return null;
  return { hit: (key, periodSeconds) => ask({ kind: 'hit', key, periodSeconds }) };
}

/**
 * Every worker's metrics summed by the primary (prom-client's AggregatorRegistry), in a worker; else null. A
 * scrape reaches one worker of the port's; this answers for all of them. Refused when a worker did not answer.
 */
export function clusterMetrics(): Promise<string> | null {
  if (!cluster.isWorker) return null;
  return ask<{ text: string } | { error: string }>({ kind: 'metrics' }).then((answer) => {
    if ('error' in answer) throw new Error(`the workers' metrics could not be gathered: ${answer.error}`);
    return answer.text;
  });
}

/** The workers' one write lock on a SQLite database, held by the primary, in a worker; else null. */
export function primaryWriteLock(): WriteLock | null {
  if (!cluster.isWorker) return null;
  return {
    acquire: () => ask<void>({ kind: 'lock' }),
    release: () => send({ snippetd: 'unlock' }),
  };
}

/** Tells the primary this worker listens (at `address`) and handles signals. */
export function announceServing(address: string): void {
  link();
  send({ snippetd: 'serving', address });
}

/** A readiness check (GitLab's master_check under Puma): fails unless every worker serves; null alone. */
export function workersCheck(): (() => Promise<void>) | null {
  if (!cluster.isWorker) return null;
  link();
  return async () => {
    if (!process.connected) throw new Error('the primary process is gone');
    if (workers.serving < workers.wanted) throw new Error(`${workers.serving} of ${workers.wanted} workers serve`);
  };
}
