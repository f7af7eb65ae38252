// Load script for git repositories kept as rows (migration 0005). Measures, on SQLite by default or on a
// fresh PostgreSQL database made for the run (--database-url names the server; the database is created
// beside the one named there and dropped at the end):
//  1. through the API of a `snippetd serve` process, one client, sequential requests: creating a 3-file
//     snippet and updating one file of a snippet, p50 / p99;
//  2. a snippet updated --history times (10,000), written in-process through the domain's updateSnippet
//     (one transaction per update, as the API does): raw of a file at its first commit against raw at main
//     (p50 over alternating requests after a warm-up), `git clone` of it over HTTP from a freshly started
//     server (cold serving cache), and the database size of its rows;
//  3. --snippets (100,000) one-file snippets, written in-process through the domain's createSnippet (one
//     transaction each; the seeding connection does not wait for the disk, see `seedingUrl`): database size,
//     files under the data directory, and create / GET p50 at --small (1,000) snippets and at --snippets.
// The server runs as its own process; the seeding runs while no server is up.
// Usage: npx tsx bench/storage.ts [--quick] [--database-url postgres://postgres@127.0.0.1:5432/test]
//   [--creates 300] [--updates 300] [--history 10000] [--small 1000] [--snippets 100000]
//   [--requests 2000] [--clones 3] [--concurrency 4] [--keep] [--client http|fetch] [--warmup 300]
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { compiledCli, exited, spawnServer, withoutRateLimits } from '../scripts/spawn-server.ts';
import { closeConnections, requestText } from './paced-load.ts';
import { openDatabase, type Db } from '../src/storage/db/database.ts';
import { createStore, type Store } from '../src/storage/db/store.ts';
import { createSnippet } from '../src/domain/snippets/create.ts';
import { findVisibleSnippetState } from '../src/domain/snippets/reads.ts';
import { updateSnippet } from '../src/domain/snippets/update.ts';
import { findReadableProject } from '../src/domain/projects.ts';
import { acceptEverything } from '../src/domain/spam.ts';
import type { Snippet, User } from '../src/storage/db/schema.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    creates: { type: 'string' },
    updates: { type: 'string' },
    history: { type: 'string' },
    small: { type: 'string' },
    snippets: { type: 'string' },
    requests: { type: 'string' },
    clones: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    keep: { type: 'boolean', default: false },
    'database-url': { type: 'string' },
    client: { type: 'string', default: 'http' },
    warmup: { type: 'string', default: '300' },
  },
});
const quick = values.quick;
const count = (name: keyof typeof values, full: number, short: number) =>
  Number(values[name] ?? (quick ? short : full));
const CREATES = count('creates', 300, 50);
const UPDATES = count('updates', 300, 50);
const HISTORY = count('history', 10_000, 500);
const SMALL = count('small', 1_000, 1_000);
const SNIPPETS = count('snippets', 100_000, 5_000);
const REQUESTS = count('requests', 2_000, 300);
const CLONES = count('clones', 3, 1);
const CONCURRENCY = Number(values.concurrency);
/**
 * Unmeasured creates (and updates) before the measured ones. V8 optimises the write path over its first few
 * hundred requests: after 20, the p50 of the next 300 still counted unoptimised code (RESULTS.md).
 */
const WARMUP = Number(values.warmup);
if (values.client !== 'http' && values.client !== 'fetch') throw new Error('--client is http or fetch');

const TOKEN = 'bench-root-token-0123456789abcdef';
const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };
const run = promisify(execFile);
const MB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const log = (line: string) => console.log(line);

// --- the database --------------------------------------------------------------------------------------------

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-storage-'));
const sqliteFile = path.join(dataDir, 'snippetd.sqlite3');
const adminUrl = values['database-url'];
const pgName = `benchstorage_${process.pid}_${crypto.randomBytes(3).toString('hex')}`;
let databaseUrl = `sqlite:${sqliteFile}`;
if (adminUrl) {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pgName}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${pgName}`;
  databaseUrl = url.toString();
}
const dbName = adminUrl ? 'PostgreSQL' : 'SQLite';

/**
 * The seeding connection trades durability for speed, nothing else: SQLite with synchronous = OFF, PostgreSQL
 * with synchronous_commit = off. The rows written are the ones the API would write.
 */
function seedingUrl(): string {
  if (!adminUrl) return databaseUrl;
  const url = new URL(databaseUrl);
  url.searchParams.set('options', '-c synchronous_commit=off');
  return url.toString();
}

async function openSeeding(): Promise<{ db: Db; store: Store }> {
  const db = openDatabase(seedingUrl());
  if (db.dialect === 'sqlite') await sql`PRAGMA synchronous = OFF`.execute(db.kysely);
  return { db, store: createStore(db) };
}

/** The database's size: the SQLite file after a checkpoint, or pg_total_relation_size summed over the tables. */
async function databaseSize(db: Db): Promise<{ total: number; tables: Map<string, number> }> {
  const tables = new Map<string, number>();
  if (db.dialect === 'sqlite') {
    await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db.kysely);
    const rows = await sql<{ name: string; bytes: number }>`
      SELECT m.tbl_name AS name, SUM(s.pgsize) AS bytes FROM dbstat s JOIN sqlite_schema m ON m.name = s.name
      GROUP BY m.tbl_name`.execute(db.kysely);
    for (const r of rows.rows) tables.set(r.name, Number(r.bytes));
    return { total: fs.statSync(sqliteFile).size, tables };
  }
  const rows = await sql<{ name: string; bytes: string }>`
    SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`.execute(
    db.kysely,
  );
  let total = 0;
  for (const r of rows.rows) {
    tables.set(r.name, Number(r.bytes));
    total += Number(r.bytes);
  }
  return { total, tables };
}

const topTables = (tables: Map<string, number>) =>
  [...tables]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([name, bytes]) => `${name} ${MB(bytes)}`)
    .join(', ');

function filesUnder(dir: string): number {
  let n = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) if (entry.isFile()) n++;
  return n;
}

// --- the server and the client ---------------------------------------------------------------------------------

async function startServer() {
  const env = {
    ...process.env,
    SNIPPETD_DATA_DIR: dataDir,
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
    SNIPPETD_DATABASE_URL: databaseUrl,
  };
  const { url, child } = await spawnServer(env, [compiledCli(), 'serve', '--port', '0']);
  await withoutRateLimits(url, TOKEN);
  return {
    url,
    stop: async () => {
      const done = exited(child);
      child.kill('SIGTERM');
      await done;
    },
  };
}

/**
 * A request through the client --client names: node:http over kept-alive connections (bench/paced-load.ts),
 * or fetch, which this script used before 2026-11-25 and which added 0.05-0.7 ms to a write request here.
 */
async function send(url: string, method: string, extra: Record<string, string>, body?: string) {
  if (values.client === 'http') return requestText(new URL(url), method, extra, body);
  const res = await fetch(url, { method, headers: extra, body });
  return { status: res.status, text: await res.text() };
}

async function api(url: string, method: string, route: string, body?: unknown) {
  const res = await send(
    `${url}/api/v4${route}`,
    method,
    headers,
    body === undefined ? undefined : JSON.stringify(body),
  );
  if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${res.text}`);
  return res.text ? JSON.parse(res.text) : undefined;
}

/** Milliseconds of `n` sequential calls after `warm` unmeasured ones, sorted. */
async function timed(n: number, warm: number, call: (i: number) => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n + warm; i++) {
    const t0 = performance.now();
    await call(i);
    if (i >= warm) times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const ms = (x: number) => x.toFixed(2);

async function get(url: string, expect = 200): Promise<string> {
  const res = await send(url, 'GET', { 'PRIVATE-TOKEN': TOKEN });
  if (res.status !== expect) throw new Error(`GET ${url}: ${res.status} ${res.text.slice(0, 200)}`);
  return res.text;
}

const threeFiles = (i: number) => [
  { file_path: 'main.rb', content: `puts ${i}\n`.repeat(20) },
  { file_path: 'lib/helper.rb', content: `def helper_${i}; end\n`.repeat(30) },
  { file_path: 'README.md', content: `# Snippet ${i}\n\nSome text.\n`.repeat(10) },
];

async function gitClone(cloneUrl: string): Promise<{ ms: number; commits: number }> {
  const target = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-clone-'));
  try {
    const t0 = performance.now();
    await run('git', ['clone', '--quiet', cloneUrl, target], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    const elapsed = performance.now() - t0;
    const { stdout } = await run('git', ['-C', target, 'rev-list', '--count', 'HEAD']);
    return { ms: elapsed, commits: Number(stdout.trim()) };
  } finally {
    fs.rmSync(target, { recursive: true, force: true });
  }
}

// --- seeding in-process -----------------------------------------------------------------------------------------

const meta = { userAgent: 'bench/storage.ts', ip: '127.0.0.1' };

async function seedContext(store: Store, projectId: number) {
  const root = (await store.users.findByUsername('root')) as User;
  const ctx = await findReadableProject(store, root, String(projectId));
  return { root, ctx };
}

/**
 * Creates one-file snippets in the project until it has `target` of them; answers the seconds taken and the
 * lowest and highest snippet id in the project.
 */
async function seedSnippets(projectId: number, have: number, target: number) {
  const { db, store } = await openSeeding();
  const { root, ctx } = await seedContext(store, projectId);
  const deps = { store, spam: acceptEverything };
  const t0 = performance.now();
  let next = have;
  const worker = async () => {
    while (next < target) {
      const i = next++;
      await createSnippet(
        deps,
        ctx,
        root,
        {
          title: `bulk ${i}`,
          visibility: 'public',
          files: [{ file_path: `snippet_${i}.txt`, content: `snippet ${i}\n${'x'.repeat(100)}\n` }],
        },
        meta,
      );
    }
  };
  await Promise.all(Array.from({ length: db.dialect === 'sqlite' ? 1 : CONCURRENCY }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const range = await sql<{ low: number; high: number }>`
    SELECT MIN(id) AS low, MAX(id) AS high FROM snippets WHERE project_id = ${projectId}`.execute(db.kysely);
  await db.close();
  return { seconds, low: Number(range.rows[0].low), high: Number(range.rows[0].high) };
}

// --- the run -----------------------------------------------------------------------------------------------------

const figures: string[] = [];
const figure = (name: string, value: string) => {
  figures.push(`| ${name} | ${value} |`);
  log(`${name}: ${value}`);
};

log(`${dbName}, ${quick ? 'quick' : 'full'} run; data dir ${dataDir}; load average at start ${load()}`);
log(
  `creates ${CREATES}, updates ${UPDATES}, history ${HISTORY}, small ${SMALL}, snippets ${SNIPPETS}, requests ${REQUESTS}, clones ${CLONES}`,
);
try {
  // 1. Writes through the API.
  let server = await startServer();
  let benchProject: any;
  let historyProject: any;
  let bulkProject: any;
  try {
    benchProject = await api(server.url, 'POST', '/projects', { path: 'bench', visibility: 'public' });
    historyProject = await api(server.url, 'POST', '/projects', { path: 'history', visibility: 'public' });
    bulkProject = await api(server.url, 'POST', '/projects', { path: 'bulk', visibility: 'public' });
    let last = 0;
    const creates = await timed(CREATES, WARMUP, async (i) => {
      last = (await api(server.url, 'POST', `/projects/${benchProject.id}/snippets`, {
        title: `bench ${i}`,
        visibility: 'public',
        files: threeFiles(i),
      }).then((s) => s.id)) as number;
    });
    figure(
      `create a 3-file snippet through the API, ${CREATES} sequential after ${WARMUP} unmeasured (p50 / p99)`,
      `${ms(pct(creates, 50))} / ${ms(pct(creates, 99))} ms`,
    );
    const updates = await timed(UPDATES, WARMUP, async (i) => {
      await api(server.url, 'PUT', `/projects/${benchProject.id}/snippets/${last}`, {
        files: [{ action: 'update', file_path: 'main.rb', content: `puts ${i}\n`.repeat(21) }],
      });
    });
    figure(
      `update 1 file of a 3-file snippet through the API, ${UPDATES} sequential after ${WARMUP} unmeasured (p50 / p99)`,
      `${ms(pct(updates, 50))} / ${ms(pct(updates, 99))} ms`,
    );
  } finally {
    await server.stop();
  }

  // 2. A snippet with a long history, in-process.
  const seeding = await openSeeding();
  const before = await databaseSize(seeding.db);
  const { root, ctx } = await seedContext(seeding.store, historyProject.id);
  const deps = { store: seeding.store, spam: acceptEverything };
  let snippet: Snippet = await createSnippet(
    deps,
    ctx,
    root,
    { title: 'history', visibility: 'public', files: threeFiles(0) },
    meta,
  );
  const firstCommit = snippet.head_commit!;
  const t0 = performance.now();
  for (let i = 1; i <= HISTORY; i++) {
    ({ snippet } = await updateSnippet(
      deps,
      root,
      (await findVisibleSnippetState(seeding.store, root, ctx, snippet.id))!,
      { files: [{ action: 'update', file_path: 'main.rb', content: `puts ${i}\n`.repeat(20) }] },
      meta,
    ));
  }
  log(`${HISTORY} updates in-process through updateSnippet: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const after = await databaseSize(seeding.db);
  const repo = (await seeding.store.git.find('snippet', snippet.id))!;
  const rows =
    seeding.db.dialect === 'sqlite'
      ? await sql<{ n: number; bytes: number }>`
          SELECT COUNT(*) AS n, SUM(LENGTH(data) + LENGTH(oid) + 16) AS bytes FROM git_objects WHERE repository_id = ${repo.id}`.execute(
          seeding.db.kysely,
        )
      : await sql<{ n: number; bytes: number }>`
          SELECT COUNT(*) AS n, SUM(pg_column_size(o.*)) AS bytes FROM git_objects o WHERE repository_id = ${repo.id}`.execute(
          seeding.db.kysely,
        );
  const { n: objectCount, bytes: rowBytes } = rows.rows[0];
  figure(
    `snippet with ${HISTORY} updates: its git_objects rows (count, bytes of the rows)`,
    `${objectCount} rows, ${MB(Number(rowBytes))}`,
  );
  figure(
    `snippet with ${HISTORY} updates: database growth while writing it (${adminUrl ? 'pg_total_relation_size' : 'file after checkpoint'})`,
    `${MB(after.total - before.total)}`,
  );
  await seeding.db.close();

  // 3a. Snippets up to SMALL; measures at that size.
  const seeded = await seedSnippets(bulkProject.id, 0, SMALL);
  log(`${SMALL} one-file snippets in-process through createSnippet: ${seeded.seconds.toFixed(1)} s`);
  let ids = seeded;
  let have = SMALL;

  const cloneUrl = (url: string) => `${url}/${historyProject.path_with_namespace}/snippets/${snippet.id}.git`;
  const rawFirst = (url: string) =>
    `${url}/api/v4/projects/${historyProject.id}/snippets/${snippet.id}/files/${firstCommit}/main.rb/raw`;
  const rawMain = (url: string) =>
    `${url}/api/v4/projects/${historyProject.id}/snippets/${snippet.id}/files/main/main.rb/raw`;

  const measureAt = async (label: string) => {
    // Cold clones: each from a freshly started server, whose serving cache is empty.
    const clones: number[] = [];
    for (let c = 0; c < CLONES; c++) {
      const s = await startServer();
      try {
        const clone = await gitClone(cloneUrl(s.url));
        if (clone.commits !== HISTORY + 1) throw new Error(`clone has ${clone.commits} commits`);
        clones.push(clone.ms);
      } finally {
        await s.stop();
      }
    }
    server = await startServer();
    try {
      const url = server.url;
      const warm = await gitClone(cloneUrl(url));
      warm.ms = (await gitClone(cloneUrl(url))).ms;
      figure(
        `${label}: git clone of the ${HISTORY}-update snippet, cold node cache (fresh server), wall ms${CLONES > 1 ? ` (${CLONES} runs)` : ''}`,
        `${clones.map((x) => x.toFixed(0)).join(', ')} (then from the warm cache: ${warm.ms.toFixed(0)})`,
      );
      if ((await get(rawFirst(url))) !== `puts 0\n`.repeat(20)) throw new Error('raw at the first commit differs');
      // Alternating, so that load from elsewhere falls on both alike.
      const first: number[] = [];
      const main: number[] = [];
      for (let i = 0; i < REQUESTS + 200; i++) {
        for (const [list, target] of [
          [first, rawFirst(url)],
          [main, rawMain(url)],
        ] as const) {
          const t = performance.now();
          await get(target);
          if (i >= 200) list.push(performance.now() - t);
        }
      }
      first.sort((a, b) => a - b);
      main.sort((a, b) => a - b);
      figure(
        `${label}: raw of main.rb at the first commit vs at main, ${REQUESTS} each alternating after 200 warm-up (p50; ratio)`,
        `${ms(pct(first, 50))} vs ${ms(pct(main, 50))} ms; ${(pct(first, 50) / pct(main, 50)).toFixed(2)}×`,
      );
      // Create and GET in the project that holds the bulk of the snippets.
      const creates = await timed(Math.min(CREATES, 200), 20, async (i) => {
        await api(url, 'POST', `/projects/${bulkProject.id}/snippets`, {
          title: `measured ${i}`,
          visibility: 'public',
          files: [{ file_path: `measured_${i}.txt`, content: `measured ${i}\n${'x'.repeat(100)}\n` }],
        });
      });
      have += Math.min(CREATES, 200) + 20;
      figure(
        `${label}: create a 1-file snippet through the API (p50 / p99)`,
        `${ms(pct(creates, 50))} / ${ms(pct(creates, 99))} ms`,
      );
      // With --small 0 there are no bulk snippets to pick from (MIN and MAX of no rows are null).
      if (ids.high) {
        const pick = () => ids.low + Math.floor(Math.random() * (ids.high - ids.low + 1));
        const gets = await timed(REQUESTS, 100, async () => {
          const id = pick();
          await get(`${url}/api/v4/projects/${bulkProject.id}/snippets/${id}`);
        });
        const raws = await timed(REQUESTS, 100, async () => {
          const id = pick();
          await get(`${url}/api/v4/projects/${bulkProject.id}/snippets/${id}/raw`);
        });
        figure(
          `${label}: GET /projects/:id/snippets/:sid of a random snippet (p50 / p99)`,
          `${ms(pct(gets, 50))} / ${ms(pct(gets, 99))} ms`,
        );
        figure(
          `${label}: GET /projects/:id/snippets/:sid/raw of a random snippet (p50 / p99)`,
          `${ms(pct(raws, 50))} / ${ms(pct(raws, 99))} ms`,
        );
      }
      const cache = path.join(dataDir, 'cache');
      figure(
        `${label}: files under the data directory, server running, after the clones`,
        `${filesUnder(dataDir)} (${fs.existsSync(cache) ? filesUnder(cache) : 0} of them the serving cache of the cloned snippet)`,
      );
    } finally {
      await server.stop();
    }
  };

  await measureAt(`at ${SMALL} snippets`);

  // 3b. Snippets up to SNIPPETS.
  ids = await seedSnippets(bulkProject.id, have, SNIPPETS);
  log(`${SNIPPETS - have} more one-file snippets in-process through createSnippet: ${ids.seconds.toFixed(1)} s`);
  have = SNIPPETS;
  {
    const { db } = await openSeeding();
    const size = await databaseSize(db);
    const total = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM snippets`.execute(db.kysely);
    figure(
      `database at ${SNIPPETS} one-file snippets (${total.rows[0].n} snippets in all, with the ${HISTORY}-update one): ${adminUrl ? 'sum of pg_total_relation_size' : 'SQLite file after checkpoint'}`,
      `${MB(size.total)} (largest: ${topTables(size.tables)})`,
    );
    await db.close();
  }
  figure(`files under the data directory at ${SNIPPETS} snippets, no server running`, `${filesUnder(dataDir)}`);
  await measureAt(`at ${SNIPPETS} snippets`);
} finally {
  closeConnections();
  log(`load average at the end ${load()}`);
  log(`\n| measure (${dbName}${quick ? ', --quick' : ''}) | figure |\n|---|---|\n${figures.join('\n')}`);
  if (values.keep) log(`kept ${dataDir}${adminUrl ? ` and database ${pgName}` : ''}`);
  else {
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (adminUrl) {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE ${pgName} WITH (FORCE)`);
      await admin.end();
    }
  }
}
