// The search index of snippets' files: one row per file of a snippet's head with its path and, for a text
// file within the size limit, its content (else ''). It is written by the snippets table's syncFiles and
// delete, so in the transaction of every write, push and delete. Searching it: SQLite keeps FTS5 indexes with
// the trigram tokenizer over pieces of the rows and of the snippets' fields (snippet_file_text_fts,
// snippet_fields_fts), filled off the event loop from a queue (search-indexing.ts, migration 0012);
// PostgreSQL pg_trgm GIN indexes; both answer a case-insensitive substring of three characters or more
// without reading every row. On SQLite a source still queued is a candidate of every search, checked exactly.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DialectName } from '../database.ts';
import { containsText } from '../page.ts';
import type { Database } from '../schema.ts';
import type { IndexedFile } from './snippets.ts';
import { phraseText, SOURCE_OF_ROWID } from '../search-indexing.ts';
import { readParts } from '../../git/object-parts.ts';
import { codePoints } from '../../../text-scan.ts';

/**
 * The default of the largest file whose text is indexed (the setting search_indexed_file_size_limit_kb; GitLab's
 * indexer keeps the same 1 MiB default); a larger one is indexed by path only.
 */
export const TEXT_INDEX_MAX_BYTES = 1024 * 1024;

/** A file's text as the index keeps it: '' for a binary file (git's rule: a NUL byte) or one over `maxBytes`. */
export function indexedText(content: Buffer, maxBytes: number): string {
  if (content.length > maxBytes || content.includes(0)) return '';
  return content.toString('utf8');
}

const inflateAsync = promisify(zlib.inflate);

/** The inflated blobs of a snippet's repository, by id (they are written before the index in a transaction). */
async function snippetBlobs(db: Kysely<Database>, snippetId: number, ids: string[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (!ids.length) return out;
  const rows = await db
    .selectFrom('git_objects as o')
    .innerJoin('git_repositories as r', 'r.id', 'o.repository_id')
    .select(['o.oid', 'o.data', 'o.parts'])
    .where('r.kind', '=', 'snippet')
    .where('r.owner_id', '=', snippetId)
    .where(
      'o.oid',
      'in',
      ids.map((id) => Buffer.from(id, 'hex')),
    )
    .execute();
  // A body from PART_BYTES deflated on is kept in parts (a 1 MiB file of random text is), and inflated in
  // Node's thread pool: up to the indexed-size setting (8 MiB) a file, several files a write.
  for (const r of rows)
    out.set(
      Buffer.from(r.oid).toString('hex'),
      r.parts === null ? zlib.inflateSync(r.data) : await inflateAsync(await readParts(db, r.parts)),
    );
  return out;
}

/**
 * Rows for files, their content read only when it may be indexed (files up to `maxBytes`): from `bodies` (blob
 * id → content), the blobs a write has in hand, else from the repository's rows.
 */
export async function textRows(
  db: Kysely<Database>,
  snippetId: number,
  files: IndexedFile[],
  maxBytes: number,
  bodies: ReadonlyMap<string, Buffer> = new Map(),
) {
  const small = files.filter((f) => f.size <= maxBytes && !bodies.has(f.blob_id)).map((f) => f.blob_id);
  const blobs = await snippetBlobs(db, snippetId, [...new Set(small)]);
  return files.map((f) => {
    const blob = bodies.get(f.blob_id) ?? blobs.get(f.blob_id);
    return { snippet_id: snippetId, path: f.path, content: blob ? indexedText(blob, maxBytes) : '' };
  });
}

/**
 * PostgreSQL: ASCII punctuation and the capital letters it is kept as in a file's marked text (migration 0013),
 * which is otherwise lowercased, so that pg_trgm, which takes only letters and digits into trigrams, makes
 * trigrams across it: `beta(4` is looked for as `betaQ4`, not by `beta` and `4`. A lowercased text holds no
 * capital, so a capital there is a mark, and a mark with a letter of its own is told apart exactly: a
 * searched text without SHARED_MARKS is found by LIKE on the marked text alone (byte by byte, where ILIKE
 * lowercases each candidate's whole text again). 26 letters for 32 marks: those of SHARED_MARKS share one
 * with another, and a text holding one is checked with ILIKE too. A change needs the column made again.
 */
const MARKS = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
const MARK_LETTERS = 'BDHHCCPQXULJFZNWKRYSBAOATEVEGIMI';
const SHARED_MARKS = /[!?#$%&@\\^`|~]/;
const literal = (text: string) => sql.raw(`'${text.replace(/'/g, "''")}'`);
/**
 * `text` lowercased with its marks as capitals, in SQL: the marked text a file's is searched in. A searched
 * text is marked by the same SQL, so that both are lowercased alike; then no LIKE wildcard or escape is left.
 */
export const MARKED_TEXT = (text: RawBuilder<unknown> | ReturnType<typeof sql.ref>) =>
  sql<string>`translate(lower(${text}), ${literal(MARKS)}, ${literal(MARK_LETTERS)})`;

/** A column of `table` (an alias, or '' for snippet_file_text itself). */
const columnOf = (table: string) => (name: string) => sql.ref<string>(table ? `${table}.${name}` : name);

/**
 * PostgreSQL: whether the indexed text in `table` (an alias, or '' for snippet_file_text itself) holds `text`,
 * any case: through the marked text, and ILIKE when the marked text alone cannot tell.
 */
function markedTextHolds(table: string, text: string) {
  const column = columnOf(table);
  const marked = sql<boolean>`${column('marked_text')} LIKE '%' || ${MARKED_TEXT(sql`${text}::text`)} || '%'`;
  return SHARED_MARKS.test(text)
    ? sql<boolean>`(${marked} AND ${column('content')} ILIKE ${likePattern(text)})`
    : marked;
}

/**
 * An FTS5 query for the text's candidates: every trigram of its first MAX_PHRASE_UNITS, each in double quotes
 * (its own quotes doubled). The index keeps no positions (migration 0018), so it cannot ask for the phrase:
 * a candidate holds them all somewhere in one piece, and is checked exactly.
 */
function ftsQuery(text: string): string {
  const chars = [...phraseText(text)];
  const trigrams = new Set(chars.slice(2).map((c, i) => `${chars[i]}${chars[i + 1]}${c}`));
  return [...trigrams].map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND ');
}
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
/** The source (snippet_file_text or snippet) of an FTS row, a piece of it (search-indexing.ts). */
const SOURCE_OF_PIECE = sql.raw(SOURCE_OF_ROWID);
/**
 * Sources with work queued (to index, or old pieces to delete: a snippet's edited description, an id an
 * ephemeral reset gave again): the index may not say what they hold now, so they are candidates of every
 * search, checked exactly, and their pieces are not taken at their word.
 */
const queued = (kind: 'file' | 'fields') => sql`SELECT source_id FROM search_index_queue WHERE kind = ${kind}`;

/**
 * A search waits while the queued text is above this (the indexer works through it meanwhile): it reads the
 * queued sources' text with LIKE, about 2 ms a MiB here, so at most some 30 ms a query (in the SQLite
 * reader's thread, Db.reader, not on the event loop).
 */
export const QUEUE_SCAN_MAX_BYTES = 16 * 1024 * 1024;
/** A search waits at most this long, then reads the whole queue: slower, but its answer stays exact. */
const QUEUE_WAIT_MAX_MS = 10_000;

/**
 * A text in up to this many files and snippets is found by the ids gathered through the indexes (idsHolding),
 * a more common one by walking the snippets latest first. Gathering costs some microseconds a file (on
 * PostgreSQL each candidate is checked with LIKE on its marked text), the walk's count some a snippet until it
 * has counted all it counts: they cost alike at about 20,000 files on SQLite, and on PostgreSQL, since a
 * candidate's check is a LIKE, at about twice that (measured counting to 10,001: `beta(4`, in 19,442 files,
 * walked 265 ms, gathered 70). A walk's worst case, a text the viewer may see in few snippets, reads every
 * snippet the viewer may see: why the bound stays though the count is shorter now.
 */
const GATHERED = { sqlite: 20_000, postgres: 40_000 };

/**
 * Content search of a text in more than `few` files and snippets first walks the snippets the viewer may see,
 * latest first, for the holders a page and its count need: the latest `probe`, then, when those held at least
 * 1 in `margin` × needed ÷ probe (a share that the latest `budget` would hold `margin` times over), the latest
 * `budget`. A text in a fifth of the files has its first 101 holders within some hundreds of snippets, where
 * gathering reads every holder (`beta(4`, 26,000 candidate files on PostgreSQL: 40-120 ms, walked 6 ms;
 * SQLite's count of them alone took 20 ms). A rarer text is gathered at once: the probe cost a text in 25
 * files 4-5 ms of PostgreSQL's CPU, gathering it less. A walk that finds too few costs its snippets' checks,
 * some microseconds each, before the search goes on as without it.
 */
export const WALKED_FIRST = { few: 1_000, probe: 250, budget: 2_000, margin: 2 };

/** `reads`: where the search's reads go (off SQLite's event loop: Db.reader). */
export function snippetTextTable(db: Kysely<Database>, dialect: DialectName, reads: Kysely<Database>) {
  /**
   * SQLite: how many sources of `table` (an FTS index) hold all `texts`, counted up to `upTo`. Rows are pieces:
   * their sources are counted (texts in different pieces of one source are not: a guess), or with `pieces`
   * the pieces themselves, at most too many and cheaper (counting 20,001 sources of a common word took 10 ms,
   * its pieces 5).
   */
  const ftsCount = async (
    texts: string[],
    upTo: number,
    table: 'snippet_file_text_fts' | 'snippet_fields_fts',
    pieces = false,
  ) => {
    const phrase = texts.map(ftsQuery).join(' AND ');
    const counted = pieces ? sql`1` : sql`DISTINCT ${SOURCE_OF_PIECE}`;
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM (SELECT ${counted}
      FROM ${sql.table(table)} WHERE ${sql.table(table)} MATCH ${phrase} LIMIT ${upTo})`.execute(reads);
    return Number(rows[0].n);
  };
  /**
   * Whether the file row in `table` (an alias, or '' for snippet_file_text itself) holds `text` (any case) in its
   * path or its indexed text, read row by row (PostgreSQL through the marked text).
   */
  const fileHolds = (table: string, text: string) => {
    const { inPath, inText } = fileHoldsWhere(table, text);
    return sql<boolean>`(${inPath} OR ${inText})`;
  };
  /** Whether the file row holds `text` in its path, and in its indexed text, each alone. */
  const fileHoldsWhere = (table: string, text: string) => {
    const column = columnOf(table);
    if (dialect === 'sqlite')
      return {
        inPath: containsText(dialect, column('path'), text),
        inText: containsText(dialect, column('content'), text),
      };
    return {
      inPath: sql<boolean>`lower(${column('path')}) LIKE ${likePattern(text.toLowerCase())} ESCAPE '\\'`,
      inText: markedTextHolds(table, text),
    };
  };
  return {
    /**
     * Deletes the rows of `stale` paths and writes rows for `changed` files (whose blobs are in `bodies` or in
     * the repository), the text of files up to `maxBytes`. A path of `changed` with a row must be in `stale`.
     */
    async sync(
      snippetId: number,
      stale: string[],
      changed: IndexedFile[],
      maxBytes: number,
      bodies?: ReadonlyMap<string, Buffer>,
    ): Promise<void> {
      if (stale.length)
        await db
          .deleteFrom('snippet_file_text')
          .where('snippet_id', '=', snippetId)
          .where('path', 'in', stale)
          .execute();
      if (changed.length)
        await db
          .insertInto('snippet_file_text')
          .values(await textRows(db, snippetId, changed, maxBytes, bodies))
          .execute();
    },
    /** The texts the index holds of these paths of the snippet, by path. */
    async of(snippetId: number, paths: string[]): Promise<Map<string, string>> {
      if (!paths.length) return new Map();
      const rows = await db
        .selectFrom('snippet_file_text')
        .select(['path', 'content'])
        .where('snippet_id', '=', snippetId)
        .where('path', 'in', paths)
        .execute();
      return new Map(rows.map((r) => [r.path, r.content]));
    },
    async deleteSnippet(snippetId: number): Promise<void> {
      await db.deleteFrom('snippet_file_text').where('snippet_id', '=', snippetId).execute();
    },
    /** The ids of snippets with a file whose path or content holds `text` (three characters or more), any case. */
    snippetsHolding(text: string) {
      if (dialect === 'sqlite') {
        // The index's candidates and the queued rows, each checked here.
        const indexed = sql`SELECT ${SOURCE_OF_PIECE} FROM snippet_file_text_fts
          WHERE snippet_file_text_fts MATCH ${ftsQuery(text)}`;
        return db
          .selectFrom('snippet_file_text as f')
          .select('f.snippet_id')
          .where(sql<boolean>`f.id IN (${indexed} UNION ALL ${queued('file')})`)
          .where(fileHolds('f', text));
      }
      return db
        .selectFrom('snippet_file_text')
        .select('snippet_id')
        .where(sql<boolean>`(path ILIKE ${likePattern(text)} OR ${markedTextHolds('', text)})`);
    },
    /**
     * SQLite only: the ids of snippets whose title, description or file name hold every text (three characters
     * or more each, any case), maybe not all in one field: a narrowing the exact conditions then check.
     */
    snippetsWithFields(texts: string[]) {
      // Each text in some piece of the snippet's (its description's pieces are rows of their own).
      const each = texts.map(
        (t) => sql`SELECT ${SOURCE_OF_PIECE} FROM snippet_fields_fts WHERE snippet_fields_fts MATCH ${ftsQuery(t)}`,
      );
      return sql`${sql.join(each, sql` INTERSECT `)} UNION ${queued('fields')}`;
    },
    /** The ids of snippets whose title or description holds `text` (three characters or more), any case. */
    snippetsWithFieldsHolding(text: string) {
      if (dialect === 'sqlite') {
        // As snippetsHolding: the index's candidates (its fields include the file name) and the queued, checked.
        const holds = sql`(${containsText(dialect, sql.ref('s.title'), text)}
          OR ${containsText(dialect, sql.ref('s.description'), text)})`;
        const indexed = sql`SELECT ${SOURCE_OF_PIECE} AS id FROM snippet_fields_fts
          WHERE snippet_fields_fts MATCH ${ftsQuery(text)}`;
        return sql`SELECT s.id FROM snippets s WHERE s.id IN (${indexed} UNION ALL ${queued('fields')}) AND ${holds}`;
      }
      const pattern = likePattern(text.toLowerCase());
      return sql`SELECT id FROM snippets WHERE lower(coalesce(title, '')) LIKE ${pattern}
        OR lower(coalesce(description, '')) LIKE ${pattern}`;
    },
    /**
     * The files of the outer query's snippet whose path or text holds `text`, read through the snippet's rows.
     * On PostgreSQL the OFFSET 0 keeps it a question asked per snippet (after its title, in an OR): without
     * it the planner may, misjudging a common text as rare, gather every matching file into a hashed set
     * first (150,000 files to count 10,001 snippets whose titles matched anyway: 340 ms, not 7 ms).
     */
    filesOfSnippetHolding(text: string) {
      return db
        .selectFrom('snippet_file_text as ft')
        .select('ft.id')
        .where(sql<boolean>`ft.snippet_id = snippets.id`)
        .where(fileHolds('ft', text))
        .$if(dialect === 'postgres', (q) => q.modifyEnd(sql`OFFSET 0`));
    },
    /**
     * Whether `texts` (each three characters or more) are all in at least `many` indexed snippets' fields:
     * counted through the index, stopping at `many`.
     */
    async isCommon(texts: string[], many: number): Promise<boolean> {
      if (dialect === 'postgres') {
        const patterns = texts.map((t) => likePattern(t.toLowerCase()));
        const holds = (column: string) =>
          sql.join(
            patterns.map((p) => sql`lower(coalesce(${sql.ref(column)}, '')) LIKE ${p}`),
            sql` AND `,
          );
        const rows = sql`SELECT 1 FROM snippets WHERE (${holds('title')}) OR (${holds('description')})
          OR (${holds('file_name')})`;
        const { rows: counted } = await sql<{
          n: number;
        }>`SELECT count(*) AS n FROM (${rows} LIMIT ${many}) AS x`.execute(reads);
        return Number(counted[0].n) >= many;
      }
      return (await ftsCount(texts, many, 'snippet_fields_fts')) >= many;
    },
    /**
     * How the snippets holding `text` are found. A text in more than WALKED_FIRST.few files and snippets is
     * first looked for by `walkFirst` (the ids it found, or null). Else, or when that found too few: by their
     * ids, gathered once through the indexes when it is in up to GATHERED files and snippets, else
     * (`commonText`) by walking the snippets latest first.
     */
    async howToFindHolding(
      text: string,
      walkFirst: () => Promise<number[] | null>,
    ): Promise<{ commonText?: boolean; holdingIds?: number[] }> {
      if (codePoints(text, 3) < 3) return {};
      const many = GATHERED[dialect];
      let holders = await this.estimateHolding(text, WALKED_FIRST.few);
      if (holders > WALKED_FIRST.few) {
        const walked = await walkFirst();
        if (walked) return { holdingIds: walked };
        // SQLite counted only up to `few`: on, up to `many`.
        if (dialect === 'sqlite') holders = await this.estimateHolding(text, many);
      }
      const holdingIds = holders > many ? null : await this.idsHolding(text, many);
      return holdingIds === null ? { commonText: true } : { holdingIds };
    },
    /**
     * How many files and snippets' fields hold `text` (three characters or more): counted through SQLite's
     * index up to one past `upTo` (pieces are counted, and the fields' index holds the file names too: above
     * the truth at worst), or estimated by PostgreSQL's planner (counting them would check each candidate's
     * text, some microseconds each).
     */
    async estimateHolding(text: string, upTo: number): Promise<number> {
      if (dialect === 'sqlite') {
        const inFiles = await ftsCount([text], upTo + 1, 'snippet_file_text_fts', true);
        if (inFiles > upTo) return inFiles;
        return Math.max(inFiles, await ftsCount([text], upTo + 1, 'snippet_fields_fts', true));
      }
      const { files, fields } = this.holderQueries(text);
      const { rows: plan } = await sql<{
        'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }];
      }>`EXPLAIN (FORMAT JSON) ${files} UNION ALL ${fields}`.execute(reads);
      return plan[0]['QUERY PLAN'][0].Plan['Plan Rows'];
    },
    /** The statements of the ids of the snippets with a file, and of those with fields, holding `text`. */
    holderQueries(text: string) {
      return {
        files: sql`SELECT f.snippet_id AS id FROM ${this.snippetsHolding(text)} AS f`,
        // A subquery: SQLite's compound (EXCEPT, UNION ALL) would otherwise take in the files' ids too.
        fields: sql`SELECT g.id FROM (${this.snippetsWithFieldsHolding(text)}) AS g`,
      };
    },
    /**
     * The ids of the snippets whose title, description, or a file's path or text holds `text` (three characters
     * or more, any case), gathered through the indexes (snippetsHolding and snippetsWithFieldsHolding), for a
     * text estimateHolding found in up to `many`; on PostgreSQL null when more than `many` files or snippets
     * hold it after all.
     */
    async idsHolding(text: string, many: number): Promise<number[] | null> {
      const { files, fields } = this.holderQueries(text);
      if (dialect === 'sqlite') {
        const { rows } = await sql<{ id: number }>`${files} UNION ${fields}`.execute(reads);
        return rows.map((r) => r.id);
      }
      const { rows } = await sql<{ files: number[]; fields: number[] }>`SELECT
        ARRAY(${files} LIMIT ${many + 1}) AS files, ARRAY(${fields} LIMIT ${many + 1}) AS fields`.execute(reads);
      if (rows[0].files.length > many || rows[0].fields.length > many) return null;
      return [...new Set([...rows[0].files, ...rows[0].fields])];
    },
    /** SQLite: the sources queued for indexing and their text's size (a server indexes them); null elsewhere. */
    async indexBacklog(): Promise<{ sources: number; bytes: number } | null> {
      if (dialect !== 'sqlite') return null;
      const { rows } = await sql<{ sources: number; bytes: number }>`SELECT count(*) AS sources,
        coalesce(sum(text_bytes), 0) AS bytes FROM search_index_queue WHERE op = 'index'`.execute(reads);
      return { sources: Number(rows[0].sources), bytes: Number(rows[0].bytes) };
    },
    /**
     * SQLite: waits (up to QUEUE_WAIT_MAX_MS) while more than QUEUE_SCAN_MAX_BYTES of text is queued for
     * indexing, which every search would read; at once when the indexer keeps up, and on PostgreSQL.
     */
    async awaitIndexBacklog(): Promise<void> {
      if (dialect !== 'sqlite') return;
      const waitUntil = performance.now() + QUEUE_WAIT_MAX_MS;
      for (;;) {
        const { rows } = await sql<{ n: number }>`SELECT coalesce(sum(text_bytes), 0) AS n FROM search_index_queue
          WHERE op = 'index'`.execute(reads);
        if (Number(rows[0].n) <= QUEUE_SCAN_MAX_BYTES || performance.now() >= waitUntil) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    /**
     * The indexed files of `snippetIds` whose path or text holds `text` (any case), with their text's length
     * and whether the text holds it: a page of results reads only the texts it shows lines of (where the
     * database's lowercase and JavaScript's differ, as for U+212A, no line is shown). Each condition is
     * computed once a file: the inner query is kept whole (LIMIT -1, OFFSET 0), or the outer WHERE would
     * compute them again.
     */
    async filesHolding(snippetIds: number[], text: string) {
      if (!snippetIds.length) return [];
      const { inPath, inText } = fileHoldsWhere('', text);
      const { rows } = await sql<{ snippet_id: number; path: string; length: number; in_text: boolean | number }>`
        SELECT snippet_id, path, length, in_text FROM (
          SELECT snippet_id, path, length(content) AS length, ${inPath} AS in_path, ${inText} AS in_text
          FROM snippet_file_text WHERE snippet_id IN (${sql.join(snippetIds)})
          ${dialect === 'sqlite' ? sql`LIMIT -1` : sql`OFFSET 0`}
        ) AS f WHERE in_path OR in_text`.execute(reads);
      return rows.map(({ snippet_id, path, length, in_text }) => ({
        snippet_id,
        path,
        length,
        inText: Boolean(in_text),
      }));
    },
    /** `chars` characters of the indexed text of each of `files` from the character `from` on (1-based). */
    async textPiecesOf(files: { snippet_id: number; path: string }[], from: number, chars: number) {
      if (!files.length) return [];
      return reads
        .selectFrom('snippet_file_text')
        .select(['snippet_id', 'path', sql<string>`substr(content, ${from}, ${chars})`.as('piece')])
        .where((eb) => eb.or(files.map((f) => eb.and([eb('snippet_id', '=', f.snippet_id), eb('path', '=', f.path)]))))
        .execute();
    },
  };
}
