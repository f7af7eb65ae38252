// The whole app in this process for a load script that measures the server's own work (app.inject: no
// sockets): a new data directory, SQLite in it or a new schema on the PostgreSQL server `databaseUrl` names,
// root with `token`. `close()` stops it and removes what it made, unless `keep` (the paths are printed).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { buildApp } from '../src/app.ts';
import { defaults } from '../src/config.ts';
import { bootstrapRoot } from '../src/domain/bootstrap.ts';
import { openDatabase } from '../src/storage/db/database.ts';

export async function inProcessApp(opts: { name: string; token: string; databaseUrl?: string; keep?: boolean }) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `snippetd-bench-${opts.name}-`));
  const schema = `bench_${opts.name.replace(/\W/g, '_')}_${process.pid}`;
  let databaseUrl = `sqlite:${path.join(dataDir, 'snippetd.sqlite3')}`;
  if (opts.databaseUrl) {
    const admin = openDatabase(opts.databaseUrl);
    await sql`CREATE SCHEMA ${sql.raw(schema)}`.execute(admin.kysely);
    await admin.close();
    const url = new URL(opts.databaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    // Names its connections, so that a script can find their server processes (bench/process-cpu.ts).
    url.searchParams.set('application_name', schema);
    databaseUrl = url.toString();
  }
  const config = { ...defaults(dataDir), databaseUrl, logLevel: 'silent' as const, initialRootToken: opts.token };
  const app = await buildApp(config);
  await bootstrapRoot(app.store, config);
  const close = async () => {
    await app.close();
    if (opts.keep) return console.log(`kept ${dataDir}${opts.databaseUrl ? ` and schema ${schema}` : ''}`);
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (opts.databaseUrl) {
      const admin = openDatabase(opts.databaseUrl);
      await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(admin.kysely);
      await admin.close();
    }
  };
  return { app, close, dataDir, schema: opts.databaseUrl ? schema : null };
}
