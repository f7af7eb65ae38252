// Nodes that start together against one database: four `snippetd migrate` processes at the same moment
// all succeed, and each migration is applied exactly once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { openDatabase } from '../../src/storage/db/database.ts';
import { TEST_DB, postgresSchemaUrl } from '../helper.ts';
import { CLI } from '../../scripts/spawn-server.ts';

const run = promisify(execFile);

describe('migrations', () => {
  let url: string;
  let dir: string;
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-migrate-'));
    if (TEST_DB === 'postgres') {
      const schema = await postgresSchemaUrl();
      url = schema.url;
      drop = schema.drop;
    } else {
      url = `sqlite:${path.join(dir, 'db.sqlite3')}`;
    }
  });
  after(async () => {
    await drop?.();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('applies each migration once when four processes migrate at the same moment', async () => {
    const env = { ...process.env, SNIPPETD_DATA_DIR: dir, SNIPPETD_DATABASE_URL: url };
    const results = await Promise.all(
      Array.from({ length: 4 }, () => run(process.execPath, ['--import', 'tsx', CLI, 'migrate'], { env })),
    );
    for (const r of results) assert.equal(r.stdout.trim(), 'snippetd: database is at the latest migration');
    const db = openDatabase(url);
    try {
      const rows = await db.kysely
        .selectFrom('snippetd_migrations' as any)
        .select('name' as any)
        .orderBy('name' as any)
        .execute();
      assert.deepEqual(
        rows.map((r: any) => r.name),
        ['0001_initial', '0002_snippet_file_content', '0003_change_epoch'],
      );
    } finally {
      await db.close();
    }
  });
});
