// A push of many small objects (issue 31's "no request can hurt the others"): a compiled server (`dist/`, run
// `npm run build` in the tree first) gets one push of N blobs, a thousand a folder, made by git fast-import, and
// the longest the server's event loop was held meanwhile is printed (snippetd_nodejs_eventloop_lag_max_seconds,
// reset by a scrape before the push), with the push's time and the longest a snippet create waited meanwhile
// (one every 50 ms, one at a time); then a new server on the same data clones it (a node's first clone reads
// every object's row), timed the same way. One JSON line a run.
//
//   npx tsx bench/push-many-objects.ts [compiled tree, default this one] [objects, default 200000]
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnServer } from '../scripts/spawn-server.ts';

const [tree = path.resolve(import.meta.dirname, '..'), objects = '200000'] = process.argv.slice(2);
const count = Number(objects);
const TOKEN = 'push-many-objects-token-012345678';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-push-many-'));
const start = () =>
  spawnServer(
    {
      ...process.env,
      SNIPPETD_DATA_DIR: dataDir,
      SNIPPETD_DATABASE_URL: '',
      SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
      SNIPPETD_LOG_LEVEL: 'warn',
      SNIPPETD_WORKERS: '1',
    },
    [path.join(tree, 'dist', 'cli.js'), 'serve', '--port', '0'],
  );
let server = await start();
const stop = async () => {
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.on('exit', resolve));
};
try {
  const created = await fetch(`${server.url}/api/v4/projects`, {
    method: 'POST',
    headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ path: 'many', visibility: 'public' }),
  });
  const project = (await created.json()) as { path_with_namespace: string };
  const repo = path.join(dataDir, 'repo');
  const env = { PATH: process.env.PATH, HOME: dataDir, GIT_CONFIG_NOSYSTEM: '1' };
  execFileSync('git', ['init', '-q', '-b', 'main', repo], { env });
  const parts: string[] = [];
  for (let i = 0; i < count; i++) parts.push(`blob\nmark :${i + 1}\ndata ${String(i).length + 1}\n${i}\n`);
  parts.push('commit refs/heads/main\ncommitter T <t@example.com> 0 +0000\ndata 2\nt\n');
  for (let i = 0; i < count; i++) parts.push(`M 100644 :${i + 1} d${Math.floor(i / 1000)}/f${i}\n`);
  execFileSync('git', ['fast-import', '--quiet'], { cwd: repo, env, input: `${parts.join('')}\n`, maxBuffer: 1 << 28 });

  const git = (args: string[], cwd: string) =>
    new Promise<number | null>((resolve) => spawn('git', args, { cwd, env, stdio: 'ignore' }).on('close', resolve));
  const loopHeldMs = async () => {
    const metrics = await (await fetch(`${server.url}/-/metrics`)).text();
    return Number(/^snippetd_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(metrics)?.[1]) * 1000;
  };
  await loopHeldMs();
  const started = performance.now();
  const remote = new URL(`${server.url}/${project.path_with_namespace}.git`);
  remote.username = 'root';
  remote.password = TOKEN;
  let pushed = false;
  const writeWaits: number[] = [];
  const writing = (async () => {
    while (!pushed) {
      const start = performance.now();
      const res = await fetch(`${server.url}/api/v4/snippets`, {
        method: 'POST',
        headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'meanwhile', file_name: 'a', content: 'a' }),
      });
      await res.arrayBuffer();
      writeWaits.push(performance.now() - start);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const pushExit = await git(['push', '-q', remote.href, 'main'], repo);
  const pushMs = Math.round(performance.now() - started);
  pushed = true;
  await writing;
  const writesMeanwhile = writeWaits.length;
  const writeWaitMaxMs = Math.round(Math.max(...writeWaits));
  const pushLoopHeldMs = Math.round(await loopHeldMs());
  await stop();
  server = await start();
  await loopHeldMs();
  const cloned = performance.now();
  const clone = new URL(`${server.url}/${project.path_with_namespace}.git`);
  clone.username = 'root';
  clone.password = TOKEN;
  const cloneExit = await git(['clone', '-q', '--bare', clone.href, path.join(dataDir, 'clone.git')], dataDir);
  const cloneMs = Math.round(performance.now() - cloned);
  const cloneLoopHeldMs = Math.round(await loopHeldMs());
  const figures = {
    pushExit,
    pushMs,
    pushLoopHeldMs,
    writesMeanwhile,
    writeWaitMaxMs,
    cloneExit,
    cloneMs,
    cloneLoopHeldMs,
  };
  console.log(JSON.stringify({ tree, objects: count, ...figures }));
} finally {
  await stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
