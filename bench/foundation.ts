// Load script for the foundation's hot paths: token authentication, project lookup by id and by path,
// and a paginated list. Starts `snippetd serve` as its own process (so the load generator does not share
// its event loop), seeds data through the API, runs autocannon against each route and prints a Markdown
// table. Usage: npx tsx bench/foundation.ts [--duration 10] [--connections 10] [--database-url URL]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startBenchServer } from '../scripts/spawn-server.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    'database-url': { type: 'string' },
  },
});
const TOKEN = 'bench-root-token-0123456789abcdef';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-'));

async function api(url: string, method: string, route: string, body?: unknown) {
  const res = await fetch(`${url}/api/v4${route}`, {
    method,
    headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
}

async function measure(url: string, name: string, route: string, headers: Record<string, string>) {
  const result = await autocannon({
    url: `${url}/api/v4${route}`,
    headers,
    connections: Number(values.connections),
    duration: Number(values.duration),
  });
  const non2xx = result.non2xx + result.errors;
  return `| ${name} | ${Math.round(result.requests.average)} | ${result.latency.p50} | ${result.latency.p99} | ${non2xx} |`;
}

const server = await startBenchServer({ dataDir, token: TOKEN, databaseUrl: values['database-url'] });
try {
  const group = await api(server.url, 'POST', '/groups', { name: 'Bench', path: 'bench', visibility: 'public' });
  let project: any;
  for (let i = 0; i < 50; i++) {
    project = await api(server.url, 'POST', '/projects', {
      path: `p${i}`,
      namespace_id: group.id,
      visibility: 'public',
    });
  }
  const auth = { 'PRIVATE-TOKEN': TOKEN };
  const rows = [
    await measure(server.url, 'GET /user (token)', '/user', auth),
    await measure(server.url, 'GET /projects/:id (anonymous)', `/projects/${project.id}`, {}),
    await measure(
      server.url,
      'GET /projects/:path (token)',
      `/projects/${encodeURIComponent(project.path_with_namespace)}`,
      auth,
    ),
    await measure(server.url, 'GET /projects?per_page=20 (token)', '/projects?per_page=20', auth),
  ];
  console.log(
    `\nconnections ${values.connections}, ${values.duration} s per route, database ${values['database-url'] ?? 'SQLite'}\n`,
  );
  console.log('| route | req/s | p50 ms | p99 ms | non-2xx |\n|---|---|---|---|---|');
  console.log(rows.join('\n'));
} finally {
  server.stop();
  setTimeout(() => fs.rmSync(dataDir, { recursive: true, force: true }), 500);
}
