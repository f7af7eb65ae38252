// Do writes stall reads? An evenly paced mixed load (70 % GET snippet, 15 % list of 20, 10 % raw, 5 % title
// updates) at a fixed rate against one server pinned to one core, the load generator on the other. Each
// request's latency is counted from when it was due, not from when it was sent, so a stalled server shows
// up in full (no coordinated omission). Also runs the same schedule with the updates left out.
// With --profile DIR the server runs under `node --cpu-prof` and writes its profile there when it stops.
// With --rounds N the two phases run N times, alternated, after the warm-up, and the medians of their p99
// close the report. Each row also says what the server saw in its phase (from /-/metrics): its longest
// event-loop block, and its statements slower than 10 ms. A bad p99 with neither was made outside the
// server's code (the host, the kernel, the load generator); one with them, inside.
// With --workers N (N > 1) the server runs N workers on every core (not pinned), the load generator among
// them, and its CPU is its primary's and workers' together.
// Usage: npx tsx bench/mixed.ts [--rate 3000] [--duration 10] [--rounds 1] [--workers 1] [--database-url URL] [--profile DIR]
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { compiledCli, spawnServer, withoutRateLimits } from '../scripts/spawn-server.ts';
import { closeConnections, pacedLoad, percentile, request } from './paced-load.ts';
import { treeCpuMicros } from './process-cpu.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '3000' },
    duration: { type: 'string', default: '10' },
    'database-url': { type: 'string' },
    profile: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    workers: { type: 'string', default: '1' },
  },
});
const RATE = Number(values.rate);
const DURATION_S = Number(values.duration);
/** Rounds of the two phases, alternated: one run's p99 moves with the shared machine's load, a median less. */
const ROUNDS = Number(values.rounds);
const byValue = (a: number, b: number) => a - b;
const median = (xs: number[]) => [...xs].sort(byValue)[Math.floor(xs.length / 2)];
const TOKEN = 'bench-root-token-0123456789abcdef';
const SNIPPETS = 200;
const pct = (share: number) => `${Math.round(share * 100)} %`;

/** The monitor's timer (prom-client's default precision): a delay beyond it is time the event loop was held. */
const LAG_TIMER_MS = 10;

/**
 * What the server's metrics say now: the longest event-loop delay since the last scrape (prom-client resets
 * it at each), and how many database statements so far took over 10 ms.
 */
async function serverSide(base: URL) {
  const text = await (await fetch(new URL('/-/metrics', base))).text();
  const lagMax = Number(/^snippetd_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1]) * 1000;
  let slow = 0;
  for (const m of text.matchAll(/^snippetd_db_query_duration_seconds_bucket\{le="([^"]+)",[^}]*\} (\d+)$/gm))
    if (m[1] === '+Inf') slow += Number(m[2]);
    else if (m[1] === '0.01') slow -= Number(m[2]);
  return { blockedMs: Math.max(0, lagMax - LAG_TIMER_MS), slowStatements: slow };
}

/** Request i of a phase: 70 % GET, 15 % list, 10 % raw, 5 % title updates (raw too when the phase has no writes). */
function kindOf(i: number, withWrites: boolean): 'get' | 'list' | 'raw' | 'update' {
  const pick = (i * 37) % 100;
  if (pick < 70) return 'get';
  if (pick < 85) return 'list';
  return pick < 95 || !withWrites ? 'raw' : 'update';
}

async function phase(base: URL, projectId: number, ids: number[], withWrites: boolean, serverPid: number) {
  let failures = 0;
  // In the mixed phase, the reads' latencies apart from the writes': whether the writes slowed the reads,
  // or only took their own time.
  const readLatencies: number[] = [];
  const updateLatencies: number[] = [];
  const seenBefore = await serverSide(base);
  const serverBefore = treeCpuMicros(serverPid);
  const clientBefore = process.cpuUsage();
  const latencies = await pacedLoad(
    RATE,
    RATE * DURATION_S,
    (i) => {
      const snippet = `/api/v4/projects/${projectId}/snippets/${ids[i % ids.length]}`;
      switch (kindOf(i, withWrites)) {
        case 'get':
          return request(base, TOKEN, 'GET', snippet);
        case 'list':
          return request(base, TOKEN, 'GET', `/api/v4/projects/${projectId}/snippets?per_page=20`);
        case 'raw':
          return request(base, TOKEN, 'GET', `${snippet}/raw`);
        case 'update':
          return request(base, TOKEN, 'PUT', snippet, JSON.stringify({ title: `title ${i}` }));
      }
    },
    (i, status, latency) => {
      if (status === null || status >= 400) failures++;
      (kindOf(i, withWrites) === 'update' ? updateLatencies : readLatencies).push(latency);
    },
  );
  const client = process.cpuUsage(clientBefore);
  const seenAfter = await serverSide(base);
  return {
    blockedMs: seenAfter.blockedMs,
    slowStatements: seenAfter.slowStatements - seenBefore.slowStatements,
    // Each process's CPU as a share of one core over the phase: near 100 % the process set the pace.
    serverBusy: (treeCpuMicros(serverPid) - serverBefore) / (DURATION_S * 1e6),
    clientBusy: (client.user + client.system) / (DURATION_S * 1e6),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1],
    readsP99: percentile(readLatencies.sort(byValue), 99),
    updates: updateLatencies.sort(byValue),
    failures,
  };
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-mixed-'));
  const env = {
    ...process.env,
    SNIPPETD_DATA_DIR: dataDir,
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
    ...(values['database-url'] && { SNIPPETD_DATABASE_URL: values['database-url'] }),
  };
  const profile = values.profile ? ['--cpu-prof', `--cpu-prof-dir=${values.profile}`] : [];
  const workers = Number(values.workers);
  const server = await spawnServer(
    { ...env, SNIPPETD_WORKERS: String(workers) },
    [...profile, compiledCli(), 'serve', '--port', '0'],
    workers === 1 ? 1 : undefined,
  );
  await withoutRateLimits(server.url, TOKEN);
  const base = new URL(server.url);
  try {
    const created = JSON.parse(
      await new Promise<string>((resolve, reject) => {
        const req = http.request(
          {
            host: base.hostname,
            port: base.port,
            method: 'POST',
            path: '/api/v4/projects',
            headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
          },
          (res) => {
            let text = '';
            res.on('data', (c) => (text += c));
            res.on('end', () => resolve(text));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ path: 'mixed', visibility: 'public' }));
      }),
    ) as { id: number };
    const ids: number[] = [];
    for (let i = 0; i < SNIPPETS; i++) {
      const res = await fetch(`${server.url}/api/v4/projects/${created.id}/snippets`, {
        method: 'POST',
        headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({
          title: `s${i}`,
          visibility: 'public',
          files: [{ file_path: 'a.rb', content: `puts ${i}\n`.repeat(30) }],
        }),
      });
      ids.push(((await res.json()) as { id: number }).id);
    }
    const pid = server.child.pid!;
    // The warm-up runs the mixed schedule: with reads alone, the first mixed round measured the write path's
    // first use in each worker (its code compiled, its statements prepared, its first index steps).
    await phase(base, created.id, ids, true, pid);
    const db = values['database-url'] ? 'PostgreSQL' : 'SQLite';
    console.log(`${db}, ${RATE} requests/s for ${DURATION_S} s, latency from when each request was due (ms):`);
    console.log(
      '| round | load | p50 | p99 | max | failed | server CPU | load generator CPU | server: longest event-loop block ms | server: statements > 10 ms | p99 of the reads | title updates p50 / p99 |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    const p99s = { reads: [] as number[], mixed: [] as number[] };
    for (let round = 1; round <= ROUNDS; round++) {
      const reads = await phase(base, created.id, ids, false, pid);
      const mixed = await phase(base, created.id, ids, true, pid);
      p99s.reads.push(reads.p99);
      p99s.mixed.push(mixed.p99);
      for (const [name, r] of [
        ['reads only (70 % get, 15 % list, 15 % raw)', reads],
        ['mixed (70 % get, 15 % list, 10 % raw, 5 % title updates)', mixed],
      ] as const)
        console.log(
          `| ${round} | ${name} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(1)} | ${r.failures} | ${pct(r.serverBusy)} | ${pct(r.clientBusy)} | ${r.blockedMs.toFixed(1)} | ${r.slowStatements} | ${r.readsP99.toFixed(2)} | ${r.updates.length ? `${percentile(r.updates, 50).toFixed(2)} / ${percentile(r.updates, 99).toFixed(2)}` : ''} |`,
        );
    }
    if (ROUNDS > 1)
      console.log(
        `\nmedian p99 over ${ROUNDS} rounds: reads only ${median(p99s.reads).toFixed(2)} ms, mixed ${median(p99s.mixed).toFixed(2)} ms`,
      );
  } finally {
    const stopped = new Promise((resolve) => server.child.on('exit', resolve));
    server.child.kill('SIGTERM');
    closeConnections();
    await stopped; // a profile is written as the server exits
    setTimeout(() => fs.rmSync(dataDir, { recursive: true, force: true }), 500);
  }
}

await main();
