// Load script for project snippets. Measures (1) the write path: creating a 3-file snippet, one request
// at a time, reporting the median and p95 latency seen by the client (data fsynced before the answer);
// (2) the read path: get, list and raw of the current version under load with autocannon.
// Usage: npx tsx bench/snippets.ts [--creates 300] [--duration 10] [--connections 10] [--database-url URL]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startBenchServer } from '../scripts/spawn-server.ts';

const { values } = parseArgs({
  options: {
    creates: { type: 'string', default: '300' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    'database-url': { type: 'string' },
  },
});
const TOKEN = 'bench-root-token-0123456789abcdef';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-'));

const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

async function measureCreates(url: string, projectId: number, count: number) {
  const times: number[] = [];
  let snippetId = 0;
  for (let i = 0; i < count + 20; i++) {
    const body = JSON.stringify({
      title: `bench ${i}`,
      visibility: 'public',
      files: [
        { file_path: 'main.rb', content: `puts ${i}\n`.repeat(20) },
        { file_path: 'lib/helper.rb', content: `def helper_${i}; end\n`.repeat(30) },
        { file_path: 'README.md', content: `# Snippet ${i}\n\nSome text.\n`.repeat(10) },
      ],
    });
    const t0 = performance.now();
    const res = await fetch(`${url}/api/v4/projects/${projectId}/snippets`, { method: 'POST', headers, body });
    const json = (await res.json()) as { id: number };
    const elapsed = performance.now() - t0;
    if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(json)}`);
    snippetId = json.id;
    if (i >= 20) times.push(elapsed); // the first 20 warm the JIT up
  }
  times.sort((a, b) => a - b);
  return { median: percentile(times, 50), p95: percentile(times, 95), snippetId };
}

async function load(url: string, name: string, route: string) {
  const r = await autocannon({
    url: `${url}/api/v4${route}`,
    headers: { 'PRIVATE-TOKEN': TOKEN },
    connections: Number(values.connections),
    duration: Number(values.duration),
  });
  return `| ${name} | ${Math.round(r.requests.average)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx + r.errors} |`;
}

const server = await startBenchServer({ dataDir, token: TOKEN, databaseUrl: values['database-url'] });
try {
  const project = (await (
    await fetch(`${server.url}/api/v4/projects`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ path: 'bench', visibility: 'public' }),
    })
  ).json()) as { id: number };
  const creates = await measureCreates(server.url, project.id, Number(values.creates));
  const db = values['database-url'] ? 'PostgreSQL' : 'SQLite';
  console.log(
    `\n${db}: create a 3-file snippet, ${values.creates} sequential requests: median ${creates.median.toFixed(2)} ms, p95 ${creates.p95.toFixed(2)} ms\n`,
  );
  const s = `/projects/${project.id}/snippets/${creates.snippetId}`;
  console.log(
    `connections ${values.connections}, ${values.duration} s per route\n\n| route | req/s | p50 ms | p99 ms | non-2xx |\n|---|---|---|---|---|`,
  );
  console.log(await load(server.url, 'GET snippet', s));
  console.log(await load(server.url, 'GET snippets?per_page=20', `/projects/${project.id}/snippets?per_page=20`));
  console.log(await load(server.url, 'GET snippet raw', `${s}/raw`));
  console.log(await load(server.url, 'GET snippet file raw at main', `${s}/files/main/lib%2Fhelper.rb/raw`));
} finally {
  server.stop();
  setTimeout(() => fs.rmSync(dataDir, { recursive: true, force: true }), 500);
}
