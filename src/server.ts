// Process entry for `snippetd serve`: build the app, bootstrap root on an empty database, listen, and
// close gracefully on SIGTERM/SIGINT (in-flight requests finish, the database is closed).
import type { FastifyInstance } from 'fastify';
import { type Config, ConfigError } from './config.ts';
import { hasLegacyRepositories, LEGACY_REPOSITORIES_MESSAGE } from './domain/legacy-repositories.ts';
import { buildApp } from './app.ts';
import { bootstrapRoot } from './domain/bootstrap.ts';
import { repairStoredSettings } from './domain/settings.ts';
import { checkServeEnvironment } from './startup-checks.ts';

export async function startServer(config: Config): Promise<FastifyInstance> {
  checkServeEnvironment(config);
  if (hasLegacyRepositories(config.dataDir)) throw new ConfigError(LEGACY_REPOSITORIES_MESSAGE);
  const app = await buildApp(config);
  for (const line of await repairStoredSettings(app.store)) {
    app.log.warn(line);
    console.log(`snippetd: ${line}`);
  }
  const boot = await bootstrapRoot(app.store, config);
  if (boot.created && boot.tokenFile) {
    app.log.info(`created administrator "root"; its token is in ${boot.tokenFile}`);
    console.log(`snippetd: created administrator "root"; its token is in ${boot.tokenFile}`);
  } else if (boot.created) {
    console.log('snippetd: created administrator "root" with the token from SNIPPETD_INITIAL_ROOT_TOKEN');
  }
  const address = await app.listen({ host: config.host, port: config.port });
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    console.log(`snippetd: ${signal} received, closing`);
    app.close().then(
      () => process.exit(0),
      (error) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  // Printed once the handlers are in place: whoever waits for this line may send SIGTERM at once.
  console.log(
    `snippetd: listening on ${address} (API at ${address}/api/v4, database ${redactDatabaseUrl(config.databaseUrl)})`,
  );
  return app;
}

export function redactDatabaseUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');
}
