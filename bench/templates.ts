// Load script for built-in templates against a bare Fastify route returning a constant JSON object
// (issue 5's target: templates at >= 80 % of the baseline's requests per second).
//
// Two baselines, both served by bench/constant-server.ts (bare Fastify, no logger, no hooks):
// - "small constant": one route answering the constant object {key, name};
// - "same answer": one route per measured URL answering, as a constant, exactly the status, headers and
//   JSON body snippetd gives for it (a prepared template is a constant JSON object too).
//
// Where `taskset` exists (Linux), each server runs on CPU 1 and this process (autocannon) on CPU 0, so
// the client never takes the server's core and req/s measures the server. The server's CPU time per
// request (from /proc) is reported beside req/s. This machine's speed drifts by tens of percent within
// a minute, so every route is measured in rounds that alternate snippetd with both baselines, and each
// ratio is the median of the per-round ratios.
// Usage: npx tsx bench/templates.ts [--duration 2] [--rounds 7] [--connections 10] [--database-url URL]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { compiledCli, spawnServer, type Spawned } from '../scripts/spawn-server.ts';
import { cpuMicros } from './process-cpu.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '7' },
    connections: { type: 'string', default: '10' },
    'database-url': { type: 'string' },
  },
});
const TOKEN = 'bench-root-token-0123456789abcdef';
const rounds = Number(values.rounds);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-'));
const pinned = os.cpus().length >= 2 && spawnSync('taskset', ['-pc', '0', String(process.pid)]).status === 0;
const SERVER_CPU = pinned ? 1 : undefined;

/** CPU time (user + system) a process has used, in microseconds; null where /proc is not there. */
function processCpu(pid: number): number | null {
  try {
    return cpuMicros(pid);
  } catch {
    return null;
  }
}

interface Measured {
  rps: number;
  /** Server CPU microseconds per request. */
  cpu: number | null;
}

async function measure(server: Spawned, url: string, duration = Number(values.duration)): Promise<Measured> {
  const before = processCpu(server.child.pid!);
  const r = await autocannon({ url, connections: Number(values.connections), duration });
  const after = processCpu(server.child.pid!);
  const expectedError = url.includes('/api/v3/') || url.endsWith('/replay/0');
  if (r.errors || (r.non2xx && !expectedError)) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return {
    rps: r.requests.average,
    cpu: before === null || after === null ? null : (after - before) / r.requests.total,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (x: number) => `${Math.round(x * 100)} %`;
let baseline: Spawned | undefined;

const server = await spawnServer(
  {
    ...process.env,
    SNIPPETD_DATA_DIR: dataDir,
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
    ...(values['database-url'] ? { SNIPPETD_DATABASE_URL: values['database-url'] } : {}),
  },
  [compiledCli(), 'serve', '--port', '0'],
  SERVER_CPU,
);
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
  baseline = await spawnServer(
    { ...process.env, BENCH_REPLAY_FILE: path.join(dataDir, 'replay.json') },
    ['bench/constant-server.ts'],
    SERVER_CPU,
  );
  const constantUrl = `${baseline.url}/constant`;

  // Warm every process up (JIT) before anything is recorded.
  await measure(baseline, constantUrl, 2);
  for (const [i, [, url]] of routes.entries()) {
    await measure(server, url, 1);
    await measure(baseline, `${baseline.url}/replay/${i}`, 1);
  }

  console.log(
    `\nconnections ${values.connections}, ${rounds} rounds of ${values.duration} s per route, database ${values['database-url'] ? 'PostgreSQL' : 'SQLite'}, ` +
      `anonymous caller on a public project, ${pinned ? 'servers on CPU 1 and autocannon on CPU 0' : 'processes not pinned (no taskset)'}\n`,
  );
  console.log(
    '| route | snippetd req/s | same answer req/s | small constant req/s | snippetd % of same answer | snippetd % of small constant | server µs/request: snippetd / same answer / small constant | snippetd % of small constant per round |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [i, [name, url]] of routes.entries()) {
    const ours: Measured[] = [];
    const same: Measured[] = [];
    const small: Measured[] = [];
    for (let round = 0; round < rounds; round++) {
      small.push(await measure(baseline, constantUrl));
      ours.push(await measure(server, url));
      same.push(await measure(baseline, `${baseline.url}/replay/${i}`));
    }
    const ofSmall = ours.map((r, k) => r.rps / small[k].rps);
    const ofSame = ours.map((r, k) => r.rps / same[k].rps);
    const micros = (xs: Measured[]) => (xs[0].cpu === null ? '–' : median(xs.map((x) => x.cpu!)).toFixed(1));
    console.log(
      `| ${name} | ${Math.round(median(ours.map((r) => r.rps)))} | ${Math.round(median(same.map((r) => r.rps)))} | ${Math.round(median(small.map((r) => r.rps)))} ` +
        `| **${pct(median(ofSame))}** | **${pct(median(ofSmall))}** | ${micros(ours)} / ${micros(same)} / ${micros(small)} | ${ofSmall.map(pct).join(', ')} |`,
    );
  }
} finally {
  server.child.kill('SIGTERM');
  baseline?.child.kill('SIGTERM');
  setTimeout(() => fs.rmSync(dataDir, { recursive: true, force: true }), 500);
}
