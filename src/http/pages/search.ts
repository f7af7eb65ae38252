// The search page (/search?search=…): the header's search box leads here. The text is searched as the API's
// snippet_blobs searches it (title, description, file names and content), with Opengist's filters
// (`filename:`, `extension:`, `language:`, `author:`, `project:`, `visibility:`); each result says where the
// snippet lives and shows its matching lines with the text marked, linked to the file on the snippet's page.
// Results come from the snippets finder, so they are the ones the visitor may see, signed in or not.
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  type BlobResult,
  CONTENT_SEARCH_COUNTED,
  parsePageQuery,
  searchForPage,
} from '../../domain/snippets/search.ts';
import { limitSearch } from '../rate-limits.ts';
import { Failure } from '../../domain/failure.ts';
import { getSettings, indexedFileMaxBytes } from '../../domain/settings.ts';
import { humanSize } from '../../domain/snippets/limits.ts';
import { projectsOf } from '../../domain/snippets/finder.ts';
import type { User } from '../../storage/db/schema.ts';
import { storeOf } from '../request.ts';
import { baseUrl, snippetWebUrl } from '../urls.ts';
import { type Html, html } from '../views/html.ts';
import { cutWithEllipsis } from '../../text-scan.ts';
import { sendFailurePage, sendPage } from './layout.ts';
import { pageLinks, pageSearchText, pageViewer, positiveQueryNumber, type PageHandler, linePrefix } from './common.ts';

const RESULTS_PER_PAGE = 20;

/**
 * A result shows its description's start, cut at this many characters with "…": a description may be a
 * megabyte, and marking one took about 0.3 s on the event loop, twenty a page.
 */
const DESCRIPTION_CHARS = 300;

/**
 * A text's first this many matches are marked, the rest left plain; and a file's path is shown cut to PATH_CHARS:
 * 200 files of long paths and lines of 'a' marked whole made 600,000 marks searching 'aaa' (18 MB, 300 ms).
 */
const MARKS_PER_TEXT = 20;
const PATH_CHARS = 300;

/** `text` with its first MARKS_PER_TEXT occurrences of `needle` (lowercase) marked, as `text.toLowerCase()` holds it. */
function marked(text: string, needle: string): Html {
  if (!needle) return html`${text}`;
  // ASCII lowercases in place, a code unit for a code unit: most code is, and mapping 2,000 lines of a page
  // character by character took a tenth of a second.
  const { lower, start, end } = ASCII.test(text)
    ? { lower: text.toLowerCase(), start: null, end: null }
    : lowercased(text);
  const startOf = (k: number) => (start ? start[k] : k);
  const endOf = (k: number) => (end ? end[k] : k + 1);
  const parts: Html[] = [];
  let from = 0;
  for (let at = lower.indexOf(needle); at !== -1; at = lower.indexOf(needle, at + needle.length)) {
    // A match that begins inside a character the previous one ended in is part of that mark already.
    if (startOf(at) < from) continue;
    if (parts.length === MARKS_PER_TEXT) break;
    const to = endOf(at + needle.length - 1);
    parts.push(html`${text.slice(from, startOf(at))}<mark>${text.slice(startOf(at), to)}</mark>`);
    from = to;
  }
  parts.push(html`${text.slice(from)}`);
  return html`${parts}`;
}

/**
 * `text` lowercased, and for each of its code units where the character it came from starts and ends in
 * `text`: lowercasing may lengthen a character (İ becomes i and a combining dot), shifting what follows.
 */
function lowercased(text: string): { lower: string; start: number[]; end: number[] } {
  const start: number[] = [];
  const end: number[] = [];
  let lower = '';
  let at = 0;
  for (const char of text) {
    const low = char.toLowerCase();
    lower += low;
    for (let k = 0; k < low.length; k++) {
      start.push(at);
      end.push(at + char.length);
    }
    at += char.length;
  }
  return { lower, start, end };
}

const ASCII = /^[^\u0080-\uffff]*$/;

/** A search across the instance while global_search_snippet_titles_enabled is off (the API's 403). */
const SEARCH_DISABLED =
  'Searching snippets across this instance is turned off. Search within a project with project:<path>.';

/** A search that ran into its time limit (GitLab's API answers "Request timed out"). */
const SEARCH_TIMED_OUT = 'The search took too long. Try a shorter text, or narrow it with a filter.';

/** GitLab's words for a search over its limit. */
const SEARCH_LIMITED = 'This endpoint has been requested too many times. Try again later.';

async function searchPage(request: FastifyRequest, reply: FastifyReply) {
  const store = storeOf(request);
  const search = pageSearchText(request);
  // As GitLab's search page: only a search counts against the limit, not the empty form.
  if (search.trim() !== '') {
    try {
      await limitSearch(request);
    } catch (error) {
      return sendFailurePage(request, reply, error, { text: SEARCH_LIMITED });
    }
  }
  const query = parsePageQuery(search);
  const page = positiveQueryNumber(request, 'page') ?? 1;
  const window = { offset: (page - 1) * RESULTS_PER_PAGE, limit: RESULTS_PER_PAGE };
  let found: Awaited<ReturnType<typeof searchForPage>>;
  try {
    found = await searchForPage(store, pageViewer(request), query, window);
  } catch (error) {
    if (!(error instanceof Failure && (error.reason === 'forbidden' || error.reason === 'search_timeout'))) throw error;
    const text = error.reason === 'forbidden' ? SEARCH_DISABLED : SEARCH_TIMED_OUT;
    return sendFailurePage(request, reply, error, { text });
  }
  const base = baseUrl(request);
  const snippets = found.rows.map((r) => r.snippet);
  const projects = await projectsOf(store, snippets);
  const paths = await store.snippets.paths(snippets.map((s) => s.id));
  const authors = new Map<number, User | undefined>();
  for (const id of new Set(snippets.map((s) => s.author_id))) authors.set(id, await store.users.findById(id));
  const needle = query.text.trim().toLowerCase();
  const result = ({ snippet, matches }: BlobResult) => {
    const projectPath = snippet.project_id === null ? null : (projects.get(snippet.project_id)?.full_path ?? null);
    const web = snippetWebUrl(base, projectPath, snippet.id);
    const author = authors.get(snippet.author_id);
    const files = matches.map((m) => {
      const all = paths.get(snippet.id) ?? [];
      const shownPath = cutWithEllipsis(m.path, PATH_CHARS);
      const fileUrl = `${web}#file-${all.indexOf(m.path) + 1}`;
      const lineUrl = (n: number) => `${web}#${linePrefix(all.indexOf(m.path), all.length)}${n}`;
      return html`<div class="search-file"><a href="${fileUrl}">${marked(shownPath, needle)}</a>
${m.lines.length ? html`<ol class="search-lines">${m.lines.map((l) => html`<li><a href="${lineUrl(l.number)}" aria-label="${shownPath} line ${l.number}">${l.number}</a> <code>${marked(l.text, needle)}</code></li>`)}</ol>` : ''}</div>`;
    });
    return html`<li class="search-result"><h2><a href="${web}">${marked(snippet.title, needle)}</a></h2>
<p class="meta">${projectPath ?? 'Personal snippet'}${author ? html` · @${author.username}` : ''} <span class="badge">${snippet.visibility}</span></p>
${snippet.description ? html`<p class="description">${marked(cutWithEllipsis(snippet.description, DESCRIPTION_CHARS), needle)}</p>` : ''}
${files}</li>`;
  };
  const here = (n: number) => `${base}/search?${new URLSearchParams({ search, page: String(n) })}`;
  const asked = search.trim() !== '';
  const summary =
    found.total === null
      ? `More than ${CONTENT_SEARCH_COUNTED.toLocaleString('en')} snippets`
      : `${found.total.toLocaleString('en')} snippet${found.total === 1 ? '' : 's'}`;
  const body = html`<h1>Search</h1>
<form class="search-form" action="${base}/search" method="get">
<label for="search-page-text">Search snippets</label>
<input id="search-page-text" type="search" name="search" value="${search}" aria-describedby="search-help">
<button type="submit">Search</button>
<p id="search-help" class="meta">Title, description, file names and content (a binary file, or one over ${humanSize(indexedFileMaxBytes(await getSettings(store)))}, by its name only). Filters: <code>filename:</code> <code>extension:</code> <code>language:</code> <code>author:</code> <code>project:</code> <code>visibility:</code></p>
</form>
${
  asked
    ? found.rows.length
      ? html`<p class="meta" role="status">${summary} found</p><ol class="list search-results">${found.rows.map(result)}</ol>`
      : html`<p class="empty" role="status">No snippets found.</p>`
    : ''
}
${pageLinks(
  page > 1 ? { href: here(page - 1), label: 'Previous' } : undefined,
  found.hasMore ? { href: here(page + 1), label: 'Next' } : undefined,
)}`;
  return sendPage(reply, 200, asked ? `${search} · Search` : 'Search', body);
}

export const SEARCH_PAGES: [RegExp, PageHandler][] = [[/^\/search$/, (rq, rp) => searchPage(rq, rp)]];
