// The programmatic API for test suites (docs/tool-authors.md): `startSnippetd()` runs an ephemeral server in
// this process and hands back its URLs, the root token and the controls of ephemeral mode.
import { type Config, ConfigError, defaults, initialToken, type LogLevel } from './config.ts';
import { createLogger } from './logging.ts';
import { openServer, parseSeedFile, seedError } from './server.ts';
import type { SeedDocument, SeedResult } from './domain/seed.ts';

export interface SnippetdOptions {
  /** Applied before the port opens, as `serve --seed`: a seed document, or the path of a YAML or JSON file. */
  seed?: SeedDocument | string;
  /** The root token's value (20 characters or more); generated when not given. */
  rootToken?: string;
  /** 0 (the default) takes a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Base of the URLs the server hands out (web_url, raw_url); by default each request's Host. */
  externalUrl?: string;
  /** Default 'silent': a test suite's output stays its own. */
  logLevel?: LogLevel;
}

export interface RunningSnippetd {
  /** e.g. http://127.0.0.1:41234 — what a GitLab client takes as its host. */
  url: string;
  /** `${url}/api/v4`. */
  apiUrl: string;
  /** The administrator root's token (api and sudo scopes). */
  rootToken: string;
  /** What the start seed created, by name; null without one. */
  seeded: SeedResult | null;
  /** Adds a seed document (all of it, or nothing of it on a problem); answers the ids of what it created. */
  seed(fixture: SeedDocument): Promise<SeedResult>;
  /** Back to the state right after start (root and the start seed); the root token keeps working. */
  reset(): Promise<void>;
  /** Stops the server and removes everything it kept. */
  close(): Promise<void>;
}

/** Starts an ephemeral snippetd (in-memory database) in this process. */
export async function startSnippetd(options: SnippetdOptions = {}): Promise<RunningSnippetd> {
  const config: Config = {
    ...defaults(),
    ephemeral: true,
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    externalUrl: options.externalUrl?.replace(/\/+$/, '') ?? null,
    // Held to the command line's rule: '' or a short token made a root no request could sign in as.
    initialRootToken: options.rootToken === undefined ? null : initialToken(options.rootToken, 'rootToken'),
    logLevel: options.logLevel ?? 'silent',
  };
  const seed = typeof options.seed === 'string' ? parseSeedFile(options.seed) : (options.seed ?? null);
  const logger = createLogger(config.logLevel);
  const { app, address, rootToken, seeded } = await openServer(config, { logger, lifecycle: logger, seed });
  const controls = app.ephemeral!;
  return {
    url: address,
    apiUrl: `${address}/api/v4`,
    rootToken: rootToken!,
    seeded,
    // Refused as a start seed is: one message naming each problem where it is, not the failure's bare reason.
    seed: (fixture) =>
      controls.seed(fixture).catch((error) => {
        const refused = seedError('the seed document', error);
        // An Error of the plain kind: a ConfigError is the command line's, for a server that does not start.
        throw refused instanceof ConfigError ? new Error(refused.message) : refused;
      }),
    reset: () => controls.reset(),
    close: () => app.close(),
  };
}
