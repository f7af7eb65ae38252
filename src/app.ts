// buildApp(config): the whole HTTP application over its database. HTTP tests import only this.
import path from 'node:path';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Config } from './config.ts';
import { relyingPartyOf } from './http/oidc-relying-party.ts';
import { openConfiguredDatabase } from './startup-checks.ts';
import { createStore } from './storage/db/store.ts';
import { startSearchIndexer } from './storage/db/database.ts';
import { ServingCaches } from './storage/git/serving-cache.ts';
import { memoryCounters, rateCounters } from './storage/rate-counters.ts';
import { registerApiThrottle, registerProtectedPathsThrottle } from './http/rate-limits.ts';
import { PushHooks } from './storage/git/push-hooks.ts';
import { ReadCache, withCachedReads } from './storage/db/read-cache.ts';
import { usesReadCache } from './http/request.ts';
import { parseRackQuery } from './http/rack-params.ts';
import { registerBodyParsers } from './http/plugins/body.ts';
import { MAX_BODY_CEILING, registerBodyLimits } from './http/plugins/body-limits.ts';
import { answerClientError, answerFor, answerUnservedMethods, registerErrorHandling } from './http/plugins/errors.ts';
import { Failure } from './domain/failure.ts';
import { registerAuth } from './http/plugins/auth.ts';
import { registerMalformedStrings } from './http/plugins/malformed-strings.ts';
import { registerResponseHeaders } from './http/plugins/headers.ts';
import { registerCors } from './http/plugins/cors.ts';
import { registerCompression, registerJsonCompression } from './http/plugins/compression.ts';
import { baseUrl, pathPrefixOf, withoutPathPrefix } from './http/urls.ts';
import { schemaCompilers } from './http/schema-compilers.ts';
import { writeJson } from './http/prepared-answer.ts';
import { monitoringRoutes, observeRequests } from './http/plugins/monitoring.ts';
import { databaseAnswers, servingCachesUsable } from './storage/readiness.ts';
import { createLogger, RequestLogLines, requestId, requestLogger } from './logging.ts';
import { createMetrics } from './metrics.ts';
import { workersCheck } from './workers.ts';
import type { Logger } from 'pino';
import instanceRoutes from './http/routes/instance.ts';
import userRoutes from './http/routes/users.ts';
import groupRoutes from './http/routes/groups.ts';
import namespaceRoutes from './http/routes/namespaces.ts';
import projectRoutes from './http/routes/projects.ts';
import memberRoutes from './http/routes/members.ts';
import projectSnippetRoutes from './http/routes/project-snippets.ts';
import snippetRoutes from './http/routes/snippets.ts';
import searchRoutes from './http/routes/search.ts';
import repositoryFileRoutes from './http/routes/repository-files.ts';
import projectTemplateRoutes from './http/routes/project-templates.ts';
import templateRoutes from './http/routes/templates.ts';
import pathRoutes from './http/routes/paths.ts';
import ephemeralRoutes from './http/routes/ephemeral.ts';
import { EphemeralControls } from './ephemeral.ts';
import fs from 'node:fs';
import { pageRoutes } from './http/pages/index.ts';
import { acceptEverything, akismetChecker } from './domain/spam.ts';
import { setRenderBudget } from './domain/rendering.ts';
import { RevisionPreparer } from './domain/snippets/history.ts';

// GitLab paths (group%2Fsub%2Fproject, nested file paths) are far longer than Fastify's default 100.
const ROUTER_OPTIONS = { maxParamLength: 4096 };

/** `logger`: the process's logger (server.ts); by default one at the configured level on stdout. */
export async function buildApp(config: Config, logger?: Logger): Promise<FastifyInstance> {
  const metrics = createMetrics();
  setRenderBudget(config.renderBudgetMs);
  const db = await openConfiguredDatabase(config, metrics.query);
  // A serving process keeps SQLite's search index (a command of the CLI leaves it to the server).
  startSearchIndexer(db);
  const store = createStore(db);
  const readCache = new ReadCache(db.readEpoch);
  metrics.cache('read', readCache.counts);
  metrics.cache('git_object', store.objects.counts);

  const pathPrefix = pathPrefixOf(config.externalUrl);
  const belowPrefix = withoutPathPrefix(pathPrefix);
  const app = Fastify({
    loggerInstance: (logger ?? createLogger(config.logLevel)) as FastifyBaseLogger,
    // A well-formed X-Request-Id is the request's id in every log line and in the answer; else our own.
    requestIdHeader: false,
    genReqId: requestId,
    childLoggerFactory: requestLogger,
    logController: new RequestLogLines(),
    // The largest body anyone may send; plugins/body-limits.ts decides each request's own limit.
    bodyLimit: config.maxBodyBytes ?? MAX_BODY_CEILING,
    // Slow clients: a request must be whole within the request timeout (its headers within a minute at
    // most), and a connection on which nothing moves, before a request or between two, is closed. Node checks
    // every second, not every 30.
    requestTimeout: config.requestTimeoutSeconds * 1000,
    connectionTimeout: config.idleTimeoutSeconds * 1000,
    keepAliveTimeout: config.idleTimeoutSeconds * 1000,
    // A test suite's stand-in stops when asked, whatever it is still sending: a test that read an answer's status
    // and not its body held close() (and SIGTERM) until the client let go. A server that keeps its data lets its
    // answers finish.
    forceCloseConnections: config.ephemeral ? true : 'idle',
    http: {
      headersTimeout: Math.min(60, config.requestTimeoutSeconds) * 1000,
      connectionsCheckingInterval: 1000,
    },
    clientErrorHandler: answerClientError,
    routerOptions: { ...ROUTER_OPTIONS, querystringParser: parseRackQuery },
    ...(pathPrefix && { rewriteUrl: (request: { url?: string }) => belowPrefix(request.url ?? '/') }),
    schemaController: { compilersFactory: schemaCompilers },
    trustProxy: config.trustedProxies.length ? config.trustedProxies : false,
    // Errors Fastify raises before routing (a URL that is not valid percent-encoding) in GitLab's shape.
    frameworkErrors: (error, request, reply) => {
      const [status, body] = answerFor(
        error.code === 'FST_ERR_BAD_URL' ? new Failure('bad_request', 'invalid URL encoding') : error,
      );
      // Hooks do not run for these answers and Fastify would add a charset: write them as they must be.
      reply.raw.setHeader('x-request-id', request.id);
      writeJson((reply as unknown as FastifyReply).hijack().raw, status, JSON.stringify(body));
      // Nor is Fastify's request line written (logging.ts, RequestLogLines).
      request.log.info({ req: request, res: { statusCode: status } }, 'request completed');
    },
  });
  observeRequests(app, metrics);
  app.decorate('store', store);
  app.decorate('readStore', withCachedReads(store, readCache));
  // Before anything reads: drop what depends on an epoch any node moved since (read-cache.ts), and note where
  // the epochs were, under which alone this request's whole answers may be kept.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!usesReadCache(request)) return done();
    readCache.refresh((error) => {
      request.cacheGeneration = readCache.generation;
      done(error);
    });
  });
  // An ephemeral server's counts are in its memory (one process, SQLite), for its reset to forget.
  const ephemeralCounts = config.ephemeral ? memoryCounters() : null;
  app.decorate('rateCounters', ephemeralCounts ?? rateCounters(db));
  app.decorate('externalUrl', config.externalUrl);
  app.decorate('pathPrefix', pathPrefix);
  const oidc = relyingPartyOf(config);
  app.decorate('oidc', oidc);
  if (oidc) app.addHook('onReady', async () => oidc.warmUp(app.log));
  app.decorate('dataDir', config.dataDir);
  const servingCaches = new ServingCaches(path.join(config.dataDir, 'cache', 'git'));
  metrics.cache('git_serving', servingCaches.counts);
  const pushHooks = new PushHooks({
    // A client's mistake, answered with git's refusal: worth a line, not an alarm.
    refused: ({ updates, missing }) => app.log.info({ updates, missing }, 'a git push named objects it did not send'),
    failed: (error) => app.log.error({ err: error }, 'a git push failed'),
  });
  app.decorate('gitNode', { caches: servingCaches, pushHooks, maxBodyBytes: config.maxGitBodyBytes });
  // Before the caches go: a diff being prepared writes to its serving cache.
  const revisions = new RevisionPreparer(store, servingCaches);
  app.addHook('onClose', () => revisions.close());
  app.addHook('onClose', async () => {
    servingCaches.close();
    // Ephemeral mode's data directory is a temporary one of its own (ephemeral.ts).
    if (config.ephemeral) fs.rmSync(config.dataDir, { recursive: true, force: true });
  });
  app.decorate('ephemeral', ephemeralCounts ? new EphemeralControls(store, servingCaches, ephemeralCounts) : null);
  app.decorate('snippetDeps', {
    store,
    committed: (snippetId: number, commit: string) => revisions.prepare(snippetId, commit),
    spam: config.akismetUrl
      ? akismetChecker(config.akismetUrl, config.akismetApiKey, config.externalUrl ?? 'http://localhost')
      : acceptEverything,
  });
  app.addHook('onClose', async () => db.close());

  registerCors(app, config.externalUrl);
  registerBodyLimits(app, config.maxBodyBytes, baseUrl);
  registerBodyParsers(app, config.maxBodyBytes ?? MAX_BODY_CEILING);
  registerMalformedStrings(app);
  registerErrorHandling(app);
  registerResponseHeaders(app);
  registerJsonCompression(app);
  registerAuth(app, baseUrl);
  registerApiThrottle(app);
  registerProtectedPathsThrottle(app, baseUrl);
  // Before any route: the plugin gives each route its hook as the route is added.
  await registerCompression(app);

  const knowAllPaths = answerUnservedMethods(app, ROUTER_OPTIONS);
  await app.register(
    async (api) => {
      await api.register(instanceRoutes);
      await api.register(userRoutes);
      await api.register(groupRoutes);
      await api.register(namespaceRoutes);
      await api.register(projectRoutes);
      await api.register(memberRoutes);
      await api.register(projectSnippetRoutes);
      await api.register(snippetRoutes);
      await api.register(searchRoutes);
      await api.register(repositoryFileRoutes);
      await api.register(projectTemplateRoutes);
      await api.register(templateRoutes);
    },
    { prefix: '/api/v4' },
  );
  await app.register(pathRoutes);
  await app.register(ephemeralRoutes);
  await app.register(pageRoutes);
  app.all('/api/v3/*', async (_request, reply) =>
    reply.code(410).send({ error: 'API V3 is no longer supported. Use API V4 instead.' }),
  );
  knowAllPaths();
  monitoringRoutes(app, {
    metrics,
    checks: {
      db: () => databaseAnswers(db),
      storage: () => servingCachesUsable(servingCaches.root),
      master: workersCheck(),
    },
    allowlist: config.monitoringAllowlist,
  });
  return app;
}
