// One page of an ordered query and its total. Totals are not counted past 10,000 rows (or the fewer a window
// asks for), so a list never scans a huge table to fill X-Total (GitLab's offset pagination does the same),
// and not at all when the page's own rows tell it.
import { type Expression, type Kysely, PostgresAdapter, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import type { DialectName } from './database.ts';
import type { Database, Snippet } from './schema.ts';
import { byteOrder } from '../../order.ts';

import { MAX_COUNTED, type PageOf, type PageWindow } from '../../paging.ts';

export type { PageOf, PageWindow };

export async function fetchPage<Row>(
  kysely: Kysely<Database>,
  query: SelectQueryBuilder<Database, keyof Database, Row>,
  window: PageWindow,
): Promise<PageOf<Row>> {
  // Run by `kysely`, which may be other than the query's own: the reads off the event loop (Db.reader).
  const { rows } = await kysely.executeQuery(
    query
      .limit(window.limit + 1)
      .offset(window.offset)
      .compile(),
  );
  const most = window.countUpTo ?? MAX_COUNTED;
  let total = totalShownBy(window, rows.length, most);
  if (total === undefined) total = await countOf(kysely, query.clearOrderBy(), most);
  return { rows: rows.slice(0, window.limit) as Row[], total, hasMore: rows.length > window.limit };
}

/** The orders of snippet lists: newest first (by id), or the latest updated first (search, GitLab's order). */
export type SnippetOrder = 'newest' | 'updated';

/**
 * The paths of the files of the statement's `snippets` row, as one of its values: a statement costs more than
 * the little it reads. PostgreSQL's driver parses the json into a list; SQLite answers its text.
 */
export const SNIPPET_PATHS: Record<DialectName, RawBuilder<string[] | string>> = {
  postgres: sql`(SELECT coalesce(json_agg(f.path), '[]'::json) FROM snippet_files f WHERE f.snippet_id = snippets.id)`,
  sqlite: sql`(SELECT json_group_array(f.path) FROM snippet_files f WHERE f.snippet_id = snippets.id)`,
};

/** SNIPPET_PATHS's value as a list, in git's order. */
export const pathsInGitOrder = (value: string[] | string): string[] =>
  (typeof value === 'string' ? (JSON.parse(value) as string[]) : value).sort(byteOrder);

/**
 * A snippet of a list, on PostgreSQL with the paths of its files in git's order: the page's statement reads
 * them (SNIPPET_PATHS), where their own statement was another round trip a list (0.3-0.5 ms of its 3-5). On
 * SQLite a query is a call, and the paths' own query costs less than reading them with each row (a list's
 * CPU 360 → 466 µs).
 */
export type ListedSnippet = Snippet & { paths?: string[] };

/** Whether `kysely` runs on PostgreSQL, within a transaction too. */
export const isPostgres = (kysely: Kysely<Database>) => kysely.getExecutor().adapter instanceof PostgresAdapter;

/** A page row with its paths, if read, as a list in git's order (the row is the driver's own: changed, not copied). */
function listed(row: Snippet & { paths?: string[] | string }): ListedSnippet {
  if (row.paths !== undefined) row.paths = pathsInGitOrder(row.paths);
  return row as ListedSnippet;
}

/**
 * One page of `filtered` (snippets, nothing selected yet) in `order`, and its total.
 *
 * The offset is walked over the ids alone, which an index answers, and only the page's rows are read (a
 * deferred join): without it a deep page reads every row it skips (on SQLite, on the event loop: 26 ms for
 * the last of 100,000 snippets). The rows are then fetched by id alone, not through the filter again, which
 * let PostgreSQL read all 10,000 of an author's rows to find the 21 of the first page (11 ms).
 *
 * On PostgreSQL a page that may need counting (it lies within the rows counted: 10,000, or the window's countUpTo) is read with its count
 * in one statement: a round trip costs about as much as either query. On SQLite a query is a call, and the
 * two alone are cheaper than joined (which sorts the page again), so the count runs only when needed.
 *
 * `byKey`: the filter names its rows by key (search's gathered ids, thousands of them). They are then read
 * once, up to the one past those counted, for both the count and the page, on SQLite too: read for each, every
 * one of them was read twice (a member's search of a text in 3,000 files: 2 × 10-30 ms on PostgreSQL).
 */
export async function fetchSnippetPage(
  kysely: Kysely<Database>,
  filtered: SelectQueryBuilder<Database, 'snippets', object>,
  window: PageWindow,
  order: SnippetOrder,
  byKey = false,
): Promise<PageOf<ListedSnippet>> {
  const ordered = <Q extends SelectQueryBuilder<Database, 'snippets', object>>(q: Q): Q =>
    (order === 'updated' ? q.orderBy('snippets.updated_at', 'desc') : q).orderBy('snippets.id', 'desc') as Q;
  const ids = ordered(filtered.select('snippets.id'))
    .limit(window.limit + 1)
    .offset(window.offset);
  const page = kysely
    .selectFrom('snippets')
    .selectAll()
    .$if(isPostgres(kysely), (q) => q.select(SNIPPET_PATHS.postgres.as('paths')))
    .where('id', 'in', ids);
  let rows: ListedSnippet[];
  let total: number | null | undefined;
  const most = window.countUpTo ?? MAX_COUNTED;
  const countable = window.offset + window.limit < most;
  if (countable && (byKey || isPostgres(kysely))) {
    const answer = byKey
      ? await readOnceForPage(kysely, ordered(filtered.select(['snippets.id', 'snippets.updated_at'])), window, order)
      : await kysely
          .selectFrom(countQuery(kysely, filtered, most).as('counted'))
          .leftJoin(page.as('page'), (join) => join.onTrue())
          .selectAll('page')
          .select('counted.n as page_total')
          .$if(order === 'updated', (q) => q.orderBy('page.updated_at', 'desc'))
          .orderBy('page.id', 'desc')
          .execute();
    rows = answer.filter((r) => r.id !== null).map(({ page_total: _, ...row }) => listed(row as Snippet));
    total = counted(answer[0].page_total, most);
  } else {
    rows = (await ordered(page).execute()).map(listed);
    total = totalShownBy(window, rows.length, most);
    if (total === undefined) total = await countOf(kysely, filtered, most);
  }
  return { rows: rows.slice(0, window.limit), total, hasMore: rows.length > window.limit };
}

/**
 * The page of `ordered` (snippets' ids and update times, in `order`) and its total (counted up to one past
 * the window's countUpTo), the rows read once for both.
 */
async function readOnceForPage(
  kysely: Kysely<Database>,
  ordered: SelectQueryBuilder<Database, 'snippets', object>,
  window: PageWindow,
  order: SnippetOrder,
) {
  const by = (table: string) =>
    sql.raw(order === 'updated' ? `${table}.updated_at DESC, ${table}.id DESC` : `${table}.id DESC`);
  const { rows } = await sql<Partial<ListedSnippet> & { page_total: number | string }>`WITH matched AS MATERIALIZED
    (SELECT * FROM ${ordered.limit((window.countUpTo ?? MAX_COUNTED) + 1)} AS m)
    SELECT page.*, counted.n AS page_total FROM (SELECT count(*) AS n FROM matched) AS counted
    LEFT JOIN (SELECT *${isPostgres(kysely) ? sql`, ${SNIPPET_PATHS.postgres} AS paths` : sql``} FROM snippets WHERE id IN (SELECT matched.id FROM matched ORDER BY ${by('matched')}
      LIMIT ${window.limit + 1} OFFSET ${window.offset})) AS page ON true
    ORDER BY ${by('page')}`.execute(kysely);
  return rows;
}

/**
 * The total that a page's own rows prove (`fetched`: up to limit + 1 rows from the offset), or undefined
 * when only a count can tell: a full page past the first `most` rows means more than `most`, a page that
 * is not full ends the list.
 */
function totalShownBy(window: PageWindow, fetched: number, most: number): number | null | undefined {
  if (fetched > window.limit) return window.offset + fetched > most ? null : undefined;
  if (fetched === 0 && window.offset > 0) return undefined;
  return window.offset + fetched > most ? null : window.offset + fetched;
}

/** Counted over a constant, not the rows: the filter alone decides, and an index can answer it. */
function countQuery(
  kysely: Kysely<Database>,
  query: SelectQueryBuilder<Database, keyof Database, unknown>,
  most: number,
) {
  return kysely
    .selectFrom(
      query
        .clearSelect()
        .select(sql.lit(1).as('one'))
        .limit(most + 1)
        .as('t'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'));
}

async function countOf(
  kysely: Kysely<Database>,
  query: SelectQueryBuilder<Database, keyof Database, unknown>,
  most: number,
) {
  return counted((await countQuery(kysely, query, most).executeTakeFirstOrThrow()).n, most);
}

const counted = (n: number | string, most: number) => (Number(n) > most ? null : Number(n));

/**
 * The SQL function that lowercases a column matched with `text`: on SQLite a text beyond ASCII needs
 * unicode_lower (sqlite-functions.ts), as its lower() folds ASCII letters only; elsewhere lower().
 */
export const lowerFunction = (dialect: DialectName, text: string) =>
  sql.raw(dialect === 'sqlite' && /[^\0-\x7f]/u.test(text) ? 'unicode_lower' : 'lower');

/**
 * `column` contains `text`, case-insensitively and literally (% and _ in the text match themselves). On SQLite
 * a substring or a suffix is compared with instr and substr: its LIKE backtracks, in time of the text's length
 * times the column's (a 2,000-character text against a description as long: 2.5 ms, on the event loop).
 * PostgreSQL's LIKE backtracks too (200 such rows: 746 ms in the server, strpos 8 ms): there a substring is
 * matched by strpos, beside a LIKE of the text's pieces in order, which a trigram index still reads and which
 * never backtracks far (each piece is found once, left to right).
 */
export function containsText(
  dialect: DialectName,
  column: Expression<string | null>,
  text: string,
  where: 'anywhere' | 'suffix' | 'prefix' = 'anywhere',
) {
  const lowered = sql`${lowerFunction(dialect, text)}(coalesce(${column}, ''))`;
  const lowerText = text.toLowerCase();
  if (dialect === 'sqlite' && where === 'anywhere') return sql<boolean>`instr(${lowered}, ${lowerText}) > 0`;
  if (dialect === 'sqlite' && where === 'suffix' && lowerText !== '')
    return sql<boolean>`substr(${lowered}, ${-[...lowerText].length}) = ${lowerText}`;
  const escapeLike = (t: string) => t.replace(/[\\%_]/g, (c) => `\\${c}`);
  const escaped = escapeLike(lowerText);
  if (where === 'anywhere' && lowerText.length > LIKE_PIECE_CHARS) {
    const pieces = [...lowerText].reduce<string[]>((out, c, i) => {
      if (i % LIKE_PIECE_CHARS === 0) out.push('');
      out[out.length - 1] += c;
      return out;
    }, []);
    const pattern = `%${pieces.map(escapeLike).join('%')}%`;
    return sql<boolean>`(${lowered} LIKE ${pattern} ESCAPE '\\' AND strpos(${lowered}, ${lowerText}) > 0)`;
  }
  const pattern = where === 'suffix' ? `%${escaped}` : where === 'prefix' ? `${escaped}%` : `%${escaped}%`;
  return sql<boolean>`${lowered} LIKE ${pattern} ESCAPE '\\'`;
}

/** Characters of a LIKE piece on PostgreSQL (containsText): a text no longer is matched by one LIKE. */
const LIKE_PIECE_CHARS = 16;
