// `serve --workers 1` against `--workers 2` (issue 31): GET a snippet with a token, each server the compiled
// CLI on a fresh SQLite data directory, alternating rounds with bare Fastify (bench/constant-server.ts) in
// the same run, the same load generator for all three on the same machine. Prints each round's req/s and the
// medians' ratios to bare Fastify and to one worker.
// The load generator is wrk (Debian's package, C, one thread) unless `--generator autocannon`: autocannon
// runs in this Node.js process and takes most of a core at these rates, so on a 2-core machine it leaves a
// second worker little to run on.
// With --unkept, every request of a snippetd asks a URL of its own (bench/unkept.ts; wrk only),
// so that no kept answer (http/kept-answers.ts) applies: each does the lookups, the policy and presenting.
// With --pipeline N, wrk sends N requests at a time on each connection (HTTP/1.1 pipelining, wrk only): one
// request at a time it took most of a core of the two, and the second worker had little left to run on.
// Usage: npx tsx bench/workers.ts [--rounds 5] [--duration 3] [--connections 20] [--generator wrk|autocannon]
//   [--unkept] [--pipeline 16]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pipelinedWrkScript, runWrk } from './wrk.ts';
import { unkeptWrkScript } from './unkept.ts';
import autocannon from 'autocannon';
import { spawnServer, startBenchServer } from '../scripts/spawn-server.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '3' },
    connections: { type: 'string', default: '20' },
    generator: { type: 'string', default: 'wrk' },
    unkept: { type: 'boolean', default: false },
    pipeline: { type: 'string' },
  },
});

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-workers-'));
if (values.unkept && values.pipeline) throw new Error('--unkept and --pipeline are one wrk script each');
const SCRIPT = values.unkept
  ? unkeptWrkScript(tmp)
  : values.pipeline
    ? pipelinedWrkScript(tmp, Number(values.pipeline))
    : undefined;

/** Requests a second over `duration` seconds, every answer checked to be a 2xx. */
async function load(url: string, headers: Record<string, string>, script?: string): Promise<number> {
  const connections = Number(values.connections);
  const duration = Number(values.duration);
  if (values.generator === 'autocannon') {
    const r = await autocannon({ url, headers, connections, duration });
    if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return r.requests.average;
  }
  return (await runWrk({ url, headers, connections, seconds: duration, script })).requestsPerSecond;
}
const TOKEN = 'bench-root-token-0123456789abcdef';

async function snippetdWith(workers: number) {
  process.env.SNIPPETD_WORKERS = String(workers);
  const server = await startBenchServer({ dataDir: path.join(tmp, `w${workers}`), token: TOKEN });
  const res = await fetch(`${server.url}/api/v4/snippets`, {
    method: 'POST',
    headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({
      title: 'bench',
      visibility: 'private',
      files: [{ file_path: 'a.rb', content: 'puts 1\n' }],
    }),
  });
  const { id } = (await res.json()) as { id: number };
  return { ...server, target: `${server.url}/api/v4/snippets/${id}` };
}

const fastify = await spawnServer(process.env, [path.join(import.meta.dirname, 'constant-server.ts')]);
const one = await snippetdWith(1);
const two = await snippetdWith(2);
const targets = {
  'bare Fastify': { url: `${fastify.url}/constant`, headers: {}, script: values.pipeline ? SCRIPT : undefined },
  '1 worker': { url: one.target, headers: { 'PRIVATE-TOKEN': TOKEN }, script: SCRIPT },
  '2 workers': { url: two.target, headers: { 'PRIVATE-TOKEN': TOKEN }, script: SCRIPT },
};
const results: Record<string, number[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [name, { url, headers, script }] of Object.entries(targets)) {
    results[name].push(await load(url, headers, script));
  }
  console.log(
    `round ${round + 1}: ${Object.entries(results)
      .map(([name, list]) => `${name} ${Math.round(list[round])}`)
      .join(', ')} req/s`,
  );
}
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const [bare, w1, w2] = Object.values(results).map(median);
console.log(
  `medians: bare Fastify ${Math.round(bare)}, 1 worker ${Math.round(w1)} (${(w1 / bare).toFixed(2)} of bare), ` +
    `2 workers ${Math.round(w2)} (${(w2 / bare).toFixed(2)} of bare, ${(w2 / w1).toFixed(2)}× one worker) req/s`,
);
for (const server of [one, two]) server.stop();
fastify.child.kill('SIGTERM');
await new Promise((resolve) => setTimeout(resolve, 1000));
fs.rmSync(tmp, { recursive: true, force: true });
