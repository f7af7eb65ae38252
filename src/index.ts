// The package's entry (`import … from 'snippetd'`): the Fastify app and its configuration, for running
// snippetd inside another process. The command line is bin/snippetd.
export { buildApp } from './app.ts';
export { ConfigError, defaults, loadConfig, type Config, type LogLevel } from './config.ts';
export { SNIPPETD_VERSION } from './version.ts';
