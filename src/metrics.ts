// What /-/metrics answers, in Prometheus' text format (prom-client). The HTTP side is measured by one
// plugin (observeRequests in http/plugins/monitoring.ts), database queries by Kysely's `log` option (storage/db/database.ts),
// caches by the counts they keep themselves (read at scrape time); the domain knows nothing of metrics. With
// several workers a scrape answers for all of them, summed by the primary.
import client from 'prom-client';
import { clusterMetrics, inWorker } from './workers.ts';

/** Counts a cache keeps of itself; read when /-/metrics is asked. */
export interface CacheCounts {
  hits: number;
  misses: number;
}

// The process's own metrics (CPU, memory, event loop, GC) exist once per process, whatever the number
// of apps in it (the tests build many): one registry, made on first use.
let processRegistry: client.Registry | null = null;
function processMetrics(): client.Registry {
  if (!processRegistry) {
    processRegistry = new client.Registry();
    client.collectDefaultMetrics({ register: processRegistry, prefix: 'snippetd_' });
  }
  return processRegistry;
}

const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const QUERY_SECONDS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];

export type Metrics = ReturnType<typeof createMetrics>;

/** The metrics of one app. */
export function createMetrics() {
  const registry = new client.Registry();
  if (inWorker()) {
    // What this worker tells the primary when a scrape asks for all workers' metrics (clusterMetrics).
    client.AggregatorRegistry.setRegistries([registry, processMetrics()]);
    new client.AggregatorRegistry();
  }
  const requests = new client.Counter({
    name: 'snippetd_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const requestSeconds = new client.Histogram({
    name: 'snippetd_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer being written, by route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: SECONDS,
    registers: [registry],
  });
  const snippetWrites = new client.Counter({
    name: 'snippetd_snippet_writes_total',
    help: 'Snippets created, updated or deleted through the API (answered 2xx)',
    labelNames: ['action'] as const,
    registers: [registry],
  });
  const gitOperations = new client.Counter({
    name: 'snippetd_git_operations_total',
    help: 'Git operations asked over HTTP (clone or fetch: fetch; push), counted at their ref advertisement, by status',
    labelNames: ['operation', 'status'] as const,
    registers: [registry],
  });
  const gitPackSeconds = new client.Histogram({
    name: 'snippetd_git_pack_duration_seconds',
    help: 'Time to serve git pack requests (git-upload-pack for clone or fetch, git-receive-pack for push)',
    labelNames: ['operation'] as const,
    buckets: SECONDS,
    registers: [registry],
  });
  const querySeconds = new client.Histogram({
    name: 'snippetd_db_query_duration_seconds',
    help: 'Database queries, by statement kind and outcome',
    labelNames: ['statement', 'outcome'] as const,
    buckets: QUERY_SECONDS,
    registers: [registry],
  });
  const caches = new Map<string, CacheCounts>();
  new client.Counter({
    name: 'snippetd_cache_requests_total',
    help: 'Lookups in the node-local caches, by cache and result (hit or miss)',
    labelNames: ['cache', 'result'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [cache, counts] of caches) {
        this.inc({ cache, result: 'hit' }, counts.hits);
        this.inc({ cache, result: 'miss' }, counts.misses);
      }
    },
  });

  return {
    request(method: string, route: string, status: number, seconds: number) {
      requests.inc({ method, route, status });
      requestSeconds.observe({ method, route }, seconds);
    },
    snippetWrite(action: 'create' | 'update' | 'delete') {
      snippetWrites.inc({ action });
    },
    gitOperation(operation: 'fetch' | 'push', status: number) {
      gitOperations.inc({ operation, status });
    },
    gitPack(operation: 'fetch' | 'push', seconds: number) {
      gitPackSeconds.observe({ operation }, seconds);
    },
    /** For Kysely's `log` option. */
    query(sql: string, failed: boolean, milliseconds: number) {
      const statement = /^\s*(select|insert|update|delete|with)\b/i.exec(sql)?.[1].toLowerCase() ?? 'other';
      querySeconds.observe({ statement, outcome: failed ? 'error' : 'ok' }, milliseconds / 1000);
    },
    cache(name: string, counts: CacheCounts) {
      caches.set(name, counts);
    },
    contentType: registry.contentType,
    /** This process's metrics; with several workers, all of theirs summed. */
    async text(): Promise<string> {
      const summed = clusterMetrics();
      if (summed) return summed;
      return (await registry.metrics()) + (await processMetrics().metrics());
    },
  };
}
