// GET /groups for a user with many group memberships among many groups (helper-89: 20,000 groups and 500
// memberships took 2.3-4.7 s a request when each group was compared with each membership). A compiled server
// (`dist/`, `node scripts/build.mjs` in the tree first) on SQLite; the groups and memberships are made through the
// API, then the list is asked for five times as that user; the median and the longest the event loop was held are
// printed, one JSON line a tree.
//
//   npx tsx bench/group-lists.ts [compiled tree, default this one] [groups, default 5000] [memberships, default 250]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnServer, withoutRateLimits } from '../scripts/spawn-server.ts';

const [tree = path.resolve(import.meta.dirname, '..'), groups = '5000', memberships = '250'] = process.argv.slice(2);
const TOKEN = 'group-lists-bench-token-0123456789';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-group-lists-'));
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
  await withoutRateLimits(server.url, TOKEN);
  const api = async (url: string, body: object) => {
    const res = await fetch(`${server.url}/api/v4${url}`, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: number; token: string };
  };
  const user = await api('/users', { username: 'member', email: 'member@example.com', name: 'Member' });
  const { token } = await api(`/users/${user.id}/personal_access_tokens`, { name: 'bench', scopes: ['api'] });
  const ids: number[] = [];
  for (let i = 0; i < Number(groups); i += 50) {
    const made = await Promise.all(
      Array.from({ length: Math.min(50, Number(groups) - i) }, (_, j) =>
        api('/groups', { name: `g${i + j}`, path: `g${i + j}`, visibility: 'private' }),
      ),
    );
    ids.push(...made.map((g) => g.id));
  }
  const step = Math.max(1, Math.floor(ids.length / Number(memberships)));
  for (let i = 0; i < Number(memberships); i++)
    await api(`/groups/${ids[i * step]}/members`, { user_id: user.id, access_level: 30 });
  const loopHeldMs = async () => {
    const metrics = await (await fetch(`${server.url}/-/metrics`)).text();
    return Number(/^snippetd_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(metrics)?.[1]) * 1000;
  };
  await loopHeldMs();
  const times: number[] = [];
  let listed = 0;
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const res = await fetch(`${server.url}/api/v4/groups?per_page=20&page=${i + 1}`, {
      headers: { 'PRIVATE-TOKEN': token },
    });
    if (res.status !== 200) throw new Error(`GET /groups: ${res.status} ${await res.text()}`);
    listed = Number(res.headers.get('x-total'));
    await res.arrayBuffer();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      tree,
      groups: Number(groups),
      memberships: Number(memberships),
      listed,
      medianMs: Math.round(times[2]),
      maxMs: Math.round(times[4]),
      loopHeldMs: Math.round(await loopHeldMs()),
    }),
  );
} finally {
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.on('exit', resolve));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
