import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';

/** Instance settings as a key/value table of JSON values: new settings need no migration. */
export function settingsTable(db: Kysely<Database>) {
  return {
    async all(): Promise<Record<string, unknown>> {
      const rows = await db.selectFrom('application_settings').selectAll().execute();
      return Object.fromEntries(rows.map((r) => [r.key, JSON.parse(r.value)]));
    },
    async put(values: Record<string, unknown>): Promise<void> {
      await db.transaction().execute(async (tx) => {
        for (const [key, value] of Object.entries(values)) {
          await tx
            .insertInto('application_settings')
            .values({ key, value: JSON.stringify(value) })
            .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(value) }))
            .execute();
        }
      });
    },
    async remove(keys: string[]): Promise<void> {
      if (keys.length) await db.deleteFrom('application_settings').where('key', 'in', keys).execute();
    },
  };
}
