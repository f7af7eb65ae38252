import type { Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// Rate-limit counters shared by every node of a PostgreSQL deployment (storage/rate-counters.ts): one row
// per limited key and fixed window, counted up in one statement. A SQLite server counts in memory.
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema
    .createTable('rate_limit_counters')
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_limit_counters_pk', ['key', 'window_start'])
    .execute();
}
