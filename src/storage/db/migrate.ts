// Versioned migrations, run at start-up and by `snippetd migrate`. Each migration is a module in
// ./migrations; add new ones to the list below, never edit one that has shipped.
import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './database.ts';
import * as m0001 from './migrations/0001_initial.ts';
import * as m0002 from './migrations/0002_snippet_file_content.ts';

type DialectMigration = { up(db: Parameters<Migration['up']>[0], dialect: Db['dialect']): Promise<void> };

const MIGRATIONS: Record<string, DialectMigration> = {
  '0001_initial': m0001,
  '0002_snippet_file_content': m0002,
};

export async function migrateToLatest(db: Db): Promise<string[]> {
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, m] of Object.entries(MIGRATIONS)) out[name] = { up: (k) => m.up(k, db.dialect) };
      return out;
    },
  };
  // Kysely looks for its bookkeeping tables across all schemas unless told which one: name the
  // connection's current schema, so databases sharing a server (one schema per tenant/test) stay apart.
  const schema = db.dialect === 'postgres' ? (await sql<{ s: string }>`SELECT current_schema() AS s`.execute(db.kysely)).rows[0].s : undefined;
  const migrator = new Migrator({ db: db.kysely, provider, migrationTableSchema: schema });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
