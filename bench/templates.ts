// Load script for built-in templates: list and single requests against a bare Fastify route returning a
// constant JSON object, measured in the same run (issue 5's target: templates at >= 80 % of the baseline's
// requests per second). Both servers run as their own processes, one at a time, with the same load.
// Usage: npx tsx bench/templates.ts [--duration 10] [--connections 10] [--database-url URL]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { spawnServer } from '../scripts/spawn-server.ts';

const { values } = parseArgs({
  options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '10' }, 'database-url': { type: 'string' } },
});
const TOKEN = 'bench-root-token-0123456789abcdef';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-'));

const start = (args: string[], env: NodeJS.ProcessEnv = {}) => spawnServer({ ...process.env, ...env }, args);

async function rps(url: string) {
  const r = await autocannon({ url, connections: Number(values.connections), duration: Number(values.duration) });
  if (r.errors || (r.non2xx && !url.includes('/api/v3/'))) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99 };
}

const baseline = await start(['bench/constant-server.ts']);
const constant = await rps(`${baseline.url}/constant`);
baseline.child.kill('SIGTERM');

const server = await start(['src/cli.ts', 'serve', '--port', '0'], {
  SNIPPETD_DATA_DIR: dataDir,
  SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
  SNIPPETD_LOG_LEVEL: 'warn',
  ...(values['database-url'] ? { SNIPPETD_DATABASE_URL: values['database-url'] } : {}),
});
try {
  await fetch(`${server.url}/api/v4/projects`, {
    method: 'POST',
    headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ path: 'bench', visibility: 'public' }),
  });
  const base = `${server.url}/api/v4/projects/root%2Fbench/templates`;
  const routes: [string, string][] = [
    // The ceiling for any snippetd route: our hooks and Fastify, no database and no work (410 for v3).
    ['snippetd route doing nothing (GET /api/v3/x, 410)', `${server.url}/api/v3/x`],
    ['GET licenses list (page 1)', `${base}/licenses`],
    ['GET license mit (placeholders filled)', `${base}/licenses/mit?fullname=Jane&project=P`],
    ['GET gitignores list (page 1)', `${base}/gitignores`],
    ['GET gitignore Ruby', `${base}/gitignores/Ruby`],
    ['GET dockerfile Node', `${base}/dockerfiles/Node`],
    ['GET deprecated /templates/licenses/mit', `${server.url}/api/v4/templates/licenses/mit`],
  ];
  console.log(`\nconnections ${values.connections}, ${values.duration} s per route, database ${values['database-url'] ? 'PostgreSQL' : 'SQLite'}, anonymous caller on a public project\n`);
  console.log('| route | req/s | % of constant | p50 ms | p99 ms |\n|---|---|---|---|---|');
  console.log(`| bare Fastify constant JSON (baseline) | ${constant.rps} | 100 % | ${constant.p50} | ${constant.p99} |`);
  for (const [name, url] of routes) {
    const r = await rps(url);
    console.log(`| ${name} | ${r.rps} | ${Math.round((r.rps / constant.rps) * 100)} % | ${r.p50} | ${r.p99} |`);
  }
} finally {
  server.child.kill('SIGTERM');
  setTimeout(() => fs.rmSync(dataDir, { recursive: true, force: true }), 500);
}
