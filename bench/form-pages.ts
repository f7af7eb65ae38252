// Load script for the pages that take forms, signed in: the new snippet form and the edit form of a snippet
// with one 200-line Ruby file, against that snippet's own page (the issue asks the forms to be as fast as
// it), each against the bare Fastify route of bench/constant-server.ts answering the same bytes, in the
// same run. Each row gives requests a second and the CPU time the answering server spent per request.
// Usage: npx tsx bench/form-pages.ts [--duration 5] [--connections 10] [--database-url URL]
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
  },
});
const TOKEN = 'bench-root-token-0123456789abcdef';
const PASSWORD = 'bench password for forms';

async function api(url: string, route: string, body: unknown) {
  const res = await fetch(`${url}/api/v4${route}`, {
    method: 'POST',
    headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`${route}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
}

async function signIn(url: string): Promise<string> {
  const form = await fetch(`${url}/users/sign_in`);
  const token = /name="authenticity_token" value="([^"]+)"/.exec(await form.text())![1];
  const res = await fetch(`${url}/users/sign_in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: `_snippetd_sign_in=${token}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ authenticity_token: token, login: 'bench', password: PASSWORD }),
  });
  return res.headers
    .getSetCookie()
    .find((c) => c.startsWith('_snippetd_session='))!
    .split(';')[0];
}

async function rate(url: string, pid: number, headers: Record<string, string>) {
  const before = cpuMicros(pid);
  const r = await autocannon({
    url,
    headers,
    connections: Number(values.connections),
    duration: Number(values.duration),
  });
  if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  const cpu = Math.round((cpuMicros(pid) - before) / r.requests.total);
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, cpu };
}

const ruby = Array.from({ length: 200 }, (_, i) => `  def method_${i}(x) = x * ${i} # line ${i}`).join('\n');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-'));
const server = await startBenchServer({ dataDir, token: TOKEN, databaseUrl: values['database-url'] });
try {
  const user = await api(server.url, '/users', {
    username: 'bench',
    email: 'bench@example.com',
    name: 'Bench',
    password: PASSWORD,
  });
  const snippet = await api(server.url, '/snippets', {
    title: 'Code',
    visibility: 'private',
    files: [{ file_path: 'code.rb', content: `class Code\n${ruby}\nend\n` }],
    sudo: user.id,
  });
  const cookie = await signIn(server.url);
  const rows = [
    ['snippet page, one 200-line file', snippet.web_url],
    ['its edit form', `${snippet.web_url}/edit`],
    ['the new snippet form', `${server.url}/-/snippets/new`],
  ];
  const answers = [];
  for (const [, url] of rows) {
    const res = await fetch(url, { headers: { cookie } });
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    answers.push({ status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() });
  }
  const replayFile = path.join(dataDir, 'replay.json');
  fs.writeFileSync(replayFile, JSON.stringify(answers));
  const baseline = await spawnServer({ ...process.env, BENCH_REPLAY_FILE: replayFile }, ['bench/constant-server.ts']);
  try {
    console.log(
      `| page, signed in (${values['database-url'] ? 'PostgreSQL' : 'SQLite'}) | snippetd req/s | p50 / p99 ms | CPU µs/req | same answer from bare Fastify req/s | its CPU µs/req | snippetd % | bytes |`,
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const [i, [name, url]] of rows.entries()) {
      const ours = await rate(url, server.pid, { cookie });
      const bare = await rate(`${baseline.url}/replay/${i}`, baseline.child.pid!, {});
      const pct = Math.round((100 * ours.rps) / bare.rps);
      console.log(
        `| ${name} | ${ours.rps} | ${ours.p50} / ${ours.p99} | ${ours.cpu} | ${bare.rps} | ${bare.cpu} | ${pct} % | ${answers[i].body.length} |`,
      );
    }
  } finally {
    baseline.child.kill('SIGTERM');
  }
} finally {
  server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
