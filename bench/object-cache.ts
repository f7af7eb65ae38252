// Does the git object cache (src/storage/git/object-cache.ts) earn its place? The same reads of a snippet with
// a long history, answered in process (app.inject: no sockets, so the difference is the server's own work),
// with the cache as it is and with it emptied before every request, which is what every read would cost
// without one: raw at the head, raw at the first commit by id, and the snippet itself. Alternated in rounds.
//
//   npx tsx bench/object-cache.ts [--revisions 2000] [--requests 500] [--database-url postgres://…]
import { parseArgs } from 'node:util';
import { inProcessApp } from './in-process-app.ts';

const { values } = parseArgs({
  options: {
    revisions: { type: 'string', default: '2000' },
    requests: { type: 'string', default: '500' },
    'database-url': { type: 'string' },
  },
});
const REVISIONS = Number(values.revisions);
const REQUESTS = Number(values.requests);
const TOKEN = 'bench-object-cache-token-0123456789';

const { app, close } = await inProcessApp({ name: 'objects', token: TOKEN, databaseUrl: values['database-url'] });
try {
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
    const res = await app.inject({ method, url: `/api/v4${url}`, headers: { 'private-token': TOKEN }, payload });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res;
  };
  await call('PUT', '/application/settings', { raw_blob_request_limit: 0 });
  const project = (await call('POST', '/projects', { path: 'objects', visibility: 'public' })).json();
  const snippets = `/projects/${project.id}/snippets`;
  const snippet = (
    await call('POST', snippets, { title: 'history', files: [{ file_path: 'a.rb', content: 'puts 0\n' }] })
  ).json();
  const firstCommit = (await app.store.snippets.findInProject(project.id, snippet.id))!.head_commit!;
  for (let i = 1; i <= REVISIONS; i++)
    await call('PUT', `${snippets}/${snippet.id}`, {
      files: [{ action: 'update', file_path: 'a.rb', content: `puts ${i}\n` }],
    });

  const reads: [string, string][] = [
    ['raw at the head', `${snippets}/${snippet.id}/raw`],
    ['raw at the first commit', `${snippets}/${snippet.id}/files/${firstCommit}/a.rb/raw`],
    ['the snippet (JSON)', `${snippets}/${snippet.id}`],
  ];
  /** Microseconds a request, in order; `cold` empties the object cache before each one. */
  const measure = async (url: string, cold: boolean) => {
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      if (cold) app.store.objects.clear();
      const started = process.hrtime.bigint();
      await call('GET', url);
      times.push(Number(process.hrtime.bigint() - started) / 1000);
    }
    return times.sort((a, b) => a - b);
  };
  for (const [, url] of reads) for (const cold of [false, true]) await measure(url, cold); // warm-up
  const results = new Map<string, { warm: number[]; cold: number[] }>();
  for (let round = 0; round < 3; round++)
    for (const [name, url] of reads) {
      const entry = results.get(name) ?? { warm: [], cold: [] };
      entry.warm.push(...(await measure(url, false)));
      entry.cold.push(...(await measure(url, true)));
      results.set(name, entry);
    }
  const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)];
  console.log(
    `${values['database-url'] ? 'PostgreSQL' : 'SQLite'}, a snippet of ${REVISIONS + 1} commits, ${REQUESTS} requests × 3 rounds each, in process (µs a request):`,
  );
  console.log('| read | with the cache p50 / p99 | emptied before each p50 / p99 | p50 without ÷ with |');
  console.log('|---|---|---|---|');
  for (const [name, { warm, cold }] of results)
    console.log(
      `| ${name} | ${p(warm, 0.5).toFixed(0)} / ${p(warm, 0.99).toFixed(0)} | ${p(cold, 0.5).toFixed(0)} / ${p(cold, 0.99).toFixed(0)} | ${(p(cold, 0.5) / p(warm, 0.5)).toFixed(2)}× |`,
    );
  const { hits, misses } = app.store.objects.counts;
  console.log(`\nobject cache lookups over the run: ${hits} hits, ${misses} misses`);
} finally {
  await close();
}
