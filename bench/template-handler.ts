// In-process cost of a single built-in template request's own work, without HTTP: the parameter and
// name checks, which every request runs, and the project, permission and template lookups through the
// read cache (warm), which a kept answer (http/kept-answers.ts) stands for: they run when its answer is
// not kept yet (a caller's first request for a URL, or the first after the database changed).
// Usage: npx tsx bench/template-handler.ts
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyRequest } from 'fastify';
import { buildApp } from '../src/app.ts';
import { defaults } from '../src/config.ts';
import { bootstrapRoot } from '../src/domain/bootstrap.ts';
import { findReadableProject } from '../src/domain/projects.ts';
import { can } from '../src/domain/policy.ts';
import { findTemplate } from '../src/domain/templates/finder.ts';
import { TEMPLATE_TYPES } from '../src/domain/templates/types.ts';
import { validateRequest, type ParamSpec } from '../src/http/params.ts';
import { parseRackQuery } from '../src/http/rack-params.ts';
import { rawLastSegment, TEMPLATE_NAME, templateName } from '../src/http/routes/project-templates.ts';

const TOKEN = 'bench-root-token-0123456789abcdef';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-'));
const config = {
  ...defaults(dataDir),
  databaseUrl: `sqlite:${path.join(dataDir, 'db.sqlite3')}`,
  logLevel: 'silent' as const,
  initialRootToken: TOKEN,
};
const app = await buildApp(config);
await bootstrapRoot(app.store, config);
await app.inject({
  method: 'POST',
  url: '/api/v4/projects',
  headers: { 'private-token': TOKEN },
  payload: { path: 'bench', visibility: 'public' },
});
// One real request, so the read cache has observed the epoch and holds the lookups.
await app.inject({ method: 'GET', url: '/api/v4/projects/root%2Fbench/templates/dockerfiles/Node' });

const singleSpec: ParamSpec = {
  type: { type: 'string', required: true, values: TEMPLATE_TYPES },
  source_template_project_id: { type: 'integer' },
  project: { type: 'string' },
  fullname: { type: 'string' },
};
const request = {
  params: { id: 'root/bench', type: 'dockerfiles', name: 'Node' },
  body: undefined,
  query: parseRackQuery(''),
  url: '/api/v4/projects/root%2Fbench/templates/dockerfiles/Node',
} as unknown as FastifyRequest;

async function lookups() {
  const ctx = await findReadableProject(app.readStore, null, 'root/bench');
  if (!can(null, 'download_code', ctx)) throw new Error('not readable');
  return findTemplate(app.readStore, null, ctx, 'dockerfiles', 'Node');
}
function checks() {
  if (!TEMPLATE_NAME.test(rawLastSegment(request))) throw new Error('name');
  validateRequest(singleSpec, request);
  return templateName(request);
}

async function nsPerAsyncCall(run: () => Promise<unknown>, n: number): Promise<number> {
  const start = process.hrtime.bigint();
  // Ten at a time, as ten connections would have them in flight.
  for (let i = 0; i < n; i += 10) await Promise.all(Array.from({ length: 10 }, run));
  return Number(process.hrtime.bigint() - start) / n;
}
function nsPerCall(run: () => unknown, n: number): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) run();
  return Number(process.hrtime.bigint() - start) / n;
}

await nsPerAsyncCall(lookups, 200_000);
nsPerCall(checks, 200_000);
console.log(
  `lookups (project, permission, template) through the warm read cache: ${(await nsPerAsyncCall(lookups, 500_000)).toFixed(0)} ns per request`,
);
console.log(`parameter and name checks: ${nsPerCall(checks, 1_000_000).toFixed(0)} ns per request`);
await app.close();
fs.rmSync(dataDir, { recursive: true, force: true });
