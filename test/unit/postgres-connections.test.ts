// The PostgreSQL connections of a Db (openPostgres in src/storage/db/database.ts): every one runs our queries
// without JIT, connects as pg reads its URL and PGOPTIONS, whatever the URL holds, and is never sent a query
// while another runs on it (pg deprecates that; pg 9 refuses it). Each probe runs in a process of
// its own: Node prints a deprecation once a process, so another test's could hide it.
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
  // The epoch's query first, on new connections (through the pool, not Kysely); the schema is not migrated,
  // so each fails after it ran.
  await Promise.all(Array.from({ length: 10 }, () => db.readEpoch().catch(() => null)));
  const shown = await Promise.all(
    Array.from({ length: 10 }, () => sql\`SHOW jit\`.execute(db.kysely).then((r) => r.rows[0].jit)),
  );
  const { search_path } = (await sql\`SHOW search_path\`.execute(db.kysely)).rows[0];
  const { statement_timeout } = (await sql\`SHOW statement_timeout\`.execute(db.kysely)).rows[0];
  await db.close();
  await new Promise((resolve) => setImmediate(resolve));
  console.log(JSON.stringify({ shown, search_path, statement_timeout, warnings }));
`;

async function connectThrough(url: string, env: Record<string, string> = {}) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '--eval', probe],
    { cwd: root, env: { ...process.env, PGOPTIONS: '', ...env, PROBE_URL: url } },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '');
}

describe('PostgreSQL connections', { skip: TEST_DB !== 'postgres' && 'PostgreSQL only' }, () => {
  it('start without JIT and with the options the URL or PGOPTIONS give, never sent two queries at once', async () => {
    const schema = await postgresSchemaUrl();
    try {
      const url = new URL(schema.url);
      const name = url.searchParams.get('options')?.replace('-c search_path=', '');
      const bare = new URL(url);
      bare.search = '';
      // The server trusts local connections: any password is let in, so a URL's own form is what is tested.
      const percentInPassword = `postgres://postgres:50%off@${url.host}${url.pathname}`;
      const answers = await Promise.all([
        connectThrough(schema.url),
        connectThrough(bare.toString(), { PGOPTIONS: `-c search_path=${name} -c statement_timeout=1234` }),
        connectThrough(percentInPassword, { PGOPTIONS: `-c search_path=${name}` }),
        // As pg reads them: the URL's options, PGOPTIONS only when the URL gives none.
        connectThrough(schema.url, { PGOPTIONS: '-c search_path=elsewhere -c statement_timeout=1234' }),
      ]);
      const expected = (statementTimeout: string) => ({
        shown: Array(10).fill('off'),
        search_path: name,
        statement_timeout: statementTimeout,
        warnings: [],
      });
      assert.deepEqual(answers, [expected('0'), expected('1234ms'), expected('0'), expected('0')]);
    } finally {
      await schema.drop();
    }
  });
});
