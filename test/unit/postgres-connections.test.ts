// The PostgreSQL connections of a Db (openPostgres in src/storage/db/database.ts): every one runs without JIT
// from its first query, and none is sent a query while another runs on it (pg deprecates that; pg 9 refuses
// it). Run in a process of its own: Node prints a deprecation once a process, so another test's could hide it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { postgresSchemaUrl, TEST_DB } from '../helper.ts';

const root = path.resolve(import.meta.dirname, '../..');

const probe = `
  import { sql } from 'kysely';
  import { openDatabase } from './src/storage/db/database.ts';
  const warnings = [];
  process.on('warning', (w) => warnings.push(w.name + ': ' + w.message));
  const db = openDatabase(process.env.PROBE_URL);
  // The epoch's query first, on new connections (it goes through the pool, not Kysely); the schema is not
  // migrated, so each fails after it ran.
  await Promise.all(Array.from({ length: 10 }, () => db.readEpoch().catch(() => null)));
  const shown = await Promise.all(
    Array.from({ length: 10 }, () => sql\`SHOW jit\`.execute(db.kysely).then((r) => r.rows[0].jit)),
  );
  const searchPath = (await sql\`SHOW search_path\`.execute(db.kysely)).rows[0].search_path;
  await db.close();
  await new Promise((resolve) => setImmediate(resolve));
  console.log(JSON.stringify({ shown, searchPath, warnings }));
`;

describe('PostgreSQL connections', { skip: TEST_DB !== 'postgres' && 'PostgreSQL only' }, () => {
  it('start without JIT and with the options the URL gives, and are never sent two queries at once', async () => {
    const schema = await postgresSchemaUrl();
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '--eval', probe],
        { cwd: root, env: { ...process.env, PROBE_URL: schema.url } },
      );
      const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '');
      const expectedPath = new URL(schema.url).searchParams.get('options')?.replace('-c search_path=', '');
      assert.deepEqual(result, {
        shown: Array(10).fill('off'),
        searchPath: expectedPath,
        warnings: [],
      });
    } finally {
      await schema.drop();
    }
  });
});
