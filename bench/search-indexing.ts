// Search indexing of large files of random text (issues 28 and 32): a snippet with FILES files of 1 MiB of
// random base64 (the most the index takes of a file, the most distinct trigrams) and a description of almost
// 1 MiB is created, searched at once for a text from the middle of a file, then deleted, while cheap requests
// go on (test/stall.ts): the server's longest event-loop delay, the cheap requests' worst latency, the
// search's latency, and (SQLite) how long the indexer took to empty its queue. test/process/search-indexing
// .test.ts asserts the same; run this by hand:
//
//   npx tsx bench/search-indexing.ts [--files 4] [--rounds 2] [--db sqlite|postgres] [--cli <a tree's cli>]
//
// By default it runs this tree's compiled CLI (built first, as `npm start` runs it); `--cli` runs another
// tree's dist/cli.js (or src/cli.ts through tsx), for a before figure.
import crypto from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { compiledCli, exited, spawnServer } from '../scripts/spawn-server.ts';
import { openDatabase } from '../src/storage/db/database.ts';
import { type Calm, MiB, whileHostile } from '../test/stall.ts';

const { values } = parseArgs({
  options: { files: { type: 'string' }, rounds: { type: 'string' }, db: { type: 'string' }, cli: { type: 'string' } },
});
const FILES = Number(values.files ?? 4);
const rounds = Number(values.rounds ?? 2);
process.env.SNIPPETD_TEST_DB = values.db ?? 'sqlite';
const { processStorage } = await import('../test/helper.ts');
const TOKEN = 'glpat-search-indexing-bench-token';
const storage = await processStorage('snippetd-search-indexing-bench-');
const server = await spawnServer(
  {
    ...process.env,
    SNIPPETD_DATA_DIR: storage.dataDir,
    SNIPPETD_DATABASE_URL: storage.databaseUrl,
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: process.env.SNIPPETD_LOG_LEVEL ?? 'warn',
  },
  [values.cli ?? compiledCli(), 'serve', '--port', '0'],
);
const api = async (method: string, url: string, body?: Uint8Array<ArrayBuffer>) => {
  const res = await fetch(`${server.url}/api/v4${url}`, {
    method,
    headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
    body,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
};
/** A cheap request that reads the database (the small creates change the rows it reads, so no cache answers). */
const READING_PROBE = '/api/v4/snippets/public?per_page=1';
const randomText = (bytes: number) => crypto.randomBytes((bytes / 4) * 3).toString('base64');
const summary = (calm: Calm) => ({
  loopDelayMaxMs: Math.round(calm.loopDelayMaxMs),
  cheapNormalMs: Number(calm.normalMs.toFixed(1)),
  cheapWorstMs: Math.round(calm.worstMs),
  cheapAnswered: calm.answered,
});
/** SQLite: milliseconds until the search index's queue is empty (null where there is none). */
async function indexedAfter(started: number): Promise<number | null> {
  if (process.env.SNIPPETD_TEST_DB !== 'sqlite') return null;
  const db = openDatabase(storage.databaseUrl);
  try {
    for (;;) {
      const found = await sql<{ n: number }>`SELECT count(*) AS n FROM search_index_queue`
        .execute(db.kysely)
        .catch(() => null);
      if (!found || found.rows[0].n === 0) return found ? Math.round(performance.now() - started) : null;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await db.close();
  }
}

try {
  for (let round = 0; round < rounds; round++) {
    const files = Array.from({ length: FILES }, (_, i) => ({ file_path: `r${i}.txt`, content: randomText(MiB) }));
    const description = randomText(MiB - 4096);
    // Encoded before: the cheap requests are timed in this process too.
    const body = new TextEncoder().encode(
      JSON.stringify({ title: 'random', visibility: 'public', description, files }),
    );
    let started = performance.now();
    const created = await whileHostile(server, () => api('POST', '/snippets', body));
    const createSeconds = (performance.now() - started) / 1000;
    const needle = files[FILES - 1].content.slice(MiB / 2, MiB / 2 + 40);
    started = performance.now();
    const found = await api('GET', `/search?scope=snippet_blobs&search=${encodeURIComponent(needle)}`);
    const searchMs = Math.round(performance.now() - started);
    if (found.length !== 1 || found[0].id !== created.answer.id) throw new Error('the search did not find the snippet');
    // While the thread indexes: small creates (each waits for the write lock a step at most) and cheap reads.
    const writes: number[] = [];
    const indexing = await whileHostile(
      server,
      async () => {
        const until = indexedAfter(started);
        let done = false;
        until.finally(() => {
          done = true;
        });
        while (!done) {
          const at = performance.now();
          const small = { title: 'small', visibility: 'private', files: [{ file_path: 'a.txt', content: 'a' }] };
          await api('POST', '/snippets', new TextEncoder().encode(JSON.stringify(small)));
          writes.push(performance.now() - at);
        }
        return until;
      },
      READING_PROBE,
    );
    const indexedMs = indexing.answer;
    writes.sort((a, b) => a - b);
    started = performance.now();
    const deleted = await whileHostile(server, () => api('DELETE', `/snippets/${created.answer.id}`));
    const deleteSeconds = (performance.now() - started) / 1000;
    const forgottenMs = await indexedAfter(started);
    console.log(
      JSON.stringify({
        db: process.env.SNIPPETD_TEST_DB,
        files: FILES,
        create: { seconds: Number(createSeconds.toFixed(1)), ...summary(created.calm) },
        searchMs,
        indexedMs,
        whileIndexing: {
          ...summary(indexing.calm),
          smallCreates: writes.length,
          smallCreateP50Ms: Math.round(writes[writes.length >> 1] ?? 0),
          smallCreateMaxMs: Math.round(writes[writes.length - 1] ?? 0),
        },
        delete: { seconds: Number(deleteSeconds.toFixed(1)), ...summary(deleted.calm) },
        forgottenMs,
        load: os.loadavg().map((l) => Number(l.toFixed(1))),
      }),
    );
  }
} finally {
  server.child.kill('SIGTERM');
  await exited(server.child);
  await storage.remove();
}
