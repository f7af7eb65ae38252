// The snippet lists at scale (issue 29): 100,000 personal snippets by 1,000 users and 100,000 project snippets
// in 100 projects, rows inserted directly (a list reads rows, paths and authors, never git). Then, answered in
// process (app.inject: the server's own work, no sockets), the first, a middle and the last page of
// GET /snippets/public, GET /snippets/all (a member of 10 projects, an administrator) and GET /snippets for a
// user with 10,000 snippets, and the explore page; each the p50 of repeated requests, and the CPU time per
// request of this process and of the PostgreSQL server processes serving its connections (on a shared
// machine the times move with everyone else's work; the CPU far less). On SQLite a query runs on the event
// loop, so its time is time every other request waits.
//
// Each request is first sent --warmup times unmeasured, as a running server has sent it before: the first
// answers of a kind pay V8's compilation (on background threads this process's CPU counts) and cold caches.
//
// Every request asks a URL of its own (bench/unkept.ts), so that what is measured is a list's work, not a kept
// answer (src/http/kept-answers.ts).
//
// With --over-http SECONDS, each request is also sent over a socket from another process for that long (wrk,
// one connection, one request at a time), which measures what a client waits for without app.inject's own
// work in this process: its p50 is the last column.
//
//   npx tsx bench/snippet-lists.ts [--repeat 21] [--warmup 20] [--over-http 3] [--database-url postgres://postgres@127.0.0.1:5432/test]
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runWrk } from './wrk.ts';
import { unkept, unkeptWrkScript } from './unkept.ts';
import { sql } from 'kysely';
import { insertUserToken, insertUsersAndProjects, LEVELS } from './bulk-load.ts';
import { inProcessApp } from './in-process-app.ts';
import { cpuMicros } from './process-cpu.ts';
import { refreshPlannerStatistics } from '../src/storage/db/statistics.ts';

const { values } = parseArgs({
  options: {
    repeat: { type: 'string', default: '21' },
    warmup: { type: 'string', default: '20' },
    'over-http': { type: 'string' },
    'database-url': { type: 'string' },
  },
});
const REPEAT = Number(values.repeat);
const WARMUP = Number(values.warmup);
const OVER_HTTP_S = values['over-http'] ? Number(values['over-http']) : null;
const unkeptScript = OVER_HTTP_S
  ? unkeptWrkScript(fs.mkdtempSync(path.join(os.tmpdir(), 'snippet-lists-')))
  : undefined;

const USERS = 1000;
const PERSONAL = 100_000;
const PROJECTS = 100;
const IN_PROJECTS = 100_000;
const PROLIFIC = 10_000; // the snippets of user 1 among the personal ones
const TOKEN = 'bench-snippet-lists-token-0123456789';

const { app, close, schema } = await inProcessApp({
  name: 'lists',
  token: TOKEN,
  databaseUrl: values['database-url'],
  keep: !!process.env.KEEP,
});
const db = app.store.kysely;
try {
  const now = new Date().toISOString();
  const started = performance.now();
  const firstUser = await db.transaction().execute(async (tx) => {
    // user0 is a member of 10 projects, private ones among them.
    const { firstUser, projectIds } = await insertUsersAndProjects(tx, {
      users: USERS,
      projects: PROJECTS,
      memberOf: 10,
      now,
    });
    // Interleaved, as they would be made: each 1,000 ids hold personal and project snippets.
    const total = PERSONAL + IN_PROJECTS;
    for (let i = 0; i < total; i += 500) {
      const rows = Array.from({ length: 500 }, (_, j) => {
        const n = i + j;
        const personal = n % 2 === 0;
        const k = Math.floor(n / 2);
        return {
          project_id: personal ? null : projectIds[k % PROJECTS],
          author_id: personal && k < PROLIFIC ? firstUser : firstUser + (k % USERS),
          title: `snippet ${n}`,
          description: null,
          visibility: LEVELS[n % 3],
          file_name: 'a.rb',
          content: '',
          head_commit: null,
          default_branch: 'main',
          created_at: new Date(Date.parse(now) - (total - n) * 1000).toISOString(),
          updated_at: now,
        };
      });
      const ids = await tx.insertInto('snippets').values(rows).returning('id').execute();
      await tx
        .insertInto('snippet_files')
        .values(ids.map(({ id }) => ({ snippet_id: id, path: 'a.rb', blob_id: 'b'.repeat(40), size: 10 })))
        .execute();
    }
    return firstUser;
  });
  // As autovacuum leaves a table that has settled: PostgreSQL reads an index alone only for pages VACUUM
  // has marked all-visible.
  if (app.store.db.dialect === 'postgres') await sql`VACUUM ANALYZE snippets, snippet_files`.execute(db);
  else await refreshPlannerStatistics(app.store.db);
  console.log(`loaded in ${((performance.now() - started) / 1000).toFixed(1)} s (${app.store.db.dialect})`);

  const userToken = 'bench-snippet-lists-user0-token-01';
  await insertUserToken(db, firstUser, userToken);

  // The server processes of this app's connections (named after its schema by in-process-app.ts).
  const serverPids = async () =>
    schema === null
      ? []
      : (
          await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE application_name = ${schema}`.execute(db)
        ).rows.map((r) => r.pid);
  const serverCpu = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
  const origin = OVER_HTTP_S
    ? await app
        .listen({ host: '127.0.0.1', port: 0 })
        .then(() => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`)
    : null;
  /** p50 ms of `url` sent over HTTP by wrk (asynchronously: this process serves it meanwhile). */
  const overHttp = async (url: string, token: string | null) =>
    (
      await runWrk({
        url: `${origin}${url}`,
        headers: token ? { 'PRIVATE-TOKEN': token } : {},
        connections: 1,
        seconds: OVER_HTTP_S!,
        script: unkeptScript,
      })
    ).medianMs;
  const time = async (url: string, token: string | null) => {
    const headers = token ? { 'private-token': token } : {};
    const times: number[] = [];
    let status = 0;
    let count = 0;
    // Each a URL of its own (bench/unkept.ts): measured is the work of a list, not a kept answer.
    for (let i = 0; i < WARMUP; i++) await app.inject({ method: 'GET', url: unkept(url), headers });
    const pids = await serverPids();
    const cpu = process.cpuUsage();
    const server = serverCpu(pids);
    for (let i = 0; i < REPEAT; i++) {
      const t = performance.now();
      const res = await app.inject({ method: 'GET', url: unkept(url), headers });
      times.push(performance.now() - t);
      status = res.statusCode;
      count = url.startsWith('/api/') ? res.json().length : res.body.length;
    }
    const used = process.cpuUsage(cpu);
    const nodeCpu = (used.user + used.system) / 1000 / REPEAT;
    const dbCpu = (serverCpu(pids) - server) / 1000 / REPEAT;
    times.sort((a, b) => a - b);
    const http = origin ? await overHttp(url, token) : null;
    return {
      p50: times[Math.floor(times.length / 2)],
      max: times[times.length - 1],
      status,
      count,
      nodeCpu,
      dbCpu,
      http,
    };
  };
  const cases: [string, string, string | null][] = [];
  for (const [name, list, token, items] of [
    ['GET /snippets/public', '/api/v4/snippets/public', TOKEN, PERSONAL / 3],
    ['GET /snippets/all (member)', '/api/v4/snippets/all', userToken, 0],
    ['GET /snippets/all (admin)', '/api/v4/snippets/all', TOKEN, PERSONAL + IN_PROJECTS],
    ['GET /snippets (10,000 of theirs)', '/api/v4/snippets', userToken, PROLIFIC + IN_PROJECTS / USERS],
  ] as [string, string, string, number][]) {
    cases.push([`${name}, first page`, `${list}?per_page=20&page=1`, token]);
    if (items > 0) {
      const last = Math.floor(items / 20);
      cases.push([`${name}, page ${Math.floor(last / 2)}`, `${list}?per_page=20&page=${Math.floor(last / 2)}`, token]);
      cases.push([`${name}, page ${last}`, `${list}?per_page=20&page=${last}`, token]);
    }
  }
  cases.push(['/explore/snippets (anonymous)', '/explore/snippets', null]);
  cases.push(['/explore/snippets?before=100000 (anonymous)', '/explore/snippets?before=100000', null]);
  cases.push(['GET /snippets/:id (personal, public)', '/api/v4/snippets/1', null]);
  cases.push(['GET /projects/:id/snippets (member, public project)', '/api/v4/projects/1/snippets', userToken]);
  const db_ = schema === null ? '' : ' | PostgreSQL CPU ms';
  const http_ = OVER_HTTP_S ? ' | p50 ms over HTTP (wrk, 1 connection)' : '';
  const columns = 6 + (db_ ? 1 : 0) + (http_ ? 1 : 0);
  console.log(`| request | status | items | p50 ms | max ms | Node CPU ms${db_}${http_} |\n|${'---|'.repeat(columns)}`);
  for (const [name, url, token] of cases) {
    const r = await time(url, token);
    const dbCpu = schema === null ? '' : ` | ${r.dbCpu.toFixed(2)}`;
    const http = r.http === null ? '' : ` | ${r.http.toFixed(2)}`;
    console.log(
      `| ${name} | ${r.status} | ${r.count} | ${r.p50.toFixed(2)} | ${r.max.toFixed(2)} | ${r.nodeCpu.toFixed(2)}${dbCpu}${http} |`,
    );
  }
} finally {
  await close();
}
