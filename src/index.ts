// The package's entry (`import … from 'snippetd'`): startSnippetd for test suites (docs/tool-authors.md), and
// the Fastify app with its configuration for running snippetd inside another process. The command line
// is bin/snippetd.
export { startSnippetd, type RunningSnippetd, type SnippetdOptions } from './api.ts';
export type { SeedDocument, SeedResult } from './domain/seed.ts';
export { buildApp } from './app.ts';
export { ConfigError, defaults, loadConfig, type Config, type LogLevel } from './config.ts';
export { SNIPPETD_VERSION } from './version.ts';
