// What an operator's tools read, at GitLab's paths: /-/health, /-/liveness, /-/readiness and /-/metrics,
// answered only to the monitoring allow-list (GitLab's monitoring.ip_whitelist); and the one seam where
// requests are measured and get their X-Request-Id header. No rate limit applies to these paths: the API's
// throttle (http/rate-limits.ts) covers /api/ only, as GitLab's Rack Attack leaves them out.
import net from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Metrics } from '../../metrics.ts';
import { sendFailurePage } from '../pages/layout.ts';
import { notFound } from '../../domain/failure.ts';

export interface MonitoringOptions {
  metrics: Metrics;
  /**
   * GitLab's readiness checks, each failing by throwing: the database, this node's git storage and, with
   * several workers, Puma's master_check: the primary is there and every worker serves (workers.ts).
   */
  checks: { db: () => Promise<void>; storage: () => Promise<void>; master: (() => Promise<void>) | null };
  allowlist: string[];
}

const SNIPPET_WRITES: Record<string, 'create' | 'update' | 'delete'> = {
  'POST /api/v4/projects/:id/snippets': 'create',
  'PUT /api/v4/projects/:id/snippets/:snippet_id': 'update',
  'DELETE /api/v4/projects/:id/snippets/:snippet_id': 'delete',
};
// Every git clone, fetch or push starts with one ref advertisement (protocol v0 and v2 alike; v2 then
// makes one or more pack requests), so operations are counted there and pack requests are timed.
const GIT_REFS_PATH = '.git/info/refs';
const GIT_SERVICE = /(?:^|&)service=git-(upload|receive)-pack(?:&|$)/;
const GIT_PACK = /\.git\/git-(upload|receive)-pack(?:\?|$)/;

/**
 * The service a ref advertisement's URL asks for. The path and the query are looked at apart: one pattern over
 * the URL (`refs\?(?:.*&)?service=`) tried each `&` from each start, 9 ms for a 16 KB URL.
 */
function gitRefsService(url: string): RegExpExecArray | null {
  const query = url.indexOf('?');
  return query !== -1 && url.slice(0, query).endsWith(GIT_REFS_PATH) ? GIT_SERVICE.exec(url.slice(query + 1)) : null;
}

/** A check waits at most this long, as GitLab's (a hung database must not hang the probe). */
const CHECK_TIMEOUT_MS = 10_000;

/** Every answer carries X-Request-Id and is measured. Register before any other onRequest hook. */
export function observeRequests(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onRequest', (request, reply, done) => {
    // On the raw answer, so answers written past Fastify's pipeline (prepared answers) carry it too.
    reply.raw.setHeader('x-request-id', request.id);
    done();
  });
  // onResponse runs for those answers too (Fastify's own listener on the response's end); elapsedTime is
  // from when Fastify routed the request.
  app.addHook('onResponse', (request, reply, done) => {
    measure(metrics, request, reply, reply.elapsedTime / 1000);
    done();
  });
  // A request is logged once answered (logging.ts, RequestLogLines); one that ends without its answer (its
  // client went away, or its body did not come in time) is logged as it ends, so its id can still be found.
  app.addHook('onRequestAbort', (request, done) => {
    request.log.info({ req: request }, 'request aborted');
    done();
  });
}

/**
 * The monitoring routes. Register after the paths that answer 405 are collected (errors.ts,
 * answerUnservedMethods): another method on these paths is then what it would be without them, as for a
 * client outside the list.
 */
export function monitoringRoutes(app: FastifyInstance, options: MonitoringOptions): void {
  const { metrics } = options;
  const allowed = allowlist(options.allowlist);
  // Outside the allow-list these paths are a 404 page (GitLab's render_404), never a way to sign in.
  const monitoring =
    (handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) =>
    (request: FastifyRequest, reply: FastifyReply) =>
      allowed(request.ip)
        ? handler(request, reply)
        : sendFailurePage(request, reply, notFound(), { signInFirst: false });

  // GitLab's BasicHealthCheck: the process answers; nothing else is checked. Outside the list, an empty 404.
  app.get('/-/health', async (request, reply) => {
    if (!allowed(request.ip)) return reply.code(404).type('text/plain').send('');
    return reply.type('text/plain').send('GitLab OK');
  });

  app.get(
    '/-/liveness',
    monitoring(async () => ({ status: 'ok' })),
  );

  // GitLab's Probes::Collection: `{"status":"ok"}`, 503 and "failed" when a check failed; with `all`
  // (any value, as Rails' `present?`) each check too, as a list of results.
  app.get(
    '/-/readiness',
    monitoring(async (request, reply) => {
      const checks = {
        db_check: await check('Db', options.checks.db),
        storage_check: await check('Storage', options.checks.storage),
        ...(options.checks.master && { master_check: await check('Master', options.checks.master) }),
      };
      const ok = Object.values(checks).every((c) => c.status === 'ok');
      const all = (request.query as Record<string, unknown>).all;
      const body = { status: ok ? 'ok' : 'failed', ...(all ? mapValues(checks, (c) => [c]) : {}) };
      // GitLab sets this so that Workhorse passes the failure's body through.
      if (!ok) reply.header('x-gitlab-custom-error', '1');
      return reply.code(ok ? 200 : 503).send(body);
    }),
  );

  app.get(
    '/-/metrics',
    monitoring(async (_request, reply) => reply.type(metrics.contentType).send(await metrics.text())),
  );
}

function measure(metrics: Metrics, request: FastifyRequest, reply: FastifyReply, seconds: number): void {
  const route = request.routeOptions.url ?? 'unmatched';
  const status = reply.raw.statusCode;
  metrics.request(request.method, route, status, seconds);
  const write = SNIPPET_WRITES[`${request.method} ${route}`];
  if (write && status < 300) metrics.snippetWrite(write);
  if (route !== '/*') return;
  const operation = (m: RegExpExecArray | null) => (m ? (m[1] === 'upload' ? 'fetch' : 'push') : null);
  const started = request.method === 'GET' ? operation(gitRefsService(request.url)) : null;
  if (started) metrics.gitOperation(started, status);
  const pack = request.method === 'POST' ? operation(GIT_PACK.exec(request.url)) : null;
  if (pack) metrics.gitPack(pack, seconds);
}

/** IPv4 clients on a dual-stack socket appear as ::ffff:a.b.c.d; they match IPv4 entries, as in GitLab. */
function allowlist(entries: string[]): (ip: string) => boolean {
  const list = new net.BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const family = net.isIPv4(address) ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return (ip) => {
    const v4 = ip.startsWith('::ffff:') && net.isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
    return net.isIP(v4) !== 0 && list.check(v4, net.isIPv4(v4) ? 'ipv4' : 'ipv6');
  };
}

interface CheckResult {
  status: 'ok' | 'failed';
  message?: string;
}

/** Runs a check as GitLab's SimpleAbstractCheck reports it: ok, timed out, or the unexpected result. */
async function check(name: string, run: () => Promise<void>): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut()), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([run(), timeout]);
    return { status: 'ok' };
  } catch (error) {
    if (error instanceof TimedOut) return { status: 'failed', message: `${name} check timed out` };
    return { status: 'failed', message: `unexpected ${name} check result: ${(error as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}

class TimedOut extends Error {}

function mapValues<T, U>(object: Record<string, T>, f: (value: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, f(v)]));
}
