// `snippetd fsck` as the store grows (issue 32: it checks the search index against the rows, a batch of
// snippets at a time): snippets of three text files of 2 KiB each created through the API in process, SQLite's
// indexer waited for, then the command run as its own process under /usr/bin/time for its wall time, CPU and
// peak resident memory, at each size of --sizes. Its memory should stay about the same from one size to the next.
// With --compare, another version's src/cli.ts runs on the same store too, the two alternated twice.
//
//   npx tsx bench/fsck.ts [--sizes 1000,4000] [--database-url postgres://postgres@127.0.0.1:5432/test]
//     [--compare /tmp/before/src/cli.ts]
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { inProcessApp } from './in-process-app.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,4000' },
    'database-url': { type: 'string' },
    compare: { type: 'string' },
  },
});
const TOKEN = 'bench-fsck-root-token-0123456789';
const text = (n: number) =>
  Array.from({ length: 64 }, (_, l) => `line ${l} of file ${n}: const value = compute(${n * l});`)
    .join('\n')
    .slice(0, 2048);

for (const size of values.sizes.split(',').map(Number)) {
  const { app, close, dataDir, schema } = await inProcessApp({
    name: `fsck-${size}`,
    token: TOKEN,
    databaseUrl: values['database-url'],
  });
  try {
    for (let i = 0; i < size; i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v4/snippets',
        headers: { 'private-token': TOKEN },
        payload: {
          title: `snippet ${i}`,
          visibility: 'private',
          files: [0, 1, 2].map((f) => ({ file_path: `f${f}.txt`, content: text(i * 3 + f) })),
        },
      });
      if (res.statusCode !== 201) throw new Error(res.body);
    }
    if (app.store.db.dialect === 'sqlite')
      for (;;) {
        const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM search_index_queue`.execute(
          app.store.kysely,
        );
        if (Number(rows[0].n) === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    let databaseUrl = `sqlite:${path.join(dataDir, 'snippetd.sqlite3')}`;
    if (values['database-url']) {
      const url = new URL(values['database-url']);
      url.searchParams.set('options', `-c search_path=${schema}`);
      databaseUrl = url.toString();
    }
    const clis = values.compare ? [values.compare, 'src/cli.ts', values.compare, 'src/cli.ts'] : ['src/cli.ts'];
    for (const cli of clis) {
      const run = spawnSync(
        '/usr/bin/time',
        ['-f', '%e s wall, %U+%S s CPU, %M KiB peak RSS', process.execPath, '--import', 'tsx', cli, 'fsck'],
        {
          env: { ...process.env, SNIPPETD_DATA_DIR: dataDir, SNIPPETD_DATABASE_URL: databaseUrl },
          encoding: 'utf8',
        },
      );
      const summary = run.stdout.trim().split('\n').at(-1);
      const measured = run.stderr.trim().split('\n').at(-1);
      console.log(`${app.store.db.dialect}, ${size} snippets (${size * 3} files), ${cli}: ${measured}; ${summary}`);
    }
  } finally {
    await close();
  }
}
