// PostgreSQL plans each query from its statistics of the tables, which autovacuum refreshes only a while
// after rows change; right after a bulk load a planner still counting empty tables can choose a scan where
// an index would do (issue 17). So snippetd refreshes them itself where it loads in bulk. SQLite's planner
// needs none.
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** ANALYZE of snippetd's own tables (those of the connection's schema), on PostgreSQL; nothing on SQLite. */
export async function refreshPlannerStatistics(db: Db): Promise<void> {
  if (db.dialect !== 'postgres') return;
  const tables = await sql<{ name: string }>`SELECT tablename AS name FROM pg_tables
    WHERE schemaname = current_schema()`.execute(db.kysely);
  if (!tables.rows.length) return;
  await sql`ANALYZE ${sql.join(tables.rows.map((t) => sql.id(t.name)))}`.execute(db.kysely);
}
