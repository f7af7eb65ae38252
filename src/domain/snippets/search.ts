// GitLab's snippet search by title (its `snippet_titles` scope): which searches it refuses to run
// (Gitlab::Search::AbuseDetection: they find nothing), and how a term becomes a match (Snippet.search,
// Gitlab::SQL::Pattern#fuzzy_search over title, description and file name). The snippets searched are the
// finder's: whatever the viewer may see, never anything else.
import type { Store } from '../../storage/db/store.ts';
import { isStatementTimeout } from '../../storage/db/database.ts';
import type { Snippet } from '../../storage/db/schema.ts';
import type { SnippetListFilter, TextMatch } from '../../storage/db/tables/snippets.ts';
import { findReadableProject } from '../projects.ts';
import { VISIBILITIES } from '../access.ts';
import type { PageOf, PageWindow } from '../../storage/db/page.ts';
import type { Viewer } from '../policy.ts';
import { findSnippetsMatching } from './finder.ts';
import { byteOrder } from '../../order.ts';
import { Failure, forbidden } from '../failure.ts';
import { getSettings } from '../settings.ts';
import { codePoints } from '../../text-scan.ts';

/** Words GitLab will not search for on their own. */
const STOP_WORDS = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
    ' ',
  ),
);
/** A search shorter than this finds nothing (but `*` and the stop words, refused for their own reason). */
const MIN_TERM_LENGTH = 2;
/** A word this long finds nothing; a URL may be twice as long. */
const ABUSIVE_TERM_SIZE = 100;
/** Words shorter than this are left out of a search; when no word is left, the whole text must equal a column. */
const MIN_CHARS_FOR_PARTIAL_MATCHING = 3;

const length = (text: string) => codePoints(text);
/** Ruby's String#split with no argument: on runs of whitespace, no empty words. */
const words = (text: string) => text.split(/\s+/u).filter((w) => w !== '');

/**
 * GitLab's limits on a search without Elasticsearch (SearchController's NON_ES_SEARCH_TERM_LIMIT and _CHAR_LIMIT):
 * past them a search is refused; here, as an abusive one, with nothing found. Each word is a condition of the
 * query, and SQLite refuses a query of many hundreds.
 */
const MAX_SEARCH_TERMS = 64;
const MAX_SEARCH_CHARS = 4096;

/** Gitlab::Search::AbuseDetection on the search term: such a search is answered with nothing found. */
export function isAbusiveSearch(search: string): boolean {
  if (STOP_WORDS.has(search)) return true;
  if (length(search) > MAX_SEARCH_CHARS || words(search).length > MAX_SEARCH_TERMS) return true;
  if (search !== '' && search !== '*' && length(search) < MIN_TERM_LENGTH) return true;
  return words(search).some((w) => length(w) >= (/^https?:\/\//i.test(w) ? ABUSIVE_TERM_SIZE * 2 : ABUSIVE_TERM_SIZE));
}

/** A term in double quotes, alone between spaces or the ends, is one word, spaces and all. */
const QUOTED_TERM = /(?<=^| )"[^"]+"(?= |$)/gu;

/**
 * Gitlab::SQL::Pattern's fuzzy match of a search: null (everything) for a blank one; else every word of at
 * least three characters must be in the column, or, when there is none, the whole search must equal it.
 */
export function fuzzyTextMatch(search: string): TextMatch | null {
  const squished = search.trim().replace(/\s+/gu, ' ');
  if (squished === '') return null;
  const quoted: string[] = [];
  const rest = squished.replace(QUOTED_TERM, (term) => {
    quoted.push(term.slice(1, -1));
    return '';
  });
  const terms = [...words(rest), ...quoted].filter((t) => length(t) >= MIN_CHARS_FOR_PARTIAL_MATCHING);
  // Each word once, case aside: 40 copies of one long word made a title search read each description 40 times.
  const distinct = [...new Map(terms.map((t) => [t.toLowerCase(), t])).values()];
  return distinct.length ? { allOf: distinct } : { equals: squished };
}

/** Where a search looks: everywhere, in one project, or in a group's projects and its subgroups'. */
export interface SearchPlace {
  projectId?: number;
  groupTraversalIds?: string;
}

const NOTHING = { rows: [], total: 0, hasMore: false };

/** GitLab's answer to a search across the instance when global_search_snippet_titles_enabled is off. */
export const GLOBAL_SEARCH_DISABLED = 'Global Search is disabled for this scope';

/** 403 for a search across the instance (no project, no group) while the setting turns it off. */
async function checkGlobalSearch(store: Store, place: SearchPlace): Promise<void> {
  if (place.projectId !== undefined || place.groupTraversalIds !== undefined) return;
  if (!(await getSettings(store)).global_search_snippet_titles_enabled) throw forbidden(GLOBAL_SEARCH_DISABLED);
}
/**
 * `search`'s answer, or GitLab's 408 when one of its statements ran into the searches' time limit (on
 * PostgreSQL: storage/db/database.ts, Db.searcher), as GitLab's API::Search answers a cancelled query.
 */
async function withinTimeLimit<T>(search: () => Promise<T>): Promise<T> {
  try {
    return await search();
  } catch (error) {
    throw isStatementTimeout(error) ? new Failure('search_timeout') : error;
  }
}

/** A title search's text in this many snippets' fields is searched by walking the snippets, not through the index. */
const COMMON = 2000;

/** One page of the snippets the viewer may see whose title, description or file name match, latest update first. */
export async function searchSnippetTitles(
  store: Store,
  viewer: Viewer,
  search: string,
  window: PageWindow,
  place: SearchPlace = {},
): Promise<PageOf<Snippet>> {
  return withinTimeLimit(() => titlesPage(store, viewer, search, window, place));
}

async function titlesPage(
  store: Store,
  viewer: Viewer,
  search: string,
  window: PageWindow,
  place: SearchPlace,
): Promise<PageOf<Snippet>> {
  await checkGlobalSearch(store, place);
  if (isAbusiveSearch(search)) return NOTHING;
  const matching = fuzzyTextMatch(search) ?? undefined;
  if (matching !== undefined) await store.snippets.texts.awaitIndexBacklog();
  const commonText =
    matching !== undefined && 'allOf' in matching && (await store.snippets.texts.isCommon(matching.allOf, COMMON));
  const filter = { matching, commonText, ...place };
  return findSnippetsMatching(store, viewer, filter, window);
}

/** At most this many matching lines of a file are shown. */
export const MAX_LINES_PER_FILE = 10;
/** A shown line is cut at this many characters. */
const MAX_LINE_LENGTH = 500;

/**
 * A found line as shown: at most MAX_LINE_LENGTH characters, copied. V8 makes a slice of a long string a view
 * that keeps the whole string alive: 500 characters of a line of a MiB kept its MiB until the answer was sent,
 * and four searches over files of one long line kept over 250 MiB.
 */
function shownLine(line: string): string {
  const shown = (line.endsWith('\r') ? line.slice(0, -1) : line).slice(0, MAX_LINE_LENGTH);
  return Buffer.from(shown, 'utf16le').toString('utf16le');
}

/** A file of a found snippet whose path or content holds the text, with the lines that hold it (1-based). */
export interface FileMatch {
  path: string;
  lines: { number: number; text: string }[];
}

export interface BlobResult {
  snippet: Snippet;
  matches: FileMatch[];
}

/**
 * The lines of a file that hold a needle (lowercase, without a newline), up to MAX_LINES_PER_FILE, from its
 * text fed a piece at a time: the file is never held whole (a line at most), and reading stops at the last
 * line shown. Whole lines within a piece are found with indexOf, not split one by one; a line is lowercased
 * whole, as lowercasing depends on the letters around (Σ at a word's end is ς).
 */
class MatchingLines {
  readonly lines: FileMatch['lines'] = [];
  /** The line being read, as far as it was: its number and its text. */
  #number = 1;
  #line = '';

  constructor(private readonly needle: string) {}

  get done(): boolean {
    return this.lines.length >= MAX_LINES_PER_FILE;
  }

  feed(piece: string): void {
    const first = piece.indexOf('\n');
    if (first === -1) {
      this.#line += piece;
      return;
    }
    this.#line += piece.slice(0, first);
    this.#endLine();
    const last = piece.lastIndexOf('\n');
    if (last > first) this.#wholeLines(piece.slice(first + 1, last + 1));
    this.#line = piece.slice(last + 1);
  }

  /** The lines found, the file's last one included. */
  finish(): FileMatch['lines'] {
    this.#endLine();
    return this.lines;
  }

  #endLine(): void {
    if (!this.done && this.#line.toLowerCase().includes(this.needle)) this.#found(this.#line);
    this.#number++;
    this.#line = '';
  }

  #found(line: string): void {
    this.lines.push({ number: this.#number, text: shownLine(line) });
  }

  /** `text`: whole lines, each ending with a newline, the line being read just ended. */
  #wholeLines(text: string): void {
    const lower = text.toLowerCase();
    // Lowercasing that changes a length (İ) would shift positions: then line by line.
    if (lower.length !== text.length) {
      for (const line of text.slice(0, -1).split('\n')) {
        if (this.done) return;
        this.#line = line;
        this.#endLine();
      }
      return;
    }
    let counted = 0;
    const countLines = (to: number) => {
      for (let i = text.indexOf('\n', counted); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) this.#number++;
      counted = to;
    };
    for (let at = lower.indexOf(this.needle); at !== -1 && !this.done; ) {
      const start = text.lastIndexOf('\n', at) + 1;
      const end = text.indexOf('\n', at);
      countLines(start);
      this.#found(text.slice(start, end));
      this.#number++;
      counted = end + 1;
      at = lower.indexOf(this.needle, end + 1);
    }
    if (!this.done) countLines(text.length);
  }
}

/**
 * The lines of `content`, read whole, where `needle` (lowercase, with a newline) starts, up to MAX_LINES_PER_FILE.
 * None when lowercasing changes the text's length (İ): positions would shift, and no one line holds the needle.
 */
function linesWhereStarts(content: string, needle: string): FileMatch['lines'] {
  const lower = content.toLowerCase();
  if (lower.length !== content.length) return [];
  const out: FileMatch['lines'] = [];
  let number = 1;
  let counted = 0;
  for (let at = lower.indexOf(needle); at !== -1 && out.length < MAX_LINES_PER_FILE; ) {
    const start = content.lastIndexOf('\n', at) + 1;
    const newline = content.indexOf('\n', at);
    const end = newline === -1 ? content.length : newline;
    for (let i = content.indexOf('\n', counted); i !== -1 && i < start; i = content.indexOf('\n', i + 1)) number++;
    counted = start;
    out.push({ number, text: shownLine(content.slice(start, end)) });
    at = newline === -1 ? -1 : lower.indexOf(needle, end + 1);
  }
  return out;
}

/**
 * snippetd's content search (scope snippet_blobs): one page of the snippets the viewer may see whose title,
 * description, a file's path or a file's text holds the search (trimmed, any case; files' paths and text
 * from three characters), latest update first, each with its matching files and lines. Binary and oversized
 * files are matched by path only.
 */
export async function searchSnippetBlobs(
  store: Store,
  viewer: Viewer,
  search: string,
  window: PageWindow,
  place: SearchPlace = {},
): Promise<PageOf<BlobResult>> {
  await checkGlobalSearch(store, place);
  if (isAbusiveSearch(search)) return NOTHING;
  return withinTimeLimit(() => blobsPage(store, viewer, search.trim(), window, place));
}

/**
 * A file's indexed text (up to 8 MiB) is read a piece a statement while its matching lines are looked for:
 * FIRST_PIECE_CHARS first (the first pieces of FILES_A_STATEMENT files at once), each next piece four times
 * longer. A page's snippets may hold hundreds of matching files, whose first lines usually show enough: read
 * whole, one search took hundreds of MiB (bench/RESULTS.md). Each statement reads its file's whole value from
 * storage, so pieces grow fast: six statements at most for 8 MiB.
 */
const FIRST_PIECE_CHARS = 16 * 1024;
const FILES_A_STATEMENT = 64;

/** The matching lines of `files` (whose path or text holds `needle`, lowercase), by snippet. */
async function matchesOf(
  store: Store,
  files: { snippet_id: number; path: string; length: number; inText: boolean }[],
  needle: string,
): Promise<Map<number, FileMatch[]>> {
  const matches = new Map<number, FileMatch[]>();
  const texts = store.snippets.texts;
  const sorted = files.sort((a, b) => byteOrder(a.path, b.path));
  for (let i = 0; i < sorted.length; i += FILES_A_STATEMENT) {
    const batch = sorted.slice(i, i + FILES_A_STATEMENT);
    // A file found by its path alone shows no line: its text is not read.
    const firstPieces = await texts.textPiecesOf(
      batch.filter((f) => f.inText),
      1,
      FIRST_PIECE_CHARS,
    );
    const first = new Map(firstPieces.map((f) => [`${f.snippet_id}/${f.path}`, f.piece]));
    for (const file of batch) {
      let lines: FileMatch['lines'];
      const pieces = async function* () {
        yield first.get(`${file.snippet_id}/${file.path}`) ?? '';
        for (let at = 1 + FIRST_PIECE_CHARS, chars = 4 * FIRST_PIECE_CHARS; at <= Number(file.length); ) {
          yield (await texts.textPiecesOf([file], at, chars))[0]?.piece ?? '';
          at += chars;
          chars *= 4;
        }
      };
      if (!file.inText) lines = [];
      else if (needle.includes('\n')) {
        let whole = '';
        for await (const piece of pieces()) whole += piece;
        lines = linesWhereStarts(whole, needle);
      } else {
        const finder = new MatchingLines(needle);
        for await (const piece of pieces()) {
          finder.feed(piece);
          if (finder.done) break;
        }
        lines = finder.finish();
      }
      if (!lines.length && !file.path.toLowerCase().includes(needle)) continue;
      const list = matches.get(file.snippet_id) ?? [];
      list.push({ path: file.path, lines });
      matches.set(file.snippet_id, list);
    }
  }
  return matches;
}

/**
 * Content search (snippetd's, beyond GitLab) counts its total up to this many snippets, as GitLab counts
 * search results (Gitlab::SearchResults::COUNT_LIMIT), not the 10,000 of its lists: counting a common text's
 * matches was most of such a search, and a text in a fifth of the files is found within some hundred
 * snippets walked only while the count stays this short (bench/RESULTS.md).
 */
export const CONTENT_SEARCH_COUNTED = 100;

/** The page of content search for `text` (trimmed; '' for none) among the snippets `filter` names. */
async function blobsPage(
  store: Store,
  viewer: Viewer,
  text: string,
  window: PageWindow,
  filter: SnippetListFilter,
): Promise<PageOf<BlobResult>> {
  const holding = text === '' ? undefined : text;
  if (holding !== undefined) await store.snippets.texts.awaitIndexBacklog();
  const page = await findSnippetsMatching(
    store,
    viewer,
    {
      ...filter,
      holding,
    },
    { ...window, countUpTo: CONTENT_SEARCH_COUNTED },
  );
  const needle = text.toLowerCase();
  const found =
    holding !== undefined && length(holding) >= 3
      ? await store.snippets.texts.filesHolding(
          page.rows.map((s) => s.id),
          holding,
        )
      : [];
  const matches = await matchesOf(store, found, needle);
  return { ...page, rows: page.rows.map((snippet) => ({ snippet, matches: matches.get(snippet.id) ?? [] })) };
}

// ---- The search page: text with Opengist's filters -------------------------------------------------------

export const PAGE_FILTERS = ['filename', 'extension', 'language', 'author', 'project', 'visibility'] as const;
export type PageFilter = (typeof PAGE_FILTERS)[number];

export interface PageQuery {
  text: string;
  filters: Partial<Record<PageFilter, string>>;
}

/** `filename:x extension:rb some words`: the filters Opengist knows (the last of each wins), the rest as text. */
export function parsePageQuery(query: string): PageQuery {
  const words: string[] = [];
  const filters: PageQuery['filters'] = {};
  for (const word of query.split(/\s+/u).filter((w) => w !== '')) {
    const at = word.indexOf(':');
    const key = word.slice(0, at).toLowerCase() as PageFilter;
    if (at > 0 && at < word.length - 1 && PAGE_FILTERS.includes(key)) filters[key] = word.slice(at + 1);
    else words.push(word);
  }
  return { text: words.join(' '), filters };
}

/** The file extensions of a language named in a `language:` filter (highlight.js's names and common ones). */
const LANGUAGE_EXTENSIONS: Record<string, string[]> = {
  bash: ['sh', 'bash'],
  shell: ['sh', 'bash', 'zsh'],
  c: ['c', 'h'],
  cpp: ['cc', 'cpp', 'cxx', 'hh', 'hpp'],
  csharp: ['cs'],
  css: ['css'],
  go: ['go'],
  html: ['html', 'htm'],
  java: ['java'],
  javascript: ['js', 'mjs', 'cjs', 'jsx'],
  json: ['json'],
  kotlin: ['kt', 'kts'],
  markdown: ['md', 'markdown'],
  php: ['php'],
  python: ['py'],
  ruby: ['rb'],
  rust: ['rs'],
  sql: ['sql'],
  swift: ['swift'],
  typescript: ['ts', 'tsx', 'mts', 'cts'],
  yaml: ['yml', 'yaml'],
  dockerfile: ['dockerfile'],
};

/**
 * The search page's results: the text searched as snippet_blobs searches it, among the snippets the filters
 * name (an unknown author, project, visibility or language finds nothing). Nothing without text or filter.
 */
export async function searchForPage(
  store: Store,
  viewer: Viewer,
  query: PageQuery,
  window: PageWindow,
): Promise<PageOf<BlobResult>> {
  const { text, filters } = query;
  if (text === '' && Object.keys(filters).length === 0) return NOTHING;
  // A project filter searches within one project; anything else searches the instance.
  if (filters.project === undefined) await checkGlobalSearch(store, {});
  if (text !== '' && isAbusiveSearch(text)) return NOTHING;
  const filter: SnippetListFilter = {};
  if (filters.author !== undefined) {
    const author = await store.users.findByUsername(filters.author);
    if (!author) return NOTHING;
    filter.authorId = author.id;
  }
  if (filters.project !== undefined) {
    const project = await findReadableProject(store, viewer, filters.project).catch(() => null);
    if (!project) return NOTHING;
    filter.projectId = project.project.id;
  }
  if (filters.visibility !== undefined) {
    const level = VISIBILITIES.find((v) => v === filters.visibility?.toLowerCase());
    if (!level) return NOTHING;
    filter.visibility = level;
  }
  if (filters.filename !== undefined) filter.filePathContains = filters.filename;
  const extensions = [...(filters.extension !== undefined ? [filters.extension.replace(/^\./, '').toLowerCase()] : [])];
  if (filters.language !== undefined) {
    const language = filters.language.toLowerCase();
    const known = Object.hasOwn(LANGUAGE_EXTENSIONS, language) ? LANGUAGE_EXTENSIONS[language] : undefined;
    if (!known) return NOTHING;
    if (filters.extension !== undefined && !known.includes(extensions[0])) return NOTHING;
    if (filters.extension === undefined) extensions.push(...known);
  }
  if (extensions.length) filter.fileExtensions = extensions;
  return withinTimeLimit(() => blobsPage(store, viewer, text, window, filter));
}
