// Paging through a project's large recursive tree (GET /projects/:id/repository/tree?recursive=true): a pushed
// tree of 9,900 folders four deep, 49,500 entries. The first page walks the whole tree; the pages after it, as a
// client listing everything asks them (python-gitlab's `all=True`), are measured one at a time (wall time and
// the server's CPU a page), then one page under autocannon against bare Fastify sending the same answer.
// Usage: npx tsx bench/tree-pages.ts [--folders 9900] [--pages 20] [--per-page 100] [--duration 3] [--database-url URL]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { spawnServer, startBenchServer } from '../scripts/spawn-server.ts';
import { cpuMicros } from './process-cpu.ts';

const { values } = parseArgs({
  options: {
    folders: { type: 'string', default: '9900' },
    pages: { type: 'string', default: '20' },
    'per-page': { type: 'string', default: '100' },
    duration: { type: 'string', default: '3' },
    'database-url': { type: 'string' },
  },
});
const TOKEN = 'bench-root-token-0123456789abcdef';
const folders = Number(values.folders);
const perPage = Number(values['per-page']);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-tree-'));
// On PostgreSQL, a schema of its own, dropped at the end.
const schema = `bench_tree_${process.pid}`;
const admin = values['database-url'] ? new pg.Client({ connectionString: values['database-url'] }) : null;
await admin?.connect();
await admin?.query(`CREATE SCHEMA ${schema}`);
const databaseUrl = values['database-url'] && `${values['database-url']}?options=-c%20search_path%3D${schema}`;
const server = await startBenchServer({ dataDir, token: TOKEN, databaseUrl });
const ms = (n: number) => n.toFixed(1);

try {
  const res = await fetch(`${server.url}/api/v4/projects`, {
    method: 'POST',
    headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ path: 'deep', visibility: 'public' }),
  });
  if (res.status !== 201) throw new Error(`creating the project answered ${res.status}`);
  const repo = path.join(dataDir, 'deep');
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  const lines = ['commit refs/heads/main', 'committer T <t@example.com> 1700000000 +0000', 'data 4', 'deep'];
  for (let i = 0; i < folders; i++) lines.push(`M 100644 inline d${i}/a/b/c/f${i}`, 'data 0', '');
  execFileSync('git', ['fast-import', '--quiet'], { cwd: repo, input: `${lines.join('\n')}\n` });
  const remote = new URL(`${server.url}/root/deep.git`);
  remote.username = 'root';
  remote.password = TOKEN;
  execFileSync('git', ['push', '-q', remote.href, 'main'], { cwd: repo });

  const pageUrl = (page: number) =>
    `${server.url}/api/v4/projects/root%2Fdeep/repository/tree?recursive=true&per_page=${perPage}&page=${page}`;
  const timed = async (url: string) => {
    const cpu = cpuMicros(server.pid);
    const started = performance.now();
    const answer = await fetch(url);
    const body = await answer.text();
    if (answer.status !== 200) throw new Error(`${url}: ${answer.status} ${body}`);
    return {
      wall: performance.now() - started,
      cpu: (cpuMicros(server.pid) - cpu) / 1000,
      headers: Object.fromEntries(answer.headers),
      body,
    };
  };
  const first = await timed(pageUrl(1));
  // Over 10,000 entries the answer has no X-Total (as GitLab's lists): 5 entries a folder (d, a, b, c, f).
  const entries = folders * 5;
  console.log(
    `${values['database-url'] ? 'PostgreSQL' : 'SQLite'}, ${entries} entries, ${perPage} a page: the first page ${ms(first.wall)} ms, ${ms(first.cpu)} ms of CPU`,
  );
  const walls: number[] = [];
  const cpus: number[] = [];
  const pages = Number(values.pages);
  const last = Math.ceil(entries / perPage);
  for (let i = 1; i <= pages; i++) {
    const page = 1 + Math.round((i * (last - 1)) / pages);
    const t = await timed(pageUrl(page));
    walls.push(t.wall);
    cpus.push(t.cpu);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`${pages} more pages, one at a time: ${ms(mean(walls))} ms a page, ${ms(mean(cpus))} ms of CPU a page`);

  // One page under load, and the same answer from bare Fastify.
  const sample = await timed(pageUrl(2));
  const replayFile = path.join(dataDir, 'replay.json');
  fs.writeFileSync(replayFile, JSON.stringify([{ status: 200, headers: sample.headers, body: sample.body }]));
  const baseline = await spawnServer({ ...process.env, BENCH_REPLAY_FILE: replayFile }, ['bench/constant-server.ts']);
  try {
    const rate = async (url: string, pid: number) => {
      const cpu = cpuMicros(pid);
      const r = await autocannon({ url, connections: 4, duration: Number(values.duration) });
      return { rps: Math.round(r.requests.average), cpu: Math.round((cpuMicros(pid) - cpu) / r.requests.total) };
    };
    const ours = await rate(pageUrl(2), server.pid);
    const bare = await rate(`${baseline.url}/replay/0`, baseline.child.pid!);
    console.log(
      `page 2 under load (4 connections, ${values.duration} s): snippetd ${ours.rps} req/s, ${ours.cpu} µs of CPU a request; bare Fastify, the same answer: ${bare.rps} req/s, ${bare.cpu} µs`,
    );
  } finally {
    baseline.child.kill('SIGTERM');
  }
} finally {
  server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  await new Promise((resolve) => setTimeout(resolve, 1000)); // its connections close
  await admin?.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin?.end();
}
