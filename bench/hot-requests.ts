// Issue 31's "less work per request": one worker of the compiled CLI against bare Fastify
// (bench/constant-server.ts) in the same run, for GET a snippet (token), a list of 20, raw, a file's raw,
// the same GET and raw of a project snippet (issue 29: a personal snippet's as fast as a project snippet's)
// and a template. Given two trees (each built: `node scripts/build.mjs` there), it alternates before and
// after with bare Fastify round by round. Servers run on CPU 1 and autocannon on CPU 0. Besides req/s it
// reports each server's CPU per request (/proc), which other work on a shared machine moves far less; the
// "CPU ratio" is bare Fastify's CPU per request over snippetd's, what req/s would give on an idle core.
// With --unkept, each of snippetd's requests asks a URL of its own (bench/unkept.ts), so that no kept answer
// (src/http/kept-answers.ts) applies: the lookups, the policy and presenting are measured too.
// With --log-level info, the servers log as by default (one line a request), where the bench's usual warn
// keeps them quiet.
// Usage: npx tsx bench/hot-requests.ts [<before tree>] <after tree> [--rounds 5] [--duration 2] [--only GET]
//   [--unkept] [--log-level warn]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { spawnServer, type Spawned, withoutRateLimits } from '../scripts/spawn-server.ts';
import { cpuMicros } from './process-cpu.ts';
import { unkept } from './unkept.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' },
    only: { type: 'string' },
    unkept: { type: 'boolean', default: false },
    'log-level': { type: 'string', default: 'warn' },
  },
});
if (positionals.length < 1 || positionals.length > 2) throw new Error('usage: bench/hot-requests.ts [before] <after>');
const TOKEN = 'bench-root-token-0123456789abcdef';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-hot-'));
spawnSync('taskset', ['-pc', '0', String(process.pid)]);
const SERVER_CPU = 1;

async function snippetd(tree: string, name: string) {
  const env = {
    ...process.env,
    SNIPPETD_DATA_DIR: path.join(tmp, name),
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: values['log-level'],
  };
  const server = await spawnServer(env, [path.resolve(tree, 'dist/cli.js'), 'serve', '--port', '0'], SERVER_CPU);
  await withoutRateLimits(server.url, TOKEN);
  const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };
  let id = 0;
  for (let i = 0; i < 25; i++) {
    const res = await fetch(`${server.url}/api/v4/snippets`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        title: `bench ${i}`,
        description: 'a snippet',
        visibility: 'private',
        files: [{ file_path: 'a.rb', content: 'puts 1\n'.repeat(20) }],
      }),
    });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
    id = ((await res.json()) as { id: number }).id;
  }
  // The same snippet in a project, for a personal snippet's GET and raw against a project snippet's.
  const post = async (url: string, body: object) => {
    const res = await fetch(`${server.url}${url}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: number }).id;
  };
  const projectId = await post('/api/v4/projects', { name: 'bench', visibility: 'private' });
  const projectSnippetId = await post(`/api/v4/projects/${projectId}/snippets`, {
    title: 'bench',
    description: 'a snippet',
    visibility: 'private',
    files: [{ file_path: 'a.rb', content: 'puts 1\n'.repeat(20) }],
  });
  return { server, id, projectId, projectSnippetId };
}

const trees = positionals.map((tree, i) => [positionals.length === 1 ? 'snippetd' : ['before', 'after'][i], tree]);
const fastify = await spawnServer(process.env, [path.join(import.meta.dirname, 'constant-server.ts')], SERVER_CPU);
const servers = await Promise.all(trees.map(async ([name, tree]) => ({ name, ...(await snippetd(tree, name)) })));
type Ids = { id: number; projectId: number; projectSnippetId: number };
const routes: [string, (ids: Ids) => string][] = [
  ['GET /snippets/:id (token)', ({ id }) => `/api/v4/snippets/${id}`],
  ['GET /snippets?per_page=20 (token)', () => '/api/v4/snippets?per_page=20'],
  ['GET /snippets/:id/raw (token)', ({ id }) => `/api/v4/snippets/${id}/raw`],
  ['GET /snippets/:id/files/main/a.rb/raw (token)', ({ id }) => `/api/v4/snippets/${id}/files/main/a.rb/raw`],
  [
    'GET /projects/:id/snippets/:id (token)',
    ({ projectId, projectSnippetId }) => `/api/v4/projects/${projectId}/snippets/${projectSnippetId}`,
  ],
  [
    'GET /projects/:id/snippets/:id/raw (token)',
    ({ projectId, projectSnippetId }) => `/api/v4/projects/${projectId}/snippets/${projectSnippetId}/raw`,
  ],
  ['GET /templates/licenses/mit', () => '/api/v4/templates/licenses/mit'],
];

async function measure(child: Spawned, url: string, headers: Record<string, string>, duration: number) {
  const before = cpuMicros(child.child.pid!);
  const varied = values.unkept && child !== fastify;
  const requests: autocannon.Request[] | undefined = varied
    ? [{ setupRequest: (req) => ({ ...req, path: unkept(req.path ?? '/') }) }]
    : undefined;
  const r = await autocannon({ url, headers, connections: Number(values.connections), duration, requests });
  const cpu = (cpuMicros(child.child.pid!) - before) / r.requests.total;
  if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, cpu };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

console.log(
  `load average at start: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
const names = ['bare Fastify', ...servers.map((s) => s.name)];
console.log(
  `| route | ${names.map((n) => `${n} req/s`).join(' | ')} | ${names.map((n) => `${n} CPU µs/req`).join(' | ')} | ${servers.map((s) => `${s.name} ÷ bare (req/s) | ${s.name} CPU ratio`).join(' | ')} |`,
);
console.log(`|---|${names.map(() => '---|---|').join('')}${servers.map(() => '---|---|').join('')}`);
for (const [name, route] of routes) {
  if (values.only && !name.includes(values.only)) continue;
  const targets = [
    { url: `${fastify.url}/constant`, headers: {}, child: fastify },
    ...servers.map((s) => ({
      url: `${s.server.url}${route(s)}`,
      headers: { 'PRIVATE-TOKEN': TOKEN },
      child: s.server,
    })),
  ];
  for (const t of targets) await measure(t.child, t.url, t.headers, 1); // warm-up
  const rps: number[][] = targets.map(() => []);
  const cpu: number[][] = targets.map(() => []);
  for (let round = 0; round < Number(values.rounds); round++) {
    // Alternate the order so neither tree is always measured right after the other.
    const order = round % 2 ? [0, ...targets.slice(1).map((_, i) => targets.length - 1 - i)] : targets.map((_, i) => i);
    for (const i of order) {
      const m = await measure(targets[i].child, targets[i].url, targets[i].headers, Number(values.duration));
      rps[i].push(m.rps);
      cpu[i].push(m.cpu);
    }
  }
  const ratios = servers.map((_, s) => {
    const byRound = rps[s + 1].map((r, k) => r / rps[0][k]);
    return `${median(byRound).toFixed(2)} | ${(median(cpu[0]) / median(cpu[s + 1])).toFixed(2)}`;
  });
  console.log(
    `| ${name} | ${rps.map((r) => Math.round(median(r))).join(' | ')} | ${cpu.map((c) => median(c).toFixed(1)).join(' | ')} | ${ratios.join(' | ')} |`,
  );
}
console.log(
  `load average at end: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
for (const s of servers) s.server.child.kill('SIGTERM');
fastify.child.kill('SIGTERM');
await new Promise((resolve) => setTimeout(resolve, 1000));
fs.rmSync(tmp, { recursive: true, force: true });
