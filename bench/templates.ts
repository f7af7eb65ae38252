// Load script for built-in templates: list and single requests against a bare Fastify route returning a
// constant JSON object (issue 5's target: templates at >= 80 % of the baseline's requests per second).
// Both servers run as their own processes. This machine's speed drifts by tens of percent within a
// minute, so each route is measured in rounds that alternate with the baseline, and the ratio reported
// is the median of the per-round ratios (each against the baseline measured just before it).
// A third column replays each route's exact answer (status, headers, body) from the bare Fastify server:
// what sending those bytes costs without any of snippetd's work.
// Usage: npx tsx bench/templates.ts [--duration 4] [--rounds 3] [--connections 10] [--database-url URL]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { spawnServer } from '../scripts/spawn-server.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
    'database-url': { type: 'string' },
  },
});
const TOKEN = 'bench-root-token-0123456789abcdef';
const rounds = Number(values.rounds);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-'));

async function rps(url: string, duration = Number(values.duration)) {
  const r = await autocannon({ url, connections: Number(values.connections), duration });
  if (r.errors || (r.non2xx && !url.includes('/api/v3/') && !url.endsWith('/replay/0'))) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.average;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let baseline: Awaited<ReturnType<typeof spawnServer>> | undefined;

const server = await spawnServer({
  ...process.env,
  SNIPPETD_DATA_DIR: dataDir,
  SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
  SNIPPETD_LOG_LEVEL: 'warn',
  ...(values['database-url'] ? { SNIPPETD_DATABASE_URL: values['database-url'] } : {}),
});
try {
  await fetch(`${server.url}/api/v4/projects`, {
    method: 'POST',
    headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ path: 'bench', visibility: 'public' }),
  });
  const base = `${server.url}/api/v4/projects/root%2Fbench/templates`;
  const routes: [string, string][] = [
    // The ceiling for any snippetd route: our hooks and Fastify, no database and no work (410 for v3).
    ['snippetd route doing nothing (GET /api/v3/x, 410)', `${server.url}/api/v3/x`],
    ['GET licenses list (page 1)', `${base}/licenses`],
    ['GET license mit (placeholders filled)', `${base}/licenses/mit?fullname=Jane&project=P`],
    ['GET gitignores list (page 1)', `${base}/gitignores`],
    ['GET gitlab_ci_ymls list (page 2)', `${base}/gitlab_ci_ymls?page=2`],
    ['GET gitignore Ruby', `${base}/gitignores/Ruby`],
    ['GET dockerfile Node', `${base}/dockerfiles/Node`],
    ['GET gitlab_ci_yml Rust', `${base}/gitlab_ci_ymls/Rust`],
    ['GET deprecated /templates/licenses/mit', `${server.url}/api/v4/templates/licenses/mit`],
  ];
  const answers = [];
  for (const [, url] of routes) {
    const res = await fetch(url);
    answers.push({ status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() });
  }
  fs.writeFileSync(path.join(dataDir, 'replay.json'), JSON.stringify(answers));
  baseline = await spawnServer({ ...process.env, BENCH_REPLAY_FILE: path.join(dataDir, 'replay.json') }, ['bench/constant-server.ts']);
  const constantUrl = `${baseline.url}/constant`;

  // Warm every process up (JIT) before anything is recorded.
  await rps(constantUrl, 2);
  for (const [i, [, url]] of routes.entries()) {
    await rps(url, 1);
    await rps(`${baseline.url}/replay/${i}`, 1);
  }

  console.log(`\nconnections ${values.connections}, ${rounds} rounds of ${values.duration} s per route, database ${values['database-url'] ? 'PostgreSQL' : 'SQLite'}, anonymous caller on a public project\n`);
  console.log('| route | snippetd req/s | same answer from bare Fastify req/s | baseline req/s | snippetd % of baseline | same answer % of baseline | snippetd % per round |');
  console.log('|---|---|---|---|---|---|---|');
  const pct = (x: number) => `${Math.round(x * 100)} %`;
  for (const [i, [name, url]] of routes.entries()) {
    const ours: number[] = [];
    const replayed: number[] = [];
    const constant: number[] = [];
    for (let round = 0; round < rounds; round++) {
      constant.push(await rps(constantUrl));
      ours.push(await rps(url));
      replayed.push(await rps(`${baseline.url}/replay/${i}`));
    }
    const ratios = ours.map((r, k) => r / constant[k]);
    const replayRatios = replayed.map((r, k) => r / constant[k]);
    console.log(
      `| ${name} | ${Math.round(median(ours))} | ${Math.round(median(replayed))} | ${Math.round(median(constant))} | **${pct(median(ratios))}** | ${pct(median(replayRatios))} | ${ratios.map(pct).join(', ')} |`,
    );
  }
} finally {
  server.child.kill('SIGTERM');
  baseline?.child.kill('SIGTERM');
  setTimeout(() => fs.rmSync(dataDir, { recursive: true, force: true }), 500);
}
