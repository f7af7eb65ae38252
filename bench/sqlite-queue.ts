// Queries waiting for SQLite's one connection: N one-row queries started at once, through Kysely's own
// SQLite driver and through snippetd's (src/storage/db/database.ts, QueuedSqliteDriver), in the same run.
// Kysely's lock wakes every waiter on each release, so its cost a query grows with the queue; a queue that
// hands the connection on does not.
//
//   npx tsx bench/sqlite-queue.ts [--repeat 3]
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { openDatabase, withStatementCache } from '../src/storage/db/database.ts';

const { values } = parseArgs({ options: { repeat: { type: 'string', default: '3' } } });
const QUEUES = [1, 10, 50, 200, 1000];
const QUERIES_PER_SIZE = 20_000;

/** Microseconds a query when `n` are started at once, over QUERIES_PER_SIZE queries. */
async function perQuery(kysely: Kysely<any>, n: number): Promise<number> {
  const rounds = Math.ceil(QUERIES_PER_SIZE / n);
  const t0 = performance.now();
  for (let r = 0; r < rounds; r++)
    await Promise.all(Array.from({ length: n }, () => sql`SELECT 1 AS x`.execute(kysely)));
  return ((performance.now() - t0) * 1000) / (rounds * n);
}

// Both over the same statement cache, so that only the drivers differ.
const kyselys = new Kysely<any>({
  dialect: new SqliteDialect({ database: withStatementCache(new SQLite(':memory:')) }),
});
const ours = openDatabase('sqlite::memory:');
const rows: string[] = [];
for (let repeat = 1; repeat <= Number(values.repeat); repeat++) {
  for (const n of QUEUES) {
    const theirs = await perQuery(kyselys, n);
    const mine = await perQuery(ours.kysely, n);
    rows.push(`| ${repeat} | ${n} | ${theirs.toFixed(1)} | ${mine.toFixed(1)} |`);
  }
}
console.log(
  "| repeat | queries at once | Kysely's SqliteDriver, µs a query | snippetd's QueuedSqliteDriver, µs a query |",
);
console.log('|---|---|---|---|');
console.log(rows.join('\n'));
await kyselys.destroy();
await ours.close();
