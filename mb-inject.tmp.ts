import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { buildApp } from './src/app.ts';
import { defaults } from './src/config.ts';
import { bootstrapRoot } from './src/domain/bootstrap.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-'));
const config = { ...defaults(dataDir), databaseUrl: `sqlite:${path.join(dataDir, 'db.sqlite3')}`, logLevel: 'warn', initialRootToken: 'bench-root-token-0123456789abcdef' } as any;
const app = await buildApp(config);
await bootstrapRoot(app.store, config);
const created = await app.inject({ method: 'POST', url: '/api/v4/projects', headers: { 'private-token': 'bench-root-token-0123456789abcdef' }, payload: { path: 'bench', visibility: 'public' } });
if (created.statusCode !== 201) throw new Error(created.body);
const bare = Fastify({ logger: false });
bare.get('/constant', async () => ({ key: 'mit', name: 'MIT License' }));
await bare.ready();

const routes: [string, any, string][] = [
  ['bare constant', bare, '/constant'],
  ['v3 do-nothing', app, '/api/v3/x'],
  ['mit', app, '/api/v4/projects/root%2Fbench/templates/licenses/mit?fullname=Jane&project=P'],
  ['dockerfile Node', app, '/api/v4/projects/root%2Fbench/templates/dockerfiles/Node'],
  ['dockerfile Node by id', app, '/api/v4/projects/1/templates/dockerfiles/Node'],
  ['licenses list', app, '/api/v4/projects/root%2Fbench/templates/licenses'],
  ['deprecated mit', app, '/api/v4/templates/licenses/mit'],
];
async function run(server: any, url: string, n: number) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i += 10) await Promise.all(Array.from({ length: 10 }, () => server.inject({ method: 'GET', url })));
  return Number(process.hrtime.bigint() - t) / n / 1000;
}
for (const [, s, u] of routes) await run(s, u, 5000);
for (let round = 0; round < 3; round++) {
  const out: string[] = [];
  for (const [name, s, u] of routes) out.push(`${name} ${(await run(s, u, 20000)).toFixed(1)}`);
  console.log(out.join(' | '));
}
await app.close();
