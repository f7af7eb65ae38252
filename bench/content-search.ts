// Content search over many large matching files: SNIPPETS public snippets of FILES files just under 1 MiB
// (the most the index takes of a file), a needle on every line (or, with `--in path`, in each file's name and
// nowhere in its text: every file read to its end), then `scope=snippet_blobs` searches for it,
// one at a time, while cheap requests go on (test/stall.ts): each search's latency, the server's longest
// event-loop delay and its peak memory. test/process/search-indexing.test.ts asserts the same, smaller:
//
//   npx tsx bench/content-search.ts [--snippets 20] [--files 10] [--rounds 4] [--in lines|path] [--db sqlite|postgres]
//     [--cli <cli>]
//
// By default it runs this tree's compiled CLI (built first, as `npm start` runs it); `--cli` runs another
// tree's dist/cli.js, for a before figure.
import { parseArgs } from 'node:util';
import { compiledCli } from '../scripts/spawn-server.ts';
import { openDatabase } from '../src/storage/db/database.ts';
import { currentRss, MiB, whileHostile } from '../test/stall.ts';

const { values } = parseArgs({
  options: {
    snippets: { type: 'string' },
    files: { type: 'string' },
    rounds: { type: 'string' },
    in: { type: 'string' },
    db: { type: 'string' },
    cli: { type: 'string' },
  },
});
const SNIPPETS = Number(values.snippets ?? 20);
const FILES = Number(values.files ?? 10);
process.env.SNIPPETD_TEST_DB = values.db ?? 'sqlite';
const { processServer, untilSearchIndexed } = await import('../test/helper.ts');
const TOKEN = 'glpat-content-search-bench-token';
const own = await processServer('snippetd-content-search-bench-', TOKEN, { SNIPPETD_LOG_LEVEL: 'warn' }, [
  values.cli ?? compiledCli(),
  'serve',
  '--port',
  '0',
]);
const server = own.server;
const api = async (method: string, url: string, body?: unknown) => {
  const res = await fetch(`${server.url}/api/v4${url}`, {
    method,
    headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
};

try {
  await api('PUT', '/application/settings', { search_rate_limit: 0 });
  const inPath = values.in === 'path';
  const line = (n: number) => `line ${n} of ordinary text with a ${inPath ? 'pin' : 'needle'} in it\n`;
  for (let s = 0, n = 0; s < SNIPPETS; s++) {
    const files = Array.from({ length: FILES }, (_, f) => {
      let content = '';
      while (content.length < MiB - 100) content += line(n++);
      return { file_path: `${inPath ? 'needle' : 'text'}-${f}.txt`, content };
    });
    await api('POST', '/snippets', { title: `many ${s}`, visibility: 'public', files });
  }
  if (process.env.SNIPPETD_TEST_DB === 'sqlite') {
    const db = openDatabase(String(own.env.SNIPPETD_DATABASE_URL));
    await untilSearchIndexed(db.kysely, 600_000);
    await db.close();
  }
  const where = inPath ? 'their names' : 'every line';
  console.log(`${SNIPPETS} snippets of ${FILES} files, the needle in ${where}, on ${process.env.SNIPPETD_TEST_DB}`);
  console.log(`RSS ${currentRss(server) >> 20} MiB`);
  for (let round = 0; round < Number(values.rounds ?? 4); round++) {
    const start = performance.now();
    const { answer, calm } = await whileHostile(server, () =>
      api('GET', '/search?scope=snippet_blobs&per_page=20&search=needle'),
    );
    console.log(
      `search: ${Math.round(performance.now() - start)} ms, ${answer.length} snippets; loop held ` +
        `${Math.round(calm.loopDelayMaxMs)} ms, a cheap request waited ${Math.round(calm.worstMs)} ms; ` +
        `peak RSS ${Math.round(calm.peakRssBytes / MiB)} MiB`,
    );
  }
} finally {
  await own.stop();
}
