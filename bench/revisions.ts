// Load script for the revisions pages (issue 30): a public project snippet with 1,000 commits made through the
// API, each changing one line of a 400-line JavaScript file. Then, --cold times each, a 200-line change (lines
// 100-299 replaced: +200 -200) and the revisions page and that commit's diff page, neither seen before: right
// after the write, and --settle ms after it (a diff is worked out after the write that made it, when its
// snippet's diffs are looked at: domain/snippets/history.ts#RevisionPreparer), alternately. Then
// the same pages seen before (the first page, the last one, the diff) and the snippet page for comparison,
// one request at a time (wall time, p50 / p90 / max), then under autocannon against the bare Fastify route
// of bench/constant-server.ts answering the same bytes, with the server's CPU per request.
// Usage: npx tsx bench/revisions.ts [--commits 1000] [--cold 10] [--settle 1000] [--requests 50] [--duration 5]
//        [--connections 4] [--database-url URL]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { spawnServer, startBenchServer } from '../scripts/spawn-server.ts';
import { cpuMicros } from './process-cpu.ts';

/**
 * CPU time of process `pid` (each thread's, in nanoseconds: the render pool's workers are threads) and of its
 * children it has waited for (the git processes, in 10 ms ticks: Linux counts them no finer), in microseconds.
 */
function cpuWithChildren(pid: number): number {
  let nanos = 0;
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      nanos += Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended meanwhile.
    }
  }
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return nanos / 1000 + ((Number(fields[13]) + Number(fields[14])) * 1e6) / 100;
}

const { values } = parseArgs({
  options: {
    commits: { type: 'string', default: '1000' },
    cold: { type: 'string', default: '10' },
    settle: { type: 'string', default: '1000' },
    requests: { type: 'string', default: '50' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '4' },
    'database-url': { type: 'string' },
  },
});
const TOKEN = 'bench-root-token-0123456789abcdef';
const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };

async function api(url: string, method: string, route: string, body: unknown) {
  const res = await fetch(`${url}/api/v4${route}`, { method, headers, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${route}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
}

/** The file at commit `n`: 400 lines, line n % 400 naming n; a `rewrite` replaces lines 100-299. */
const fileAt = (n: number, rewrite?: string) =>
  Array.from({ length: 400 }, (_, i) =>
    rewrite && i >= 100 && i < 300
      ? `export const value${i} = compute(${i}, '${rewrite}'); // line ${i}`
      : `export const value${i} = ${i === n % 400 ? `'revision ${n}'` : i}; // line ${i}`,
  ).join('\n');

async function timed(url: string) {
  const start = performance.now();
  const res = await fetch(url);
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return { ms: performance.now() - start, body, headers: Object.fromEntries(res.headers) };
}

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const ms = (x: number) => x.toFixed(1);

async function rate(url: string, pid: number) {
  const before = cpuMicros(pid);
  const r = await autocannon({ url, connections: Number(values.connections), duration: Number(values.duration) });
  if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  const cpu = Math.round((cpuMicros(pid) - before) / r.requests.total);
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, cpu };
}

const commits = Number(values.commits);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-revisions-'));
const server = await startBenchServer({ dataDir, token: TOKEN, databaseUrl: values['database-url'] });
try {
  const project = await api(server.url, 'POST', '/projects', { path: 'history', visibility: 'public' });
  const snippet = await api(server.url, 'POST', `/projects/${project.id}/snippets`, {
    title: 'A long history',
    visibility: 'public',
    files: [{ file_path: 'values.js', content: fileAt(0) }],
  });
  const made = performance.now();
  for (let n = 1; n < commits; n++)
    await api(server.url, 'PUT', `/projects/${project.id}/snippets/${snippet.id}`, {
      files: [{ action: 'update', file_path: 'values.js', content: fileAt(n) }],
    });
  console.log(`${commits} commits made through the API in ${((performance.now() - made) / 1000).toFixed(1)} s`);

  const list = `${snippet.web_url}/revisions`;
  type Views = { list: number[]; diff: number[]; listCpu: number[]; diffCpu: number[]; writeCpu: number[] };
  const views = (): Views => ({ list: [], diff: [], listCpu: [], diffCpu: [], writeCpu: [] });
  const cold = { now: views(), settled: views() };
  let head = '';
  let changes = 0;
  // Alternately: the pages right after the write, and --settle ms after it.
  for (let round = 0; round < 2 * Number(values.cold); round++) {
    const into = round % 2 ? cold.settled : cold.now;
    let cpu = cpuWithChildren(server.pid);
    await api(server.url, 'PUT', `/projects/${project.id}/snippets/${snippet.id}`, {
      files: [{ action: 'update', file_path: 'values.js', content: fileAt(commits - 1, `rewrite ${round}`) }],
    });
    changes++;
    if (round % 2) await new Promise((resolve) => setTimeout(resolve, Number(values.settle)));
    into.writeCpu.push((cpuWithChildren(server.pid) - cpu) / 1000);
    cpu = cpuWithChildren(server.pid);
    const first = await timed(list);
    into.listCpu.push((cpuWithChildren(server.pid) - cpu) / 1000);
    [, head] = /href="[^"]*\/revisions\/([0-9a-f]{40})"/.exec(first.body)!;
    cpu = cpuWithChildren(server.pid);
    const diff = await timed(`${list}/${head}`);
    into.diffCpu.push((cpuWithChildren(server.pid) - cpu) / 1000);
    if (!diff.body.includes('+200</span> <span class="minus">−200')) throw new Error('not a 200-line change');
    if (!diff.body.includes('<tr class="added">')) throw new Error('the diff is not shown');
    into.list.push(first.ms);
    into.diff.push(diff.ms);
  }
  const summary = (xs: number[]) => `p50 ${ms(quantile(xs, 0.5))}, max ${ms(Math.max(...xs))} ms`;
  // The first round also built the cache repository and started the render pool: the others, alone.
  const mean = (xs: number[]) => ms(xs.slice(1).reduce((a, b) => a + b, 0) / (xs.length - 1));
  for (const [when, v] of [
    ['right after each of', cold.now],
    [`${values.settle} ms after each of`, cold.settled],
  ] as const) {
    console.log(`\nNot seen before, ${when} ${values.cold} new 200-line changes (wall):`);
    console.log(`- revisions page: ${summary(v.list)} (the first ${ms(v.list[0])})`);
    console.log(`- diff page: ${summary(v.diff)} (the first ${ms(v.diff[0])})`);
    console.log(
      `- CPU of the server (its threads) and its git processes (10 ms ticks), mean of all but the first: revisions page ${mean(v.listCpu)} ms, diff page ${mean(v.diffCpu)} ms, the write ${mean(v.writeCpu)} ms (first: ${ms(v.listCpu[0])}, ${ms(v.diffCpu[0])}, ${ms(v.writeCpu[0])} ms)`,
    );
  }
  // A snippet whose diffs nobody looked at: nothing is prepared after its writes, so its revisions page after
  // a new commit is worked out at that view, from the rows (or by git where they cannot tell).
  const other = await api(server.url, 'POST', `/projects/${project.id}/snippets`, {
    title: 'Nobody looks at its diffs',
    visibility: 'public',
    files: [{ file_path: 'values.js', content: fileAt(0) }],
  });
  for (let n = 1; n < 30; n++)
    await api(server.url, 'PUT', `/projects/${project.id}/snippets/${other.id}`, {
      files: [{ action: 'update', file_path: 'values.js', content: fileAt(n) }],
    });
  await timed(`${other.web_url}/revisions`);
  const unwatched = { list: [] as number[], cpu: [] as number[] };
  for (let round = 0; round < Number(values.cold); round++) {
    await api(server.url, 'PUT', `/projects/${project.id}/snippets/${other.id}`, {
      files: [{ action: 'update', file_path: 'values.js', content: fileAt(29, `rewrite ${round}`) }],
    });
    const cpu = cpuWithChildren(server.pid);
    unwatched.list.push((await timed(`${other.web_url}/revisions`)).ms);
    unwatched.cpu.push((cpuWithChildren(server.pid) - cpu) / 1000);
  }
  console.log(
    `\nNot seen before, right after each of ${values.cold} new 200-line changes of a snippet whose diffs nobody looked at (30 commits before): revisions page ${summary(unwatched.list)}, CPU mean ${ms(unwatched.cpu.reduce((a, b) => a + b, 0) / unwatched.cpu.length)} ms\n`,
  );
  const total = commits + changes;
  const lastPage = Math.ceil(total / 20);
  const rows: [string, string][] = [
    [`revisions, first page of ${total} commits`, list],
    [`revisions, page ${lastPage} (the last)`, `${list}?page=${lastPage}`],
    ['diff of a 200-line change (+200 -200)', `${list}/${head}`],
    ['the snippet page (for comparison)', snippet.web_url],
  ];

  console.log(
    `| page seen before (${values['database-url'] ? 'PostgreSQL' : 'SQLite'}), ${values.requests} requests one at a time | p50 ms | p90 ms | max ms | bytes |`,
  );
  console.log('|---|---|---|---|---|');
  const answers = [];
  for (const [name, url] of rows) {
    const times: number[] = [];
    let last: Awaited<ReturnType<typeof timed>> | undefined;
    for (let i = 0; i < Number(values.requests); i++) {
      last = await timed(url);
      times.push(last.ms);
    }
    answers.push({ status: 200, headers: last!.headers, body: last!.body });
    console.log(
      `| ${name} | ${ms(quantile(times, 0.5))} | ${ms(quantile(times, 0.9))} | ${ms(Math.max(...times))} | ${last!.body.length} |`,
    );
  }

  // The same answers (status, headers, bytes), served by bare Fastify: what sending them costs alone.
  const replayFile = path.join(dataDir, 'replay.json');
  fs.writeFileSync(
    replayFile,
    JSON.stringify(answers.map((a) => ({ ...a, headers: { ...a.headers, 'content-encoding': undefined } }))),
  );
  const baseline = await spawnServer({ ...process.env, BENCH_REPLAY_FILE: replayFile }, ['bench/constant-server.ts']);
  try {
    console.log(
      `\n| page, ${values.connections} connections, ${values.duration} s | snippetd req/s | p50 / p99 ms | CPU µs/req | same answer from bare Fastify req/s | its CPU µs/req |`,
    );
    console.log('|---|---|---|---|---|---|');
    for (const [i, [name, url]] of rows.entries()) {
      const ours = await rate(url, server.pid);
      const bare = await rate(`${baseline.url}/replay/${i}`, baseline.child.pid!);
      console.log(`| ${name} | ${ours.rps} | ${ours.p50} / ${ours.p99} | ${ours.cpu} | ${bare.rps} | ${bare.cpu} |`);
    }
  } finally {
    baseline.child.kill('SIGTERM');
  }
} finally {
  server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
