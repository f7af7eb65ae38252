// Process entry for `snippetd serve`: build the app, bootstrap root on an empty database, listen, and
// close gracefully on SIGTERM/SIGINT (in-flight requests finish, the database is closed).
import type { FastifyInstance } from 'fastify';
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
import { createLogger, lifecycleLogger } from './logging.ts';
import { checkServeEnvironment } from './startup-checks.ts';

export async function startServer(config: Config): Promise<FastifyInstance> {
  checkServeEnvironment(config);
  if (hasLegacyRepositories(config.dataDir)) throw new ConfigError(LEGACY_REPOSITORIES_MESSAGE);
  // One format on stdout: these lines are log lines like every other (scripts/spawn-server.ts and tools
  // wait for "listening on <url> " in the one that says where the server is).
  const logger = createLogger(config.logLevel);
  const lifecycle = lifecycleLogger(logger);
  const app = await buildApp(config, logger);
  if (await hasSnippetsWithoutRepository(app.store)) {
    await app.close();
    throw new ConfigError(MISSING_REPOSITORIES_MESSAGE);
  }
  for (const line of await repairStoredSettings(app.store)) lifecycle.warn(line);
  const boot = await bootstrapRoot(app.store, config);
  if (boot.created && boot.tokenFile) {
    lifecycle.info(`created administrator "root"; its token is in ${boot.tokenFile}`);
  } else if (boot.created) {
    lifecycle.info('created administrator "root" with the token from SNIPPETD_INITIAL_ROOT_TOKEN');
  }
  const address = await app.listen({ host: config.host, port: config.port });
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    lifecycle.info(`${signal} received, closing`);
    app.close().then(
      () => process.exit(0),
      (error) => {
        lifecycle.error({ err: error }, 'closing failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  // Logged once the handlers are in place: whoever waits for this line may send SIGTERM at once.
  lifecycle.info(
    `listening on ${address} (API at ${address}/api/v4, database ${redactDatabaseUrl(config.databaseUrl)})`,
  );
  return app;
}

export function redactDatabaseUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');
}
