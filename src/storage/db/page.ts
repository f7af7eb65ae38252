// One page of an ordered query and its total. Totals are not counted past 10,000 rows, so a list never
// scans a huge table to fill X-Total (GitLab's offset pagination does the same).
import { type Expression, type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { Database } from './schema.ts';

export const MAX_COUNTED = 10_000;

/** Which rows of a list: the http layer turns page/per_page into this. */
export interface PageWindow {
  offset: number;
  limit: number;
}

export interface PageOf<Row> {
  rows: Row[];
  /** null when there are more than MAX_COUNTED rows. */
  total: number | null;
  hasMore: boolean;
}

export async function fetchPage<Row>(
  kysely: Kysely<Database>,
  query: SelectQueryBuilder<Database, keyof Database, Row>,
  window: PageWindow,
): Promise<PageOf<Row>> {
  const rows = await query
    .limit(window.limit + 1)
    .offset(window.offset)
    .execute();
  const counted = await kysely
    .selectFrom(
      query
        .clearOrderBy()
        .limit(MAX_COUNTED + 1)
        .as('t'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const total = Number(counted.n) > MAX_COUNTED ? null : Number(counted.n);
  return { rows: rows.slice(0, window.limit) as Row[], total, hasMore: rows.length > window.limit };
}

/** `column` contains `text`, case-insensitively and literally (% and _ in the text match themselves). */
export function containsText(column: Expression<string | null>, text: string) {
  const pattern = `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<boolean>`lower(coalesce(${column}, '')) LIKE ${pattern} ESCAPE '\\'`;
}
