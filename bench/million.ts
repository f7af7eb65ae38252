// A million snippets (issue 31): N snippets (half personal, half in 100 projects, a third of each level; 1,000
// authors, user0 the author of one personal snippet in 25 and a member of 10 projects) loaded directly into
// the storage's tables in big transactions, as a create leaves them: the snippet row, its file's row (path,
// blob id, size) and its text in the search index, and its repository (the blob, tree and commit made as the
// create path makes them, and its branch). Raw is measured on a snippet created through the API too. Then,
// answered in process (app.inject: the server's own work, no sockets), each list's first, middle and last
// page, GET and raw of a snippet and create, and GET, raw and create on a fresh store of 1,000 snippets in the
// same run; bare Fastify answering a constant is the floor. Each: p50 and p95 of repeated requests (after one
// not counted); the longest the event loop was busy within one request (a SQLite query run on it holds it)
// and its longest delay while they ran (which also counts this process waiting for a core on a loaded
// machine); the CPU per request of this process (its threads included) and of the PostgreSQL server
// processes of its connections: on a shared machine the times move with everyone else's work, the CPU far
// less. On SQLite, the database's size after the load with its log checkpointed.
//
//   npx tsx bench/million.ts [--snippets 1000000] [--repeat 31] [--creates 101] [--database-url postgres://…/bench_million]
//   KEEP=1 keeps the loaded store (its path or schema is printed), for EXPLAIN or a profile afterwards.
import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { type Insertable, sql } from 'kysely';
import { insertUserToken, insertUsersAndProjects, LEVELS } from './bulk-load.ts';
import { inProcessApp } from './in-process-app.ts';
import { cpuMicros } from './process-cpu.ts';
import { unkept } from './unkept.ts';
import type { SnippetsTable } from '../src/storage/db/schema.ts';
import { refreshPlannerStatistics } from '../src/storage/db/statistics.ts';
import { ObjectWriter } from '../src/storage/git/objects.ts';
import { FIRST_WRITE, objectRows } from '../src/storage/git/repository.ts';

const { values } = parseArgs({
  options: {
    snippets: { type: 'string', default: '1000000' },
    small: { type: 'string', default: '1000' },
    repeat: { type: 'string', default: '31' },
    creates: { type: 'string', default: '101' },
    'database-url': { type: 'string' },
  },
});
const SNIPPETS = Number(values.snippets);
const REPEAT = Number(values.repeat);
const USERS = 1000;
const PROJECTS = 100;
const PER_PAGE = 20;
/** Rows per INSERT (SQLite takes up to 32,766 parameters in one statement) and per transaction. */
const BATCH = 500;
const PER_TRANSACTION = 50_000;
const ROOT_TOKEN = 'bench-million-root-token-0123456789';
const USER_TOKEN = 'bench-million-user0-token-0123456789';

type App = Awaited<ReturnType<typeof inProcessApp>>;

/** What the load made, for choosing pages: how many rows each list has. */
interface Loaded {
  firstProject: number;
  publicPersonal: number;
  byUser0: number;
  inFirstProject: number;
  /** The snippets user0 sees: not private, theirs, or in one of their 10 projects. */
  seenByUser0: number;
  middleId: number;
}

/** A one-file snippet's first commit, its objects made as the create path makes them (domain/snippets/commits.ts). */
async function initialCommit(path: string, text: string, authorId: number, at: string) {
  const writer = new ObjectWriter();
  const blob = writer.blob(Buffer.from(text));
  const time = Math.floor(Date.parse(at) / 1000);
  const author = { name: `User ${authorId}`, email: `user${authorId}@example.com`, time };
  const commit = writer.commit({
    tree: await writer.tree([{ path, blobId: blob }]),
    parent: null,
    author,
    message: 'Initial commit',
  });
  return { path, text, blob, commit, objects: writer.objects() };
}

async function load({ app }: App, total: number): Promise<Loaded> {
  const db = app.store.kysely;
  const now = Date.now();
  const { firstUser, projectIds } = await db
    .transaction()
    .execute((tx) =>
      insertUsersAndProjects(tx, { users: USERS, projects: PROJECTS, memberOf: 10, now: new Date(now).toISOString() }),
    );
  const counts = { publicPersonal: 0, byUser0: 0, inFirstProject: 0, seenByUser0: 0 };
  let middleId = 0;
  for (let start = 0; start < total; start += PER_TRANSACTION) {
    await db.transaction().execute(async (tx) => {
      for (let i = start; i < Math.min(start + PER_TRANSACTION, total); i += BATCH) {
        const rows: Insertable<SnippetsTable>[] = [];
        const commits: Awaited<ReturnType<typeof initialCommit>>[] = [];
        for (let n = i; n < Math.min(i + BATCH, total); n++) {
          // Interleaved, as they would be made: personal and project snippets alternate.
          const personal = n % 2 === 0;
          const k = Math.floor(n / 2);
          const author = personal && k % 25 === 0 ? firstUser : firstUser + (k % USERS);
          const visibility = LEVELS[n % 3];
          const projectId = personal ? null : projectIds[k % PROJECTS];
          if (personal && visibility === 'public') counts.publicPersonal++;
          if (author === firstUser) counts.byUser0++;
          if (projectId === projectIds[0]) counts.inFirstProject++;
          const open = visibility !== 'private' && (personal || LEVELS[(k % PROJECTS) % 3] !== 'private');
          if (open || (personal ? author === firstUser : k % PROJECTS < 10)) counts.seenByUser0++;
          const at = new Date(now - (total - n) * 1000).toISOString();
          const commit = await initialCommit(
            `file${n % 50}.rb`,
            `puts "snippet ${n}: ${n % 97} bottles"\n`,
            author,
            at,
          );
          commits.push(commit);
          rows.push({
            project_id: projectId,
            author_id: author,
            title: `snippet ${n}`,
            description: n % 4 === 0 ? `notes on snippet ${n}` : null,
            visibility,
            file_name: `file${n % 50}.rb`,
            content: '',
            head_commit: commit.commit,
            default_branch: 'main',
            created_at: at,
            updated_at: at,
          });
        }
        const ids = (await tx.insertInto('snippets').values(rows).returning('id').execute()).map((r) => r.id);
        if (!middleId && i + BATCH >= total / 2) middleId = ids[ids.length - 1];
        await tx
          .insertInto('snippet_files')
          .values(
            ids.map((id, j) => ({
              snippet_id: id,
              path: commits[j].path,
              blob_id: commits[j].blob,
              size: Buffer.byteLength(commits[j].text),
            })),
          )
          .execute();
        await tx
          .insertInto('snippet_file_text')
          .values(ids.map((id, j) => ({ snippet_id: id, path: commits[j].path, content: commits[j].text })))
          .execute();
        // Each snippet's repository as the create path leaves it: its three objects and its branch.
        const repositories = await tx
          .insertInto('git_repositories')
          .values(ids.map((id) => ({ kind: 'snippet' as const, owner_id: id, head: 'main', writes: FIRST_WRITE })))
          .returning('id')
          .execute();
        await tx
          .insertInto('git_objects')
          .values(
            repositories.flatMap(({ id }, j) =>
              objectRows(FIRST_WRITE, commits[j].objects).map((row) => ({ repository_id: id, ...row })),
            ),
          )
          .execute();
        await tx
          .insertInto('git_refs')
          .values(
            repositories.map(({ id }, j) => ({
              repository_id: id,
              name: 'refs/heads/main',
              oid: Buffer.from(commits[j].commit, 'hex'),
            })),
          )
          .execute();
      }
    });
    if (total >= 100_000) process.stdout.write(`  ${Math.min(start + PER_TRANSACTION, total)} snippets\r`);
  }
  // As autovacuum leaves settled tables: PostgreSQL reads an index alone only for pages VACUUM marked
  // all-visible.
  if (app.store.db.dialect === 'postgres')
    await sql`VACUUM ANALYZE snippets, snippet_files, snippet_file_text`.execute(db);
  else await refreshPlannerStatistics(app.store.db);
  await insertUserToken(db, firstUser, USER_TOKEN);
  return { firstProject: projectIds[0], ...counts, middleId };
}

/** The SQLite database's size with its log checkpointed into it, and its largest tables and indexes. */
async function sqliteSize({ app }: App, dataDir: string) {
  const db = app.store.kysely;
  const checkpoint = await sql<{
    busy: number;
    log: number;
    checkpointed: number;
  }>`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
  const file = path.join(dataDir, 'snippetd.sqlite3');
  const size = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  console.log(
    `SQLite: ${mib(size(file))} database, ${mib(size(`${file}-wal`))} log (checkpoint ${JSON.stringify(checkpoint.rows[0])}), ${mib(
      fs.readdirSync(dataDir, { recursive: true }).reduce<number>((sum, f) => {
        const p = path.join(dataDir, String(f));
        return sum + (fs.statSync(p).isFile() ? size(p) : 0);
      }, 0),
    )} the whole data directory`,
  );
  try {
    const parts = await sql<{ name: string; bytes: number }>`SELECT name, sum(pgsize) AS bytes FROM dbstat
      GROUP BY name ORDER BY bytes DESC LIMIT 12`.execute(db);
    console.log(`  largest: ${parts.rows.map((r) => `${r.name} ${mib(r.bytes)}`).join(', ')}`);
    const free = await sql<{ n: number }>`PRAGMA freelist_count`.execute(db);
    const pageSize = await sql<{ page_size: number }>`PRAGMA page_size`.execute(db);
    console.log(`  free pages (kept for reuse): ${mib(Object.values(free.rows[0])[0] * pageSize.rows[0].page_size)}`);
  } catch {
    // dbstat is an optional part of SQLite.
  }
}

const loop = monitorEventLoopDelay({ resolution: 1 });

async function measure(
  app: App,
  name: string,
  /** `url` as a function: the URL of each request by its number (0 the one not counted), e.g. a walk of pages. */
  request: { method?: 'GET' | 'POST'; url: string | ((n: number) => string); token?: string; body?: () => object },
  repeat = REPEAT,
  varied = true,
) {
  const pids =
    app.schema === null
      ? []
      : (
          await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE application_name = ${app.schema}`.execute(
            app.app.store.kysely,
          )
        ).rows.map((r) => r.pid);
  const serverCpu = () => pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
  const headers: Record<string, string> = request.token ? { 'private-token': request.token } : {};
  let sent = 0;
  const urlOf = () => (typeof request.url === 'string' ? request.url : request.url(sent++));
  const send = () =>
    app.app.inject({
      method: request.method ?? 'GET',
      // A URL of its own for each read (bench/unkept.ts): measured is its work, not a kept answer.
      url: varied && (request.method ?? 'GET') === 'GET' ? unkept(urlOf()) : urlOf(),
      headers: request.body ? { ...headers, 'content-type': 'application/json' } : headers,
      payload: request.body ? JSON.stringify(request.body()) : undefined,
    });
  await send(); // not counted: the statements prepared, the pages read into the cache
  const times: number[] = [];
  let status = 0;
  let items = '';
  const cpu = process.cpuUsage();
  const server = serverCpu();
  // The longest the loop was busy within one request: what a SQLite query run on it costs every other
  // request. The loop's delay also counts time this process waited for a core, which a loaded machine adds.
  let busy = 0;
  loop.reset();
  loop.enable();
  for (let i = 0; i < repeat; i++) {
    const t = performance.now();
    const used = performance.eventLoopUtilization();
    const res = await send();
    times.push(performance.now() - t);
    busy = Math.max(busy, performance.eventLoopUtilization(used).active);
    status = res.statusCode;
    if (res.headers['content-type']?.toString().startsWith('application/json')) {
      const body = res.json();
      items = Array.isArray(body) ? String(body.length) : '';
    }
    if (status >= 300) {
      console.log(`${name}: ${status} ${res.body.slice(0, 200)}`);
      break;
    }
  }
  loop.disable();
  const used = process.cpuUsage(cpu);
  const nodeCpu = (used.user + used.system) / 1000 / times.length;
  const dbCpu = (serverCpu() - server) / 1000 / times.length;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(times.length * q))].toFixed(2);
  const pg = app.schema === null ? '' : ` ${dbCpu.toFixed(2)} |`;
  console.log(
    `| ${name} | ${status} | ${items} | ${at(0.5)} | ${at(0.95)} | ${busy.toFixed(1)} | ${(loop.max / 1e6).toFixed(1)} | ${nodeCpu.toFixed(2)} |${pg}`,
  );
}

/** A snippet created through the API, as every measured create makes one. */
let created = 0;
const newSnippet = () => ({
  title: `created ${++created}`,
  visibility: 'public',
  files: [{ file_path: 'hello.rb', content: `puts "hello ${created}"\n` }],
});

async function apiSnippet(app: App): Promise<number> {
  const res = await app.app.inject({
    method: 'POST',
    url: '/api/v4/snippets',
    headers: { 'private-token': USER_TOKEN, 'content-type': 'application/json' },
    payload: JSON.stringify(newSnippet()),
  });
  if (res.statusCode !== 201) throw new Error(`create: ${res.statusCode} ${res.body}`);
  return res.json().id;
}

const databaseUrl = values['database-url'];
const header = () =>
  console.log(
    `| request | status | items | p50 ms | p95 ms | loop busy in one request, max ms | longest loop delay ms | Node CPU ms |${databaseUrl ? ' PostgreSQL CPU ms |' : ''}\n|---|---|---|---|---|---|---|---|${databaseUrl ? '---|' : ''}`,
  );

/**
 * GET, raw and create, the requests whose cost should not grow with the store: on each store in turn, twice,
 * so that neither is measured only in a process that has run longer (it gets cheaper as it warms).
 */
async function singleSnippetCases(stores: { app: App; label: string; loadedId: number }[]) {
  const ids = new Map<App, number>();
  for (const { app } of stores) ids.set(app, await apiSnippet(app));
  const cases = (app: App, label: string, loadedId: number) =>
    [
      [`GET /snippets/:id (API-made, ${label})`, { url: `/api/v4/snippets/${ids.get(app)}`, token: USER_TOKEN }],
      [
        `GET /snippets/:id/raw (API-made, ${label})`,
        { url: `/api/v4/snippets/${ids.get(app)}/raw`, token: USER_TOKEN },
      ],
      [
        `GET /snippets/:id (loaded row ${loadedId}, ${label})`,
        { url: `/api/v4/snippets/${loadedId}`, token: ROOT_TOKEN },
      ],
      [
        `GET /snippets/:id/raw (loaded row ${loadedId}, ${label})`,
        { url: `/api/v4/snippets/${loadedId}/raw`, token: ROOT_TOKEN },
      ],
      [
        `POST /snippets (${label})`,
        { method: 'POST', url: '/api/v4/snippets', token: USER_TOKEN, body: newSnippet },
        Number(values.creates),
      ],
    ] as const;
  for (let k = 0; k < cases(stores[0].app, '', 0).length; k++)
    for (const round of [1, 2])
      for (const { app, label, loadedId } of stores) {
        const [name, request, repeat] = cases(app, label, loadedId)[k];
        await measure(app, `${name}, round ${round}`, request, repeat);
      }
}

const pages = (name: string, list: string, token: string, items: number) => {
  const last = Math.max(1, Math.ceil(items / PER_PAGE));
  return [1, Math.ceil(last / 2), last].map(
    (page) =>
      [
        `${name}, page ${page} of ${last}`,
        `${list}${list.includes('?') ? '&' : '?'}per_page=${PER_PAGE}&page=${page}`,
        token,
      ] as const,
  );
};

const big = await inProcessApp({ name: 'million', token: ROOT_TOKEN, databaseUrl, keep: !!process.env.KEEP });
const small = await inProcessApp({ name: 'million_small', token: ROOT_TOKEN, databaseUrl });
const bare = Fastify();
bare.get('/', async () => ({ ok: true }));
try {
  console.log(
    `load average ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  let started = performance.now();
  const loaded = await load(big, SNIPPETS);
  console.log(
    `loaded ${SNIPPETS} snippets in ${((performance.now() - started) / 1000).toFixed(1)} s (${big.app.store.db.dialect}): ${JSON.stringify(loaded)}`,
  );
  if (big.schema === null) {
    // The search index is built by the server's indexer thread from the queue the load's triggers filled.
    started = performance.now();
    for (let left = await big.app.store.snippets.texts.indexBacklog(); left?.sources; ) {
      await new Promise((resolve) => setTimeout(resolve, 5000));
      left = await big.app.store.snippets.texts.indexBacklog();
      process.stdout.write(`  ${left?.sources} texts still to index\r`);
    }
    console.log(`indexed for search in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    // Then the indexer gives the pages the queue left free back to the file system (a database made with
    // auto_vacuum = INCREMENTAL), a few at a step: up to a minute for that, as a server would.
    started = performance.now();
    const freePages = async () =>
      Number(Object.values((await sql`PRAGMA freelist_count`.execute(big.app.store.kysely)).rows[0] as object)[0]);
    while ((await freePages()) > 1024 && performance.now() - started < 60_000)
      await new Promise((resolve) => setTimeout(resolve, 1000));
    console.log(`free pages given back for ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await sqliteSize(big, big.dataDir);
  } else {
    const size = await sql<{ bytes: string }>`SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${big.schema} AND c.relkind = 'r'`.execute(
      big.app.store.kysely,
    );
    console.log(
      `PostgreSQL: ${(Number(size.rows[0].bytes) / 2 ** 20).toFixed(0)} MiB in the schema's tables and indexes`,
    );
  }
  started = performance.now();
  const smallLoaded = await load(small, Number(values.small));
  console.log(`loaded ${values.small} snippets in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  for (let i = 0; i < 5; i++) await apiSnippet(big);

  await bare.ready();
  header();
  await measure({ app: bare, schema: null } as never, 'bare Fastify, a constant', { url: '/' }, REPEAT, false);
  const n = SNIPPETS.toLocaleString('en');
  const lists = [
    ...pages(`GET /snippets/public (${n})`, '/api/v4/snippets/public', USER_TOKEN, loaded.publicPersonal),
    ...pages(`GET /snippets, user0 (${n})`, '/api/v4/snippets', USER_TOKEN, loaded.byUser0),
    ...pages(`GET /snippets/all, member of 10 projects (${n})`, '/api/v4/snippets/all', USER_TOKEN, loaded.seenByUser0),
    ...pages(`GET /snippets/all, admin (${n})`, '/api/v4/snippets/all', ROOT_TOKEN, SNIPPETS),
    ...pages(
      `GET /projects/:id/snippets, member (${n})`,
      `/api/v4/projects/${loaded.firstProject}/snippets`,
      USER_TOKEN,
      loaded.inFirstProject,
    ),
  ];
  for (const [name, url, token] of lists) await measure(big, name, { url, token });
  // A client reading a whole list asks its pages one after another: from the middle on, each next page.
  const walks = [
    [`GET /snippets/all, admin (${n})`, ROOT_TOKEN, SNIPPETS],
    [`GET /snippets/all, member of 10 projects (${n})`, USER_TOKEN, loaded.seenByUser0],
  ] as const;
  for (const [name, token, items] of walks) {
    const middle = Math.ceil(Math.ceil(items / PER_PAGE) / 2);
    await measure(big, `${name}, pages ${middle} to ${middle + REPEAT} one after another`, {
      url: (i) => `/api/v4/snippets/all?per_page=${PER_PAGE}&page=${middle + i}`,
      token,
    });
  }
  // Again, to tell an effect of going first (right after the load) from the list's own cost.
  await measure(big, `${lists[0][0]}, again`, { url: lists[0][1], token: lists[0][2] });
  await measure(small, `GET /snippets/public, page 1 (${values.small})`, {
    url: `/api/v4/snippets/public?per_page=${PER_PAGE}`,
    token: USER_TOKEN,
  });
  await singleSnippetCases([
    { app: big, label: n, loadedId: loaded.middleId },
    { app: small, label: Number(values.small).toLocaleString('en'), loadedId: smallLoaded.middleId },
  ]);
  console.log(
    `load average ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await bare.close();
  await small.close();
  await big.close();
}
