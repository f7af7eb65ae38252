// The page of a group with 5,000 public subgroups (issue 31's "no request can hurt the others"): a compiled server
// (`dist/`, run `npm run build` in the tree first) is asked for it twice (the second from the read cache), and the
// longest the event loop was held meanwhile is printed (snippetd_nodejs_eventloop_lag_max_seconds, reset by a
// scrape before each). One JSON line a request.
//
//   npx tsx bench/group-page.ts [compiled tree, default this one] [subgroups, default 5000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnServer } from '../scripts/spawn-server.ts';

const [tree = path.resolve(import.meta.dirname, '..'), subgroups = '5000'] = process.argv.slice(2);
const TOKEN = 'group-page-bench-token-0123456789a';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-group-page-'));
const server = await spawnServer(
  {
    ...process.env,
    SNIPPETD_DATA_DIR: dataDir,
    SNIPPETD_DATABASE_URL: '',
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
  },
  [path.join(tree, 'dist', 'cli.js'), 'serve', '--port', '0'],
);
try {
  const api = async (body: object) =>
    (await (
      await fetch(`${server.url}/api/v4/groups`, {
        method: 'POST',
        headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json()) as { id: number };
  const top = await api({ name: 'top', path: 'top', visibility: 'public' });
  for (let i = 0; i < Number(subgroups); i += 50)
    await Promise.all(
      Array.from({ length: 50 }, (_, j) =>
        api({ name: `g${i + j}`, path: `g${i + j}`, parent_id: top.id, visibility: 'public' }),
      ),
    );
  const loopHeldMs = async () => {
    const metrics = await (await fetch(`${server.url}/-/metrics`)).text();
    return Number(/^snippetd_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(metrics)?.[1]) * 1000;
  };
  for (const request of ['first', 'again']) {
    await loopHeldMs();
    const started = performance.now();
    const res = await fetch(`${server.url}/groups/top`);
    const shown = ((await res.text()).match(/<li><a href="[^"]+\/groups\/top\/g/g) ?? []).length;
    const ms = Math.round(performance.now() - started);
    console.log(
      JSON.stringify({ tree, request, status: res.status, shown, ms, loopHeldMs: Math.round(await loopHeldMs()) }),
    );
  }
} finally {
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.on('exit', resolve));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
