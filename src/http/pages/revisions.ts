// A snippet's revisions (beyond GitLab): …/-/snippets/<id>/revisions lists every commit, newest first, with the
// files each changed; …/-/snippets/<id>/revisions/<commit> shows one commit's diff. For project and personal
// snippets alike; found as the snippet page finds the snippet, so what it hides is hidden here alike.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findSnippetOrPersonalForPage } from '../../domain/snippets/reads.ts';
import {
  DIFF_LIMITS,
  type FileDiff,
  REVISIONS_PER_PAGE,
  type RevisionDiff,
  snippetRevisionDiff,
  snippetRevisions,
} from '../../domain/snippets/history.ts';
import type { FileChange } from '../../storage/git/history.ts';
import type { CommitInfo } from '../../storage/git/repository.ts';
import { parseRowId } from '../../domain/ids.ts';
import { humanSize } from '../../domain/snippets/limits.ts';
import { escapedHtml } from '../../domain/rendering.ts';
import { cutWithEllipsis } from '../../text-scan.ts';
import { storeOf } from '../request.ts';
import { baseUrl, snippetFileRawUrl, snippetWebUrl } from '../urls.ts';
import { html, trusted, type Html } from '../views/html.ts';
import { sendPage } from './layout.ts';
import { pageLinks, pageViewer, positiveQueryNumber, type PageHandler } from './common.ts';

/** Pages past this would skip more commits than git counts; none has that many. */
const MAX_PAGE = Math.floor(2 ** 31 / REVISIONS_PER_PAGE);

/** A commit's first line, cut at SUBJECT_CHARS (a commit may be a megabyte of one line, a list shows twenty). */
function subjectOf(message: string): string {
  const end = message.indexOf('\n');
  const line = (end === -1 ? message : message.slice(0, end)).trim();
  return line ? cutWithEllipsis(line, SUBJECT_CHARS) : '(no message)';
}
const SUBJECT_CHARS = 300;
const bodyOf = (message: string) => message.slice(message.indexOf('\n') + 1).trim();
export const shortId = (id: string) => id.slice(0, 8);

/** A time as people read it, in UTC, with the exact instant for machines. */
const timeOf = (iso: string) => html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;

const KIND_LABEL: Record<FileChange['kind'], string> = {
  added: 'added',
  modified: 'modified',
  deleted: 'deleted',
  renamed: 'renamed',
  type_changed: 'type changed',
};

const stat = (file: FileChange) =>
  file.added === null
    ? html`<span class="stat">binary</span>`
    : html`<span class="stat"><span class="plus">+${file.added}</span> <span class="minus">−${file.deleted}</span></span>`;

/** A file's name as the change shows it: a rename as old → new. */
const fileName = (file: FileChange) =>
  file.kind === 'renamed'
    ? html`<code>${file.oldPath}</code> → <code>${file.path}</code>`
    : html`<code>${file.path}</code>`;

const changeBadge = (file: FileChange) =>
  html`<span class="change change-${file.kind}">${KIND_LABEL[file.kind]}${file.kind === 'renamed' && file.similarity !== null && file.similarity < 100 ? html` <span class="similarity">(${file.similarity}% similar)</span>` : ''}</span>`;

async function findSnippet(request: FastifyRequest, projectPath: string | null, id: number) {
  const store = storeOf(request);
  const { ctx, snippet } = await findSnippetOrPersonalForPage(store, pageViewer(request), projectPath, id);
  const web = snippetWebUrl(baseUrl(request), ctx ? ctx.project.full_path : null, snippet.id);
  return { store, snippet, web };
}

/** …/-/snippets/<id>/revisions[?page=]: the snippet's commits, newest first, 20 a page, each with its files. */
async function revisionsPage(request: FastifyRequest, reply: FastifyReply, projectPath: string | null, id: number) {
  const { store, snippet, web } = await findSnippet(request, projectPath, id);
  const page = positiveQueryNumber(request, 'page') ?? 1;
  const { revisions, hasMore, filesOmitted } =
    page > MAX_PAGE
      ? { revisions: [], hasMore: false, filesOmitted: false }
      : await snippetRevisions(store, request.server.gitNode.caches, snippet, page);
  const list = `${web}/revisions`;
  const items = revisions.map(
    (r) => html`<li class="revision">
<h2><a href="${list}/${r.id}">${subjectOf(r.message)}</a></h2>
<p class="meta">${r.authorName} · ${timeOf(r.authoredAt)} · <code>${shortId(r.id)}</code>${r.parents.length > 1 ? ' · merge' : ''}</p>
${r.files.length ? html`<ul class="changes" aria-label="Files changed">${r.files.map((f) => html`<li>${changeBadge(f)} ${fileName(f)} ${stat(f)}</li>`)}</ul>` : ''}
</li>`,
  );
  const body = html`<h1>Revisions</h1>
<p class="meta">of <a href="${web}">${snippet.title}</a></p>
${filesOmitted ? html`<p class="notice">The files these revisions changed could not be listed here (too many, or too long to work out); each revision's page shows them.</p>` : ''}
${items.length ? html`<ol class="revisions">${items}</ol>` : html`<p class="empty">${page === 1 ? 'This snippet has no revisions.' : 'No revisions on this page.'} </p>`}
${pageLinks(
  page > 1 ? { href: `${list}?page=${page - 1}`, label: 'Newer' } : undefined,
  hasMore ? { href: `${list}?page=${page + 1}`, label: 'Older' } : undefined,
)}`;
  return sendPage(reply, 200, `Revisions · ${snippet.title}`, body);
}

/** A file's diff as a table: its rows come made from the render pool (domain/diff-highlight.ts). */
// Focusable, as a code block is (common.ts#codeBlock): long lines scroll inside it.
const diffTable = (rows: string) => html`<div class="diff-scroll" tabindex="0"><table class="diff">
<thead class="visually-hidden"><tr><th scope="col">Line before</th><th scope="col">Line after</th><th scope="col">Text</th></tr></thead>
<tbody>${trusted(rows)}</tbody></table></div>`;

/** What a diff page is of: a snippet's revision, a commit of a project's repository, or two commits compared. */
type DiffNoun = 'revision' | 'commit' | 'comparison';

function omittedNote(file: FileDiff, rawUrl: string, noun: DiffNoun): Html {
  switch (file.omitted) {
    case 'binary':
      return html`<p class="binary">Binary file. <a href="${rawUrl}?inline=false" download>Download it</a>.</p>`;
    case 'too_large':
      return html`<p class="too-large">This diff is too large to display: its changes are larger than ${humanSize(DIFF_LIMITS.filePatchBytes)}. You can <a href="${rawUrl}">view the file raw</a> instead.</p>`;
    case 'not_shown':
      return html`<p class="too-large">Not shown: this ${noun} changes more than can be displayed. You can <a href="${rawUrl}">view the file raw</a> instead.</p>`;
    case 'render_failed':
      return html`<p class="notice">This diff could not be displayed. You can <a href="${rawUrl}">view the file raw</a> instead.</p>`;
    case 'empty':
      return html`<p class="notice">${file.kind === 'renamed' ? 'Renamed without changes.' : file.oldMode !== file.newMode ? `File mode changed from ${file.oldMode} to ${file.newMode}.` : 'No changes to its lines.'}</p>`;
    default:
      return html``;
  }
}

/** Where a file's bytes are at a commit. */
type RawUrlOf = (commit: string, path: string) => string;

function fileSection(diff: RevisionDiff, file: FileDiff, i: number, rawUrlOf: RawUrlOf, noun: DiffNoun): Html {
  // A deleted file is read as it was before; any other as this commit has it.
  const rawUrl =
    file.kind === 'deleted' ? rawUrlOf(diff.parent ?? diff.id, file.oldPath) : rawUrlOf(diff.id, file.path);
  return html`<section class="file diff-file" id="diff-${i + 1}" aria-labelledby="diff-${i + 1}-name">
<header class="file-header">
<h2 id="diff-${i + 1}-name">${fileName(file)}</h2> ${changeBadge(file)} ${stat(file)}
<nav class="file-actions" aria-label="${file.path}"><a href="${rawUrl}">Raw${file.kind === 'deleted' ? ' (before)' : ''}</a></nav>
</header>
${file.rows !== null ? diffTable(file.rows) : omittedNote(file, rawUrl, noun)}
</section>`;
}

/**
 * A commit's diff against its first parent as a page shows it: its message, author and id, the links `nav` holds,
 * and each file's changes, its bytes where `rawUrlOf` says. A snippet's revision page and a project's commit
 * page are this, each with its own links.
 */
export async function diffArticle(
  diff: RevisionDiff,
  nav: Html,
  rawUrlOf: RawUrlOf,
  noun: DiffNoun,
): Promise<{ subject: string; body: Html }> {
  const added = diff.files.reduce((n, f) => n + (f.added ?? 0), 0);
  const deleted = diff.files.reduce((n, f) => n + (f.deleted ?? 0), 0);
  // Escaped in a render worker when long: a commit may be a megabyte.
  const message = trusted(await escapedHtml(bodyOf(diff.message)));
  const subject = subjectOf(diff.message);
  const label = noun === 'revision' ? 'Revision' : 'Commit';
  const body = html`<article class="revision-diff">
<h1>${subject}</h1>
<p class="meta">${diff.authorName} · ${timeOf(diff.authoredAt)} · <code>${diff.id}</code></p>
${diff.message.includes('\n') && message.text ? html`<pre class="message">${message}</pre>` : ''}
<nav class="revision-links" aria-label="${label}">
${nav}
</nav>
${
  diff.timedOut
    ? html`<p class="notice">Working out this ${noun}'s changes took too long.</p>`
    : html`<p class="summary">${diff.files.length} ${diff.files.length === 1 ? 'file' : 'files'} changed, <span class="plus">+${added}</span> <span class="minus">−${deleted}</span>${diff.parent ? '' : ` (the first ${noun})`}</p>`
}
${diff.cut && !diff.timedOut ? html`<p class="too-large">This ${noun} changes more than can be displayed: some files are not shown.</p>` : ''}
${diff.files.map((file, i) => fileSection(diff, file, i, rawUrlOf, noun))}
</article>`;
  return { subject, body };
}

/**
 * Two commits compared as a page shows it: the commits the second reaches and the first does not, oldest first,
 * each linking to its page, and the diff from their merge base to the second (none when they are the same).
 */
export function comparisonArticle(
  compared: { from: string; to: string; commits: CommitInfo[]; cut: boolean },
  diff: RevisionDiff | null,
  nav: Html,
  commitUrl: (id: string) => string,
  rawUrlOf: RawUrlOf,
): Html {
  const added = diff?.files.reduce((n, f) => n + (f.added ?? 0), 0) ?? 0;
  const deleted = diff?.files.reduce((n, f) => n + (f.deleted ?? 0), 0) ?? 0;
  const count = compared.commits.length;
  return html`<article class="revision-diff">
<h1>Compare <code>${shortId(compared.from)}</code>...<code>${shortId(compared.to)}</code></h1>
<nav class="revision-links" aria-label="Comparison">
${nav}
</nav>
${
  !diff
    ? html`<p class="notice">These are the same commit: there is nothing to compare.</p>`
    : html`<h2>${count} ${count === 1 ? 'commit' : 'commits'}${compared.cut ? ' (the newest)' : ''}</h2>
<ol class="compared-commits">
${compared.commits.map((c) => html`<li><a href="${commitUrl(c.id)}">${subjectOf(c.message)}</a> <span class="meta">${c.authorName} · ${timeOf(c.authoredAt)} · <code>${shortId(c.id)}</code></span></li>`)}
</ol>
${
  diff.timedOut
    ? html`<p class="notice">Working out this comparison's changes took too long.</p>`
    : html`<p class="summary">${diff.files.length} ${diff.files.length === 1 ? 'file' : 'files'} changed, <span class="plus">+${added}</span> <span class="minus">−${deleted}</span></p>`
}
${diff.cut && !diff.timedOut ? html`<p class="too-large">This comparison changes more than can be displayed: some files are not shown.</p>` : ''}
${diff.files.map((file, i) => fileSection(diff, file, i, rawUrlOf, 'comparison'))}`
}
</article>`;
}

/** …/-/snippets/<id>/revisions/<commit>: the commit's diff against its first parent. */
async function revisionPage(
  request: FastifyRequest,
  reply: FastifyReply,
  projectPath: string | null,
  id: number,
  ref: string,
) {
  const { store, snippet, web } = await findSnippet(request, projectPath, id);
  const diff = await snippetRevisionDiff(store, request.server.gitNode.caches, snippet, ref);
  const list = `${web}/revisions`;
  const nav = html`<a href="${web}">${snippet.title}</a>
<a href="${list}">All revisions</a>
${diff.parent ? html`<a href="${list}/${diff.parent}">Previous revision <code>${shortId(diff.parent)}</code></a>` : ''}`;
  const rawUrlOf = (commit: string, path: string) => snippetFileRawUrl(web, commit, path);
  const { subject, body } = await diffArticle(diff, nav, rawUrlOf, 'revision');
  return sendPage(reply, 200, `${subject} · Revisions · ${snippet.title}`, body);
}

/** [pattern over the URL's path as sent, handler], personal snippets' paths before projects'. */
export const REVISION_PAGES: [RegExp, PageHandler][] = [
  [/^\/-\/snippets\/(\d+)\/revisions$/, (rq, rp, g) => revisionsPage(rq, rp, null, parseRowId(g[0])!)],
  [/^\/-\/snippets\/(\d+)\/revisions\/([^/]+)$/, (rq, rp, g) => revisionPage(rq, rp, null, parseRowId(g[0])!, g[1])],
  [/^\/(.+)\/-\/snippets\/(\d+)\/revisions$/, (rq, rp, g) => revisionsPage(rq, rp, g[0], parseRowId(g[1])!)],
  [
    /^\/(.+)\/-\/snippets\/(\d+)\/revisions\/([^/]+)$/,
    (rq, rp, g) => revisionPage(rq, rp, g[0], parseRowId(g[1])!, g[2]),
  ],
];
