// A walk through a long history on a fresh server, whose object cache is empty: the first page of a project's
// commits (which counts them up to 10,000) and a file's last commit (README.md, changed only by the first
// commit, so the walk goes through the whole history). The compiled server on a fresh SQLite data directory
// (or `--database-url`, a database of its own), a project whose history is `--commits` commits pushed at once
// (git fast-import; another file changes in each) in `--pushes` pushes; each figure from a server started again
// for it.
// Usage: npx tsx bench/commit-walk.ts [--commits 10000] [--pushes 1] [--rounds 5] [--database-url URL]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startBenchServer } from '../scripts/spawn-server.ts';

const { values } = parseArgs({
  options: {
    commits: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '5' },
    pushes: { type: 'string', default: '1' },
    'database-url': { type: 'string' },
  },
});
const TOKEN = 'bench-commit-walk-root-token-0123';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-walk-'));
const start = () =>
  startBenchServer({ dataDir: path.join(tmp, 'data'), token: TOKEN, databaseUrl: values['database-url'] });
const stop = async (server: Awaited<ReturnType<typeof start>>) => {
  server.stop();
  for (;;) {
    try {
      process.kill(server.pid, 0);
    } catch {
      return;
    }
    await sleep(20);
  }
};
const env = { ...process.env, HOME: tmp, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };
const git = (args: string[], input?: string) =>
  execFileSync('git', ['-c', 'user.name=B', '-c', 'user.email=b@example.com', ...args], {
    cwd: path.join(tmp, 'clone'),
    env,
    input,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
const api = async (url: string, route: string, init: RequestInit = {}) => {
  const res = await fetch(`${url}/api/v4${route}`, {
    ...init,
    headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
  });
  if (!res.ok) throw new Error(`${route}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
};
const timed = async (f: () => Promise<unknown>) => {
  const started = performance.now();
  await f();
  return performance.now() - started;
};
const median = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)];
/** The SELECT statements the server ran so far, from its /-/metrics. */
const selects = async (url: string) => {
  const text = await (await fetch(`${url}/-/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('snippetd_db_query_duration_seconds_count{statement="select",outcome="ok"} '));
  return Number(line?.split(' ')[1] ?? 0);
};

let server = await start();
try {
  const project = await api(server.url, '/projects', {
    method: 'POST',
    body: JSON.stringify({ path: 'walk', initialize_with_readme: true }),
  });
  fs.mkdirSync(path.join(tmp, 'clone'));
  git(['clone', '-q', `http://root:${TOKEN}@${new URL(server.url).host}/root/walk.git`, '.']);
  const base = git(['rev-parse', 'HEAD']).trim();
  const commits = Array.from(
    { length: Number(values.commits) },
    (_, i) =>
      `commit refs/heads/main\ncommitter B <b@example.com> ${1_700_000_000 + i} +0000\ndata ${String(i).length}\n${i}\n` +
      `${i === 0 ? `from ${base}\n` : ''}M 100644 inline counter.txt\ndata ${String(i).length + 1}\n${i}\n\n`,
  ).join('');
  git(['fast-import', '--quiet'], commits);
  // Pushed in `--pushes` steps, oldest first: each push is a write of its own.
  const pushes = Number(values.pushes);
  for (let step = pushes - 1; step >= 0; step--) {
    const back = Math.floor((step * Number(values.commits)) / pushes);
    git(['push', '-q', 'origin', `main~${back}:refs/heads/main`]);
  }
  const routes = [
    ['first page of commits (20, counted to 10,000)', `/projects/${project.id}/repository/commits?per_page=20`],
    ["README.md's last commit", `/projects/${project.id}/repository/files/README.md?ref=main`],
  ];
  const [cold, warm, statements] = [0, 1, 2].map(
    () => Object.fromEntries(routes.map(([name]) => [name, []])) as Record<string, number[]>,
  );
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [name, route] of routes) {
      await stop(server);
      server = await start();
      const before = await selects(server.url);
      cold[name].push(await timed(() => api(server.url, route)));
      statements[name].push((await selects(server.url)) - before);
      // The second request after a cold one may meet its garbage collection: the third is the warm figure.
      await timed(() => api(server.url, route));
      warm[name].push(await timed(() => api(server.url, route)));
    }
  }
  for (const [name, ms] of Object.entries(cold))
    console.log(
      `${name}: cold p50 ${median(ms).toFixed(0)} ms (${ms.map((m) => m.toFixed(0)).join(', ')}) in ` +
        `${median(statements[name])} SELECTs, then warm ${median(warm[name]).toFixed(0)} ms`,
    );
  console.log(
    'load average:',
    os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' '),
  );
} finally {
  await stop(server);
  fs.rmSync(tmp, { recursive: true, force: true });
}
