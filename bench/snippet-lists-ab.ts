// Before/after of the snippet list query alone, robust to a busy machine: the storage call that answers a
// list page (snippets.visiblePage) from another source tree (`before`, e.g. a worktree of an older commit)
// and from this one, on the same database in one process, alternated in batches of 10; the median time and
// CPU time of this process per call (on SQLite the whole query; on PostgreSQL the client's part). The
// database is one bench/snippet-lists.ts kept (KEEP=1 prints its data directory or schema).
//
//   npx tsx bench/snippet-lists-ab.ts <before tree> <database url> [--batches 15]
//   e.g. sqlite:/tmp/snippetd-bench-lists-XXXX/snippetd.sqlite3, or
//   'postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3Dbench_lists_NNNN'
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createStore } from '../src/storage/db/store.ts';
import { openDatabase } from '../src/storage/db/database.ts';
import { snippetScope } from '../src/domain/snippets/finder.ts';
import type { SnippetListFilter } from '../src/storage/db/tables/snippets.ts';
import type { Viewer } from '../src/domain/policy.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { batches: { type: 'string', default: '15' } },
});
if (positionals.length !== 2) throw new Error('usage: npx tsx bench/snippet-lists-ab.ts <before tree> <database url>');
const before = (await import(path.resolve(positionals[0], 'src/storage/db/store.ts'))) as {
  createStore: typeof createStore;
};
const db = openDatabase(positionals[1]);
const stores = { before: before.createStore(db), after: createStore(db) };
const user0: Viewer = await db.kysely
  .selectFrom('users')
  .select(['id', 'admin', 'external', 'state'])
  .where('username', '=', 'user0')
  .executeTakeFirstOrThrow();
const cases: [string, Viewer, SnippetListFilter, number][] = [
  ['GET /snippets/public, first page', null, { kind: 'personal' }, 0],
  ['GET /snippets/public, page 833', null, { kind: 'personal' }, 832 * 20],
  ['GET /snippets/public, page 1666', null, { kind: 'personal' }, 1665 * 20],
  ['GET /snippets (10,000 of theirs), first page', user0, { authorId: user0!.id }, 0],
  ['GET /snippets (10,000 of theirs), page 252', user0, { authorId: user0!.id }, 251 * 20],
  ['GET /snippets (10,000 of theirs), page 505', user0, { authorId: user0!.id }, 504 * 20],
  ['GET /snippets/all (member), first page', user0, {}, 0],
];
const PER_BATCH = 10;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)].toFixed(2);
console.log(
  '| list page | before ms | after ms | before CPU ms | after CPU ms | same answer |\n|---|---|---|---|---|---|',
);
try {
  for (const [name, viewer, filter, offset] of cases) {
    const page = (side: 'before' | 'after') =>
      stores[side].snippets.visiblePage(snippetScope(viewer), filter, { offset, limit: 20 });
    const answers = [JSON.stringify(await page('before')), JSON.stringify(await page('after'))];
    const wall = { before: [] as number[], after: [] as number[] };
    const cpu = { before: [] as number[], after: [] as number[] };
    for (let batch = 0; batch < Number(values.batches); batch++) {
      for (const side of batch % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const)) {
        const started = process.cpuUsage();
        const t = performance.now();
        for (let i = 0; i < PER_BATCH; i++) await page(side);
        wall[side].push((performance.now() - t) / PER_BATCH);
        const used = process.cpuUsage(started);
        cpu[side].push((used.user + used.system) / 1000 / PER_BATCH);
      }
    }
    console.log(
      `| ${name} | ${median(wall.before)} | ${median(wall.after)} | ${median(cpu.before)} | ${median(cpu.after)} | ${answers[0] === answers[1] ? 'yes' : 'NO'} |`,
    );
  }
} finally {
  await db.close();
}
