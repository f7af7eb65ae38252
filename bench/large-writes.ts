// Issue 28's large accepted writes: one file of random bytes (its stored body as large as the file) pushed to a
// fresh project, and one large file created through the API (random bytes as base64 text), while cheap
// requests go on (test/stall.ts): the server's longest event-loop delay, its peak memory and the cheap
// requests' worst latency; after a push, the first clone too. test/process/large-writes.test.ts does the same at 32 and 24 MiB; run this by hand:
//
//   npx tsx bench/large-writes.ts [--size-mib 48] [--db sqlite|postgres] [--rounds 2] [--only push|create]
//                                 [--cli <a tree's src/cli.ts>] [--cpu-prof <dir>]
//
// It raises max_file_size and snippet_size_limit to fit the size. By default it runs this tree's source through
// tsx (as the earlier figures were taken); `--cli` runs another tree's, for a before figure. `--cpu-prof`
// writes the server's CPU profile into a directory.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CLI, exited, spawnServer } from '../scripts/spawn-server.ts';
import { type Calm, MiB, whileHostile } from '../test/stall.ts';

const { values } = parseArgs({
  options: {
    'size-mib': { type: 'string' },
    db: { type: 'string' },
    rounds: { type: 'string' },
    only: { type: 'string' },
    cli: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const sizeMiB = Number(values['size-mib'] ?? 48);
const size = sizeMiB * MiB;
const rounds = Number(values.rounds ?? 2);
process.env.SNIPPETD_TEST_DB = values.db ?? 'sqlite';
const { processStorage } = await import('../test/helper.ts');
const TOKEN = 'glpat-large-writes-bench-token';
const storage = await processStorage('snippetd-large-writes-bench-');
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-large-writes-home-'));
const env = { PATH: process.env.PATH, HOME: home, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };

function git(args: string[], cwd = home): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', ['-c', 'user.name=B', '-c', 'user.email=b@example.com', ...args], { cwd, env });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.resume();
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

async function must(args: string[], cwd?: string): Promise<void> {
  const r = await git(args, cwd);
  if (r.code !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

const profile = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`] : [];
const server = await spawnServer(
  {
    ...process.env,
    SNIPPETD_DATA_DIR: storage.dataDir,
    SNIPPETD_DATABASE_URL: storage.databaseUrl,
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: process.env.SNIPPETD_LOG_LEVEL ?? 'warn',
  },
  [...profile, values.cli ?? CLI, 'serve', '--port', '0'],
);
const api = async (method: string, url: string, body: Uint8Array<ArrayBuffer> | object) => {
  const res = await fetch(`${server.url}/api/v4${url}`, {
    method,
    headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
    body: body instanceof Uint8Array ? body : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
};
const report = (write: string, seconds: number, calm: Calm) =>
  console.log(
    JSON.stringify({
      write,
      db: process.env.SNIPPETD_TEST_DB,
      fileMiB: sizeMiB,
      seconds: Number(seconds.toFixed(1)),
      peakRssMiB: Math.round(calm.peakRssBytes / MiB),
      loopDelayMaxMs: Math.round(calm.loopDelayMaxMs),
      cheapNormalMs: Number(calm.normalMs.toFixed(1)),
      cheapWorstMs: Math.round(calm.worstMs),
      cheapAnswered: calm.answered,
    }),
  );

try {
  await api('PUT', '/application/settings', {
    max_file_size: Math.max(50, sizeMiB + 1),
    snippet_size_limit: Math.max(52_428_800, size + MiB),
  });
  for (let round = 0; round < rounds; round++) {
    if (values.only !== 'create') await push(round);
    if (values.only !== 'push') await create(round);
  }
} finally {
  server.child.kill('SIGTERM');
  await exited(server.child);
  await storage.remove();
  fs.rmSync(home, { recursive: true, force: true });
}

async function push(round: number) {
  const host = new URL(server.url).host;
  const name = `push-${round}`;
  await api('POST', '/projects', { path: name, initialize_with_readme: true });
  const dir = path.join(home, name);
  await must(['clone', '-q', `http://oauth2:${TOKEN}@${host}/root/${name}.git`, dir]);
  fs.writeFileSync(path.join(dir, 'random.bin'), crypto.randomBytes(size));
  await must(['add', 'random.bin'], dir);
  await must(['commit', '-qm', 'random'], dir);
  const started = performance.now();
  // The pack whole in git's memory: a keep-alive connection closed while git packed (seconds, on a busy
  // machine) is retried, which a streamed pack cannot be ("unable to rewind rpc post data").
  const push = await whileHostile(server, () =>
    git(['-c', `http.postBuffer=${2 * size}`, 'push', '-q', 'origin', 'main'], dir),
  );
  if (push.answer.code !== 0)
    throw new Error(`the push failed: ${push.answer.stderr}\nthe server said: ${server.output().slice(-4000)}`);
  report('push', (performance.now() - started) / 1000, push.calm);
  fs.rmSync(dir, { recursive: true, force: true });
  // The first clone after it: the node's cache of the repository takes the pushed objects from the rows.
  const cloneStarted = performance.now();
  const copy = path.join(home, `${name}-copy`);
  const clone = await whileHostile(server, () =>
    git(['clone', '-q', `http://oauth2:${TOKEN}@${host}/root/${name}.git`, copy]),
  );
  if (clone.answer.code !== 0) throw new Error(`the clone failed: ${clone.answer.stderr}`);
  report('clone after push', (performance.now() - cloneStarted) / 1000, clone.calm);
  fs.rmSync(copy, { recursive: true, force: true });
}

async function create(round: number) {
  const project = await api('POST', '/projects', { path: `created-${round}` });
  const content = crypto.randomBytes((size * 3) / 4).toString('base64');
  // Encoded before: the cheap requests are timed in this process too.
  const body = new TextEncoder().encode(
    JSON.stringify({ title: 'large', visibility: 'private', files: [{ file_path: 'a.txt', content }] }),
  );
  const started = performance.now();
  const created = await whileHostile(server, () => api('POST', `/projects/${project.id}/snippets`, body));
  report('API create', (performance.now() - started) / 1000, created.calm);
}
