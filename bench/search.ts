// Search at scale (issue 32): 100,000 snippets (half personal, half in 100 projects, a third of each level)
// with 300,000 files of eight lines of code-like text, rows and the search index inserted directly (search
// reads rows and the index, never git). Then, answered in process (app.inject: the server's own work, no
// sockets), GitLab's snippet_titles and snippetd's snippet_blobs for a common, a middle and a rare term, as an
// administrator and as a user who sees by level and membership, and the search page; each the p50 and max
// of repeated requests, with the event loop's longest delay over all of them. Per request also: how long the
// event loop was busy (what every other request waits for: a SQLite query run on it counts, one run in a
// worker thread does not), and the CPU of this process and (PostgreSQL) of the server processes of its
// connections, which others' work on a shared machine moves far less than the times. Bare Fastify
// answering a constant through app.inject, in the same run, is the floor.
//
//   npx tsx bench/search.ts [--repeat 21] [--database-url postgres://postgres@127.0.0.1:5432/test]
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { insertUserToken, insertUsersAndProjects, LEVELS } from './bulk-load.ts';
import { inProcessApp } from './in-process-app.ts';
import { cpuMicros } from './process-cpu.ts';
import { refreshPlannerStatistics } from '../src/storage/db/statistics.ts';

const { values } = parseArgs({
  options: { repeat: { type: 'string', default: '21' }, 'database-url': { type: 'string' } },
});
const REPEAT = Number(values.repeat);
const SNIPPETS = 100_000;
const FILES_PER_SNIPPET = 3;
const PROJECTS = 100;
const USERS = 1000;
const TOKEN = 'bench-search-root-token-0123456789';
const WORDS = 'alpha beta gamma delta value result index count total buffer stream parse render query'.split(' ');
/** In one file of two: the common term. In 20 files: the rare one. In 3,093 files (`(n % 97, `): a middle one. */
const COMMON = 'function';
const RARE = 'xylophone';
const MIDDLE = '(42,';

function fileText(n: number): string {
  const lines: string[] = [];
  for (let l = 0; l < 8; l++) {
    const a = WORDS[(n * 7 + l * 3) % WORDS.length];
    const b = WORDS[(n * 13 + l * 5) % WORDS.length];
    lines.push(`  let ${a}${l} = ${b}(${n % 97}, ${l});`);
  }
  if (n % 2 === 0) lines[2] = `${COMMON} ${WORDS[n % WORDS.length]}_${n % 1000}() {`;
  if (n % 15_000 === 7) lines[5] = `  // the ${RARE} case`;
  return `${lines.join('\n')}\n`;
}

const { app, close, schema } = await inProcessApp({
  name: 'search',
  token: TOKEN,
  databaseUrl: values['database-url'],
  keep: !!process.env.KEEP,
});
const db = app.store.kysely;
try {
  // Thousands of searches a minute by one user: GitLab's search limits (30 a minute) off for the measurement.
  await app.inject({
    method: 'PUT',
    url: '/api/v4/application/settings',
    headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
    payload: { search_rate_limit: 0, search_rate_limit_unauthenticated: 0 },
  });
  const now = Date.now();
  const started = performance.now();
  const firstUser = await db.transaction().execute(async (tx) => {
    const { firstUser, projectIds } = await insertUsersAndProjects(tx, {
      users: USERS,
      projects: PROJECTS,
      memberOf: 10,
      now: new Date(now).toISOString(),
    });
    for (let i = 0; i < SNIPPETS; i += 500) {
      const rows = Array.from({ length: 500 }, (_, j) => {
        const n = i + j;
        const at = new Date(now - (SNIPPETS - n) * 1000).toISOString();
        return {
          project_id: n % 2 === 0 ? null : projectIds[n % PROJECTS],
          author_id: firstUser + (n % USERS),
          title: n % 20_000 === 11 ? `the ${RARE} notes ${n}` : `${COMMON} snippet ${n}`,
          description: null,
          visibility: LEVELS[n % 3],
          file_name: 'a.rb',
          content: '',
          head_commit: null,
          default_branch: 'main',
          created_at: at,
          updated_at: at,
        };
      });
      const ids = (await tx.insertInto('snippets').values(rows).returning('id').execute()).map((r) => r.id);
      const files = ids.flatMap((id, j) =>
        ['a.rb', 'b.py', 'c.js'].slice(0, FILES_PER_SNIPPET).map((path, f) => ({ id, path, n: (i + j) * 3 + f })),
      );
      await tx
        .insertInto('snippet_files')
        .values(files.map((f) => ({ snippet_id: f.id, path: f.path, blob_id: 'b'.repeat(40), size: 200 })))
        .execute();
      await tx
        .insertInto('snippet_file_text')
        .values(files.map((f) => ({ snippet_id: f.id, path: f.path, content: fileText(f.n) })))
        .execute();
    }
    return firstUser;
  });
  if (app.store.db.dialect === 'postgres')
    await sql`VACUUM ANALYZE snippets, snippet_files, snippet_file_text`.execute(db);
  else await refreshPlannerStatistics(app.store.db);
  console.log(`loaded in ${((performance.now() - started) / 1000).toFixed(1)} s (${app.store.db.dialect})`);
  if (app.store.db.dialect === 'sqlite') {
    // SQLite indexes off the writes (src/storage/db/search-indexing.ts): searches are measured on the index.
    const indexing = performance.now();
    while ((await sql<{ n: number }>`SELECT count(*) AS n FROM search_index_queue`.execute(db)).rows[0].n > 0)
      await new Promise((resolve) => setTimeout(resolve, 500));
    console.log(`indexed in ${((performance.now() - indexing) / 1000).toFixed(1)} s`);
  }
  const userToken = 'bench-search-user0-token-0123456789';
  await insertUserToken(db, firstUser, userToken);

  const bare = Fastify();
  bare.get('/', async () => ({ ok: true }));
  await bare.ready();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  // The server processes of this app's connections (named after its schema by in-process-app.ts).
  const serverPids = async () =>
    schema === null
      ? []
      : (
          await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE application_name = ${schema}`.execute(db)
        ).rows.map((r) => r.pid);
  const serverCpu = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
  const time = async (inject: (typeof app)['inject'], url: string, token: string | null) => {
    const headers = token ? { 'private-token': token } : {};
    const times: number[] = [];
    let status = 0;
    let count = 0;
    let total = '';
    const pids = await serverPids();
    const cpu = process.cpuUsage();
    const server = serverCpu(pids);
    const loopUse = performance.eventLoopUtilization();
    for (let i = 0; i < REPEAT; i++) {
      const t = performance.now();
      const res = await inject({ method: 'GET', url, headers });
      times.push(performance.now() - t);
      status = res.statusCode;
      count = url.startsWith('/api/') ? res.json().length : (res.body.match(/class="search-result"/g) ?? []).length;
      total = String(res.headers['x-total'] ?? '');
    }
    const loopBusy = performance.eventLoopUtilization(loopUse).active / REPEAT;
    const used = process.cpuUsage(cpu);
    const nodeCpu = (used.user + used.system) / 1000 / REPEAT;
    const dbCpu = (serverCpu(pids) - server) / 1000 / REPEAT;
    times.sort((a, b) => a - b);
    const p50 = times[Math.floor(times.length / 2)];
    return { p50, max: times[times.length - 1], status, count, total, nodeCpu, dbCpu, loopBusy };
  };
  const cases: [string, string, string | null][] = [];
  for (const [who, token] of [
    ['admin', TOKEN],
    ['member of 10 projects', userToken],
  ] as const) {
    for (const scope of ['snippet_titles', 'snippet_blobs'])
      for (const term of [COMMON, MIDDLE, RARE])
        cases.push([
          `GET /search ${scope} "${term}" (${who})`,
          `/api/v4/search?scope=${scope}&search=${encodeURIComponent(term)}`,
          token,
        ]);
  }
  cases.push([`/search?search=${COMMON} (anonymous page)`, `/search?search=${COMMON}`, null]);
  cases.push([`/search?search=${MIDDLE} (anonymous page)`, `/search?search=${encodeURIComponent(MIDDLE)}`, null]);
  cases.push([`/search?search=${RARE} (anonymous page)`, `/search?search=${RARE}`, null]);
  const floor = await time(bare.inject.bind(bare) as never, '/', null);
  console.log(`bare Fastify constant: p50 ${floor.p50.toFixed(2)} ms, max ${floor.max.toFixed(2)} ms`);
  const db_ = schema === null ? '' : ' | PostgreSQL CPU ms';
  console.log(
    `| request | status | items | X-Total | p50 ms | max ms | event loop busy ms | Node CPU ms${db_} |\n|---|---|---|---|---|---|---|---|${db_ ? '---|' : ''}`,
  );
  loop.enable();
  for (const [name, url, token] of cases) {
    const r = await time(app.inject.bind(app), url, token);
    const dbCpu = schema === null ? '' : ` | ${r.dbCpu.toFixed(2)}`;
    console.log(
      `| ${name} | ${r.status} | ${r.count} | ${r.total} | ${r.p50.toFixed(2)} | ${r.max.toFixed(2)} | ${r.loopBusy.toFixed(2)} | ${r.nodeCpu.toFixed(2)}${dbCpu} |`,
    );
  }
  loop.disable();
  console.log(
    `event loop: longest delay ${(loop.max / 1e6).toFixed(1)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms`,
  );
  await bare.close();
} finally {
  await close();
}
