// Issue 31's push target: a one-line `git push` to a snippet, p50 ≤ 150 ms. The compiled server on a fresh
// SQLite data directory (or `--database-url`), one snippet cloned once, then `--pushes` pushes of a one-line
// change each, one at a time, timed around the `git push` process; also a fetch after each, and `node -e 0`
// (how fast this machine starts a process today).
// Usage: npx tsx bench/push.ts [--pushes 30] [--database-url URL] [--workers 1]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startBenchServer } from '../scripts/spawn-server.ts';

const { values } = parseArgs({
  options: {
    pushes: { type: 'string', default: '30' },
    'database-url': { type: 'string' },
    workers: { type: 'string', default: '1' },
  },
});
const TOKEN = 'bench-push-root-token-0123456789';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-push-'));
process.env.SNIPPETD_WORKERS = values.workers;
const server = await startBenchServer({
  dataDir: path.join(tmp, 'data'),
  token: TOKEN,
  databaseUrl: values['database-url'],
});
const env = { ...process.env, HOME: tmp, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };
const git = (args: string[], cwd = tmp) => {
  const started = performance.now();
  const r = spawnSync('git', ['-c', 'user.name=B', '-c', 'user.email=b@example.com', ...args], {
    cwd,
    env,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return performance.now() - started;
};
const p = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const summary = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return `p50 ${p(s, 0.5).toFixed(0)} ms, p90 ${p(s, 0.9).toFixed(0)} ms, min ${s[0].toFixed(0)} ms`;
};
try {
  const res = await fetch(`${server.url}/api/v4/snippets`, {
    method: 'POST',
    headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({
      title: 'push',
      visibility: 'private',
      files: [{ file_path: 'a.txt', content: 'line 0\n' }],
    }),
  });
  const snippet = (await res.json()) as { id: number };
  const remote = `http://root:${TOKEN}@${new URL(server.url).host}/snippets/${snippet.id}.git`;
  const dir = path.join(tmp, 'clone');
  git(['clone', '-q', remote, dir]);
  const pushes: number[] = [];
  const fetches: number[] = [];
  for (let i = 1; i <= Number(values.pushes); i++) {
    fs.appendFileSync(path.join(dir, 'a.txt'), `line ${i}\n`);
    git(['commit', '-qam', `line ${i}`], dir);
    pushes.push(git(['push', '-q', 'origin', 'main'], dir));
    fetches.push(git(['fetch', '-q', 'origin'], dir));
  }
  const nodeStarts: number[] = [];
  for (let i = 0; i < 10; i++) {
    const started = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    nodeStarts.push(performance.now() - started);
  }
  console.log(`push (one line): ${summary(pushes)}`);
  console.log(`fetch: ${summary(fetches)}`);
  console.log(`node -e 0: ${summary(nodeStarts)}`);
  console.log(
    `load average: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
} finally {
  server.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}
