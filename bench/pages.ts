// Load script for the pages: a snippet page with one 200-line Ruby file (highlighted once, then kept by
// blob id), a project's snippet list of 20, and a raw file at its web path against the same file through
// the API's raw endpoint, all anonymous on a public project, each against the bare Fastify route of
// bench/constant-server.ts answering the same bytes, in the same run. Besides requests a second, each row
// gives the CPU time the answering server process spent per request (Linux /proc), which another program
// busy on the same machine changes far less than it changes requests a second.
// The two raws are then measured again in alternated rounds (web, API, web, ...), so load from elsewhere on
// the machine falls on both alike; the web face issue asks for the first within 10 % of the second.
// Usage: npx tsx bench/pages.ts [--duration 5] [--connections 10] [--raw-rounds 6] [--database-url URL]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { spawnServer, startBenchServer } from '../scripts/spawn-server.ts';
import { cpuMicros } from './process-cpu.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    'database-url': { type: 'string' },
    'raw-rounds': { type: 'string', default: '6' },
  },
});
const TOKEN = 'bench-root-token-0123456789abcdef';
const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };

async function api(url: string, route: string, body: unknown) {
  const res = await fetch(`${url}/api/v4${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`${route}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
}

async function rate(url: string, pid: number) {
  const before = cpuMicros(pid);
  const r = await autocannon({ url, connections: Number(values.connections), duration: Number(values.duration) });
  if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  const cpu = Math.round((cpuMicros(pid) - before) / r.requests.total);
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, cpu };
}

const ruby = Array.from({ length: 200 }, (_, i) => `  def method_${i}(x) = x * ${i} # line ${i}`).join('\n');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-'));
const server = await startBenchServer({
  dataDir,
  token: TOKEN,
  databaseUrl: values['database-url'],
});
try {
  const project = await api(server.url, '/projects', { path: 'pages', visibility: 'public' });
  let snippet: any;
  for (let i = 0; i < 20; i++) {
    snippet = await api(server.url, `/projects/${project.id}/snippets`, {
      title: `Snippet ${i}`,
      visibility: 'public',
      files: [{ file_path: 'code.rb', content: `class Code${i}\n${ruby}\nend\n` }],
    });
  }
  const rows = [
    ['snippet page, one 200-line file', snippet.web_url],
    ['project snippet list of 20', `${project.web_url}/-/snippets`],
    ['raw at the web path', snippet.files[0].raw_url],
    ['raw through the API', `${server.url}/api/v4/projects/${project.id}/snippets/${snippet.id}/raw`],
  ];
  // The same answers (status, headers, bytes), served by bare Fastify: what sending them costs alone.
  const answers = [];
  for (const [, url] of rows) {
    const res = await fetch(url); // also renders the page once, so it is measured as kept
    answers.push({ status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() });
  }
  const replayFile = path.join(dataDir, 'replay.json');
  fs.writeFileSync(replayFile, JSON.stringify(answers));
  const baseline = await spawnServer({ ...process.env, BENCH_REPLAY_FILE: replayFile }, ['bench/constant-server.ts']);
  try {
    console.log(
      `| page (${values['database-url'] ? 'PostgreSQL' : 'SQLite'}) | snippetd req/s | p50 / p99 ms | CPU µs/req | same answer from bare Fastify req/s | its CPU µs/req | snippetd % | bytes |`,
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const [i, [name, url]] of rows.entries()) {
      const ours = await rate(url, server.pid);
      const bare = await rate(`${baseline.url}/replay/${i}`, baseline.child.pid!);
      const pct = Math.round((100 * ours.rps) / bare.rps);
      console.log(
        `| ${name} | ${ours.rps} | ${ours.p50} / ${ours.p99} | ${ours.cpu} | ${bare.rps} | ${bare.cpu} | ${pct} % | ${answers[i].body.length} |`,
      );
    }
  } finally {
    baseline.child.kill('SIGTERM');
  }
  const rounds: { web: number; api: number; webCpu: number; apiCpu: number }[] = [];
  for (let round = 0; round < Number(values['raw-rounds']); round++) {
    const web = await rate(rows[2][1], server.pid);
    const api = await rate(rows[3][1], server.pid);
    rounds.push({ web: web.rps, api: api.rps, webCpu: web.cpu, apiCpu: api.cpu });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ratios = rounds.map((r) => r.web / r.api);
  console.log(`
Raw at the web path against raw through the API, ${rounds.length} alternated rounds:
- web req/s: ${rounds.map((r) => r.web).join(', ')} (CPU µs/req ${rounds.map((r) => r.webCpu).join(', ')})
- API req/s: ${rounds.map((r) => r.api).join(', ')} (CPU µs/req ${rounds.map((r) => r.apiCpu).join(', ')})
- web ÷ API per round: ${ratios.map((x) => `${Math.round(100 * x)} %`).join(', ')}; median ${Math.round(100 * median(ratios))} %`);
} finally {
  server.stop();
}
