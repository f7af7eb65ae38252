// Ephemeral mode for test suites (issue 16): how long from starting the process to its first 200, with a
// 50-entity seed, against a bare Fastify route started the same way in the same run; the RSS right after;
// and how long reset() and POST /-/snippetd/reset take after a test changed something.
//
//   npm run build && npx tsx bench/ephemeral.ts [--runs 10] [--installed DIR]
//
// snippetd runs compiled (node dist/cli.js), as installed. --installed DIR also times `npx snippetd serve`
// in DIR, where the packed tarball is installed (npm pack; cd DIR && npm install <tarball>), and the same
// server started by the installed bin without npx.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startSnippetd } from '../src/api.ts';
import type { SeedDocument } from '../src/domain/seed.ts';
import { childrenOf } from './process-cpu.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '10' }, installed: { type: 'string' } } });
const runs = Number(values.runs);
const root = path.resolve(import.meta.dirname, '..');

/** 50 entities: 10 users with tokens, 5 groups, 10 projects with members and a file, 25 snippets. */
function seed50(): SeedDocument {
  const users = Array.from({ length: 10 }, (_, i) => ({
    username: `user${i}`,
    tokens: [{ token: `user${i}-token-0123456789abcdef` }],
  }));
  const groups = Array.from({ length: 5 }, (_, i) => ({ path: `group${i}`, visibility: 'public' as const }));
  const projects = Array.from({ length: 10 }, (_, i) => ({
    path: `group${i % 5}/project${i}`,
    visibility: 'public' as const,
    members: [{ user: `user${i}`, access_level: 30 }],
    files: [{ path: 'README.md', content: `# project ${i}\n` }],
    snippets: Array.from({ length: i < 5 ? 3 : 2 }, (_, j) => ({
      title: `snippet ${j}`,
      author: `user${i}`,
      visibility: 'public' as const,
      files: [{ path: `s${j}.rb`, content: `puts ${j}\n` }],
    })),
  }));
  return { users, groups, projects };
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** Starts `command` and asks `url` every 2 ms until it answers 200: milliseconds, and the RSS then. */
async function timeToFirst200(command: string[], url: (port: number) => string, cwd = root) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command[0], command.slice(1), {
    cwd,
    env: { ...process.env, SNIPPETD_PORT: String(port), BENCH_PORT: String(port), SNIPPETD_LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  try {
    for (;;) {
      const ok = await fetch(url(port)).then(
        (res) => res.status === 200,
        () => false,
      );
      if (ok) break;
      if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited ${child.exitCode}`);
      if (performance.now() - started > 30_000) throw new Error(`${command.join(' ')} never answered`);
      await new Promise((r) => setTimeout(r, 2));
    }
    const ms = performance.now() - started;
    // npx runs the server as its child: the RSS is the server's, whichever process it is.
    const pid = serverPid(child.pid!);
    const rss = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
    return { ms, rss };
  } finally {
    killTree(child.pid!);
  }
}

/** The deepest process under `pid` (npx → sh → node): the one listening. */
const serverPid = (pid: number): number => {
  const kids = childrenOf(pid);
  return kids.length ? serverPid(kids[kids.length - 1]) : pid;
};
const killTree = (pid: number) => {
  for (const kid of childrenOf(pid)) killTree(kid);
  try {
    process.kill(pid, 'SIGKILL');
  } catch {}
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const max = (xs: number[]) => Math.max(...xs);
const fmt = (xs: number[]) => `${median(xs).toFixed(0)} / ${max(xs).toFixed(0)}`;

async function series(name: string, command: string[], url: (port: number) => string, cwd?: string) {
  const ms: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await timeToFirst200(command, url, cwd);
    ms.push(r.ms);
    rss.push(r.rss);
  }
  console.log(`| ${name} | ${fmt(ms)} | ${fmt(rss)} |`);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-ephemeral-'));
const seedFile = path.join(dir, 'seed.json');
fs.writeFileSync(seedFile, JSON.stringify(seed50()));
const bare = `import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.get('/constant', async () => ({ key: 'mit', name: 'MIT License' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.BENCH_PORT) });`;
const project = (port: number) => `http://127.0.0.1:${port}/api/v4/projects/1`;

console.log(`start to first 200, ${runs} runs each (median / max)\n`);
console.log('| process | ms to first 200 | RSS MB then |');
console.log('|---|---|---|');
await series(
  'bare Fastify route (node -e)',
  ['node', '--input-type=module', '-e', bare],
  (p) => `http://127.0.0.1:${p}/constant`,
);
await series(
  'node dist/cli.js serve --ephemeral (no seed)',
  ['node', 'dist/cli.js', 'serve', '--ephemeral'],
  (p) => `http://127.0.0.1:${p}/-/liveness`,
);
await series(
  'node dist/cli.js serve --ephemeral --seed (50 entities)',
  ['node', 'dist/cli.js', 'serve', '--ephemeral', '--seed', seedFile],
  project,
);
if (values.installed) {
  await series(
    'npx snippetd serve --ephemeral --seed (installed tarball)',
    ['npx', 'snippetd', 'serve', '--ephemeral', '--seed', seedFile],
    project,
    values.installed,
  );
  await series(
    'npx snippetd serve (installed tarball, SQLite file)',
    ['npx', 'snippetd', 'serve', '--data-dir', path.join(dir, 'data')],
    (p) => `http://127.0.0.1:${p}/-/liveness`,
    values.installed,
  );
  // The same command without npx: what npx itself adds is the difference.
  await series(
    'node_modules/.bin/snippetd serve (installed tarball, SQLite file)',
    [path.join(values.installed, 'node_modules/.bin/snippetd'), 'serve', '--data-dir', path.join(dir, 'data')],
    (p) => `http://127.0.0.1:${p}/-/liveness`,
    values.installed,
  );
}

// Reset after a test that created a snippet, in-process and over HTTP.
const gitlab = await startSnippetd({ seed: seed50(), rootToken: 'bench-root-token-0123456789' });
const headers = { 'private-token': gitlab.rootToken, 'content-type': 'application/json' };
const change = () =>
  fetch(`${gitlab.apiUrl}/projects/1/snippets`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ title: 'test', files: [{ file_path: 'a.txt', content: 'a' }] }),
  }).then((r) => r.arrayBuffer());
const inProcess: number[] = [];
const overHttp: number[] = [];
for (let i = 0; i < 50; i++) {
  await change();
  let t = performance.now();
  await gitlab.reset();
  inProcess.push(performance.now() - t);
  await change();
  t = performance.now();
  const res = await fetch(`${gitlab.url}/-/snippetd/reset`, {
    method: 'POST',
    headers: { 'private-token': gitlab.rootToken },
  });
  overHttp.push(performance.now() - t);
  if (res.status !== 204) throw new Error(`reset answered ${res.status}`);
}
await gitlab.close();
const ms = (xs: number[]) =>
  `${median(xs).toFixed(2)} / ${[...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)].toFixed(2)} / ${max(xs).toFixed(2)}`;
console.log(`\nreset after a snippet was created, 50 each (median / p95 / max ms), seed of 50 entities\n`);
console.log('| reset | ms |');
console.log('|---|---|');
console.log(`| startSnippetd().reset() | ${ms(inProcess)} |`);
console.log(`| POST /-/snippetd/reset | ${ms(overHttp)} |`);
fs.rmSync(dir, { recursive: true, force: true });
