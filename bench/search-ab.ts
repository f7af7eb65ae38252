// Before/after of search on one database, robust to a busy machine: the requests of bench/search.ts
// answered in process by the app of a source tree (a worktree of an older commit, or this one) over the
// data bench/search.ts kept (KEEP=1 prints its data directory, and on PostgreSQL its schema: give the
// database's URL and the schema then); run it once per tree, in turn. Per
// request, after a warm-up: the p50, how long the event loop was busy (what every other request waits for: a
// query run on it counts, one in a worker thread does not) and the CPU of the whole process (its threads
// included, and on PostgreSQL the server processes of its connections); then the event loop's delay over the run.
//
//   npx tsx bench/search-ab.ts <source tree> <kept data directory> [--repeat 21]
//   npx tsx bench/search-ab.ts <source tree> <kept data directory> --database-url postgres://…/db --schema bench_search_…
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { cpuMicros } from './process-cpu.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    repeat: { type: 'string', default: '21' },
    'database-url': { type: 'string' },
    schema: { type: 'string' },
    terms: { type: 'string' },
  },
});
const [tree, dir] = positionals.map((p) => path.resolve(p));
const REPEAT = Number(values.repeat);
// bench/search.ts's tokens and terms (others with --terms 'a|b|c').
const ADMIN = 'bench-search-root-token-0123456789';
const MEMBER = 'bench-search-user0-token-0123456789';
const TERMS = values.terms?.split('|') ?? ['function', '(42,', 'xylophone'];

const { buildApp } = await import(path.join(tree, 'src/app.ts'));
const { defaults } = await import(path.join(tree, 'src/config.ts'));
let databaseUrl = `sqlite:${path.join(dir, 'snippetd.sqlite3')}`;
if (values['database-url']) {
  const url = new URL(values['database-url']);
  url.searchParams.set('options', `-c search_path=${values.schema}`);
  // Names its connections, so that their server processes' CPU is counted too.
  url.searchParams.set('application_name', `search-ab-${process.pid}`);
  databaseUrl = url.toString();
}
const app = await buildApp({ ...defaults(dir), databaseUrl, logLevel: 'silent' });
const cases: [string, string, string | null][] = [];
for (const [who, token] of [
  ['admin', ADMIN],
  ['member', MEMBER],
] as const)
  for (const scope of ['snippet_titles', 'snippet_blobs'])
    for (const term of TERMS)
      cases.push([
        `${scope} ${term} (${who})`,
        `/api/v4/search?scope=${scope}&search=${encodeURIComponent(term)}`,
        token,
      ]);
for (const term of TERMS) cases.push([`page ${term}`, `/search?search=${encodeURIComponent(term)}`, null]);
const get = (url: string, token: string | null) =>
  app.inject({ method: 'GET', url, headers: token ? { 'private-token': token } : {} });
for (const [, url, token] of cases) await get(url, token);
const serverPids = values['database-url']
  ? (
      await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity
        WHERE application_name = ${`search-ab-${process.pid}`}`.execute(app.store.kysely)
    ).rows.map((r) => r.pid)
  : [];
const serverCpu = () => serverPids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
const db = serverPids.length ? ' PostgreSQL CPU ms |' : '';

const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
console.log(`| request | p50 ms | event loop busy ms | CPU ms |${db}\n|---|---|---|---|${db ? '---|' : ''}`);
for (const [name, url, token] of cases) {
  const times: number[] = [];
  const busy = performance.eventLoopUtilization();
  const cpu = process.cpuUsage();
  const server = serverCpu();
  for (let i = 0; i < REPEAT; i++) {
    const t = performance.now();
    await get(url, token);
    times.push(performance.now() - t);
  }
  const loopBusy = performance.eventLoopUtilization(busy).active / REPEAT;
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  const p50 = times[times.length >> 1];
  const cpuMs = (used.user + used.system) / 1000 / REPEAT;
  const dbMs = db ? ` ${((serverCpu() - server) / 1000 / REPEAT).toFixed(2)} |` : '';
  console.log(`| ${name} | ${p50.toFixed(2)} | ${loopBusy.toFixed(2)} | ${cpuMs.toFixed(2)} |${dbMs}`);
}
loop.disable();
console.log(
  `event loop: longest delay ${(loop.max / 1e6).toFixed(1)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms`,
);
await app.close();
