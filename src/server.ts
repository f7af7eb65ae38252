// Process entry for `snippetd serve`: build the app, bootstrap root on an empty database, listen, and
// close gracefully on SIGTERM/SIGINT (in-flight requests finish, the database is closed). openServer is
// the part the programmatic API (api.ts) shares: everything but the signals. With several workers
// (cluster.ts), the primary prepares the database once and each worker opens a server.
import cluster from 'node:cluster';
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type Config, ConfigError } from './config.ts';
import {
  hasLegacyRepositories,
  hasSnippetsWithoutRepository,
  LEGACY_REPOSITORIES_MESSAGE,
  MISSING_REPOSITORIES_MESSAGE,
} from './domain/legacy-repositories.ts';
import { buildApp } from './app.ts';
import { bootstrapRoot } from './domain/bootstrap.ts';
import { repairStoredSettings } from './domain/settings.ts';
import { discardAbandonedUploads } from './storage/git/object-parts.ts';
import type { SeedResult } from './domain/seed.ts';
import { parseSeedText } from './domain/seed-text.ts';
import { Failure } from './domain/failure.ts';
import { ephemeralConfig } from './ephemeral.ts';
import { createLogger, lifecycleLogger } from './logging.ts';
import { checkServeEnvironment, openConfiguredDatabase, redactDatabaseUrl } from './startup-checks.ts';
import { createStore, type Store } from './storage/db/store.ts';
import { runPrimary } from './cluster.ts';
import { announceServing } from './workers.ts';

export interface OpenServer {
  app: FastifyInstance;
  /** Where it listens, e.g. http://127.0.0.1:8080. */
  address: string;
  /** The root token when root was created by this start (always in ephemeral mode), else null. */
  rootToken: string | null;
  /** What the start seed created (ephemeral mode with a seed), else null. */
  seeded: SeedResult | null;
}

export interface OpenOptions {
  logger: Logger;
  /** Where start-up lines go: by default `logger` at info whatever its level (lifecycleLogger). */
  lifecycle?: Logger;
  /** A seed document given as data, instead of config.seedFile. */
  seed?: unknown;
}

/** Checks the environment, builds the app, creates root on an empty database, applies the start seed
 * (ephemeral mode) and listens. */
export async function openServer(given: Config, options: OpenOptions): Promise<OpenServer> {
  const config = given.ephemeral ? ephemeralConfig(given) : given;
  const { logger, seed = null } = options;
  const lifecycle = options.lifecycle ?? lifecycleLogger(logger);
  let app: FastifyInstance | null = null;
  try {
    const gitChecked = checkServeEnvironment(config);
    // Not awaited when something else stops the start first: its failure must not be an unhandled rejection.
    gitChecked.catch(() => {});
    if (hasLegacyRepositories(config.dataDir)) throw new ConfigError(LEGACY_REPOSITORIES_MESSAGE);
    app = await buildApp(config, logger);
    await gitChecked;
    const rootToken = await prepareStore(app.store, config, lifecycle);
    let seeded: SeedResult | null = null;
    if (app.ephemeral) {
      const document = seed ?? (config.seedFile ? parseSeedFile(config.seedFile) : null);
      seeded = await app.ephemeral.start(document).catch((error) => {
        throw seedError(config.seedFile ?? 'the seed', error);
      });
    }
    const address = await app.listen({ host: config.host, port: config.port });
    return { app, address, rootToken, seeded };
  } catch (error) {
    await app?.close();
    // An ephemeral server that never opened leaves nothing behind (buildApp's close removes it otherwise).
    if (config.ephemeral && !app) fs.rmSync(config.dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** What a start does to the database before it serves: refuses one missing repositories, repairs stored
 * settings, creates root on an empty one (answering its token, then only). */
async function prepareStore(store: Store, config: Config, lifecycle: Logger): Promise<string | null> {
  if (await hasSnippetsWithoutRepository(store)) throw new ConfigError(MISSING_REPOSITORIES_MESSAGE);
  for (const line of await repairStoredSettings(store)) lifecycle.warn(line);
  // Only uploads of processes that are gone (pid and host): a worker starting beside others leaves theirs.
  const discarded = await discardAbandonedUploads(store.kysely);
  if (discarded) lifecycle.info(`removed the parts of ${discarded} large git object(s) whose write never committed`);
  const boot = await bootstrapRoot(store, config);
  if (boot.created && boot.tokenFile) {
    lifecycle.info(`created administrator "root"; its token is in ${boot.tokenFile}`);
  } else if (boot.created) {
    lifecycle.info('created administrator "root" with the given initial root token');
  }
  return boot.token;
}

/** The primary's preparation (cluster.ts): the checks and database work of a start, once for all workers. */
async function prepareOnce(config: Config, lifecycle: Logger): Promise<void> {
  const gitChecked = checkServeEnvironment(config);
  gitChecked.catch(() => {});
  if (hasLegacyRepositories(config.dataDir)) throw new ConfigError(LEGACY_REPOSITORIES_MESSAGE);
  const db = await openConfiguredDatabase(config);
  try {
    await gitChecked;
    await prepareStore(createStore(db), config, lifecycle);
  } finally {
    await db.close();
  }
}

function readSeedFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`the seed file ${file} (--seed) cannot be read: ${(error as Error).message}`);
  }
}

/** A seed file's document; one that is not YAML or JSON stops the start with one line, as other problems do. */
export function parseSeedFile(file: string): unknown {
  const text = readSeedFile(file);
  try {
    return parseSeedText(text);
  } catch (error) {
    throw seedError(file, error);
  }
}

/** A seed that cannot be applied stops the start with one line naming each problem by where it is. */
export function seedError(source: string, error: unknown): unknown {
  if (!(error instanceof Failure) || error.reason !== 'bad_request_fields') return error;
  const problems = Object.entries(error.fields).map(([where, messages]) => `${where} ${messages.join(', ')}`);
  return new ConfigError(`${source}: ${problems.join('; ')}`);
}

export async function startServer(config: Config): Promise<void> {
  // One format on stdout: these lines are log lines like every other (scripts/spawn-server.ts and tools
  // wait for "listening on <url> " in the one that says where the server is). Workers write to the same
  // stdout, each line with the worker's id.
  const base = createLogger(config.logLevel);
  const logger = cluster.isWorker ? base.child({ worker: cluster.worker!.id }) : base;
  const lifecycle = lifecycleLogger(logger);
  const database = config.ephemeral ? 'in memory (ephemeral)' : redactDatabaseUrl(config.databaseUrl);
  const listening = (address: string, workers: string) =>
    lifecycle.info(`listening on ${address} (API at ${address}/api/v4, database ${database}${workers})`);
  if (cluster.isPrimary && config.workers > 1) {
    await runPrimary(config, {
      lifecycle,
      prepare: () => prepareOnce(config, lifecycle),
      listening: (address) => listening(address, `, ${config.workers} workers`),
    });
    return;
  }
  const { app, address } = await openServer(config, { logger, lifecycle });
  let closing = false;
  /** `why`: what ended the server, as its log line says it ("SIGTERM received"). */
  const shutdown = (why: string) => {
    if (closing) return;
    closing = true;
    // A worker's stop is the primary's, which says so once.
    if (!cluster.isWorker) lifecycle.info(`${why}, closing`);
    app.close().then(
      () => process.exit(0),
      (error) => {
        lifecycle.error({ err: error }, 'closing failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM received'));
  process.once('SIGINT', () => shutdown('SIGINT received'));
  // Logged once the handlers are in place: whoever waits for this line may send SIGTERM at once.
  if (cluster.isWorker) announceServing(address);
  else listening(address, '');
}
