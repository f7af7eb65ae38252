// Snippet pages at GitLab's paths: the snippet (/<project>/-/snippets/<id>, a personal one at
// /-/snippets/<id>), its raw files (…/raw and …/raw/<ref>/<path>), its embed script (….js), and GitLab's
// legacy paths, which redirect.
// Pages ask the same domain functions as the API, so a page never shows what the API would hide; what is
// hidden is 404, never 403.
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  firstSnippetFile,
  findSnippetOrPersonalForPage,
  isReadableByAnyone,
  readSnippetFile,
  snippetFilesToView,
} from '../../domain/snippets/reads.ts';
import { keptView, markdownHtml, rendersHtml, viewOf, type FileView, type Viewable } from '../../domain/rendering.ts';
import {
  cloneField,
  codeBlock,
  copyButton,
  copyField,
  pageViewer,
  tooLargeToDisplay,
  type PageHandler,
  linePrefix,
} from './common.ts';
import { pageScript } from './scripts.ts';
import { humanSize } from '../../domain/snippets/limits.ts';
import type { Snippet, User } from '../../storage/db/schema.ts';
import type { Store } from '../../storage/db/store.ts';
import type { IndexedFile } from '../../storage/db/tables/snippets.ts';
import { notFound } from '../../domain/failure.ts';
import { storeOf } from '../request.ts';
import { sendWebRaw } from '../raw.ts';
import { sendCompressed } from '../plugins/compression.ts';
import { limitRaw } from '../rate-limits.ts';
import { baseUrl, encodePath, sitePath, snippetFileRawUrl, snippetHttpRepoUrl, snippetWebUrl } from '../urls.ts';
import { html, trusted, type Html } from '../views/html.ts';
import { newNonce, sendPage } from './layout.ts';
import { parseRowId } from '../../domain/ids.ts';
import { NO_ACCESS } from '../../domain/policy.ts';
import { snippetActions } from './snippet-forms.ts';
import { isWellFormedFullPath } from '../../domain/paths.ts';

/** A file's view on this page: rendered, or not shown because the files before it (or an embed's room) fill it. */
type PageFileView = FileView | { kind: 'not_shown'; limit: number; embed: boolean };

function fileBody(view: PageFileView, rawUrl: string, filePath: string): Html {
  switch (view.kind) {
    case 'image':
      return html`<div class="image"><img src="${rawUrl}" alt="${filePath}"></div>`;
    case 'binary':
      return html`<p class="binary">Binary file. <a href="${rawUrl}?inline=false" download>Download it</a>.</p>`;
    case 'too_large':
      return tooLargeToDisplay(view.limit, rawUrl, `${rawUrl}?inline=false`);
    case 'not_shown':
      return html`<p class="too-large">This file is not shown: ${view.embed ? `an embed shows at most ${humanSize(view.limit)} of files` : `the files above it fill this page (${humanSize(view.limit)} of them)`}. You can <a href="${rawUrl}">view it raw</a> or <a href="${rawUrl}?inline=false" download>download it</a>.</p>`;
    case 'markdown':
      return html`<div class="markdown">${trusted(view.html)}</div>
<details class="source"><summary>Source</summary><pre><code>${trusted(view.sourceHtml)}</code></pre></details>`;
    case 'code':
      return codeBlock(view);
  }
}

/** What a view adds to a page: its HTML's characters (none for an image, a binary or too large a file). */
const viewSize = (view: FileView) =>
  view.kind === 'code' ? view.html.length : view.kind === 'markdown' ? view.html.length + view.sourceHtml.length : 0;

/**
 * The snippet's files with their views, in git's order, each rendered only while the views before it, shown or
 * not, leave `room` (the first file always when `firstShown`): null for one that is not rendered. One at a time,
 * so the files a page renders are the same whatever it had kept: an embed of ten large Markdown files rendered
 * all ten, at each request once they no longer all fit the kept views, to show none.
 */
async function fileViews(store: Store, snippet: Snippet, room: number, firstShown: boolean) {
  const index = await store.snippets.fileIndex(snippet.id);
  const kept = index.map((file, i) => keptView(file.blob_id, file.path, linePrefix(i, index.length)));
  const allKept = kept.every((view) => view !== undefined);
  // Contents are read only for a view not kept yet; then paths, blob ids and contents are read together, so
  // each view is rendered from the bytes of its own blob.
  const files: (IndexedFile & { content?: Viewable })[] = allKept ? index : await snippetFilesToView(store, snippet);
  const out = [];
  let left = room;
  let abandoned = false;
  for (const [i, file] of files.entries()) {
    const prefix = linePrefix(i, files.length);
    const roomy = (i === 0 && firstShown) || left > 0;
    const view: FileView | null =
      (allKept ? kept[i] : keptView(file.blob_id, file.path, prefix)) ??
      (roomy || !rendersHtml(file.path, file.content!)
        ? await viewOf(file.blob_id, file.path, file.content!, prefix, undefined, abandoned)
        : null);
    abandoned ||= view?.kind === 'code' && (view.renderAbandoned === true || view.renderSkipped === true);
    // A view that adds no rendering (an image, a binary or too large a file) is never held back.
    const usable = view && (roomy || viewSize(view) === 0) ? view : null;
    left -= usable ? viewSize(usable) : 0;
    out.push({ ...file, view: usable });
  }
  return out;
}

/**
 * The rendered files one page (or embed) holds at most: past it, a file is linked, not shown. Each file's
 * rendering is bounded (render-worker.ts), but ten files of the largest kind made a 66 MB page, joined and
 * compressed on the event loop for a second, its embed script for four. The first file is always shown.
 */
const PAGE_FILES_HTML = 4 * 1024 * 1024;

/**
 * An embed's room, its first file included: the script carries its markup as one JSON string, made on the event
 * loop (a first file of 8 MB rendered held it 120-315 ms at each request).
 */
const EMBED_FILES_HTML = 1024 * 1024;

async function fileSections(store: Store, snippet: Snippet, web: string, embed = false): Promise<Html[]> {
  const limit = embed ? EMBED_FILES_HTML : PAGE_FILES_HTML;
  let room = limit;
  return (await fileViews(store, snippet, limit, !embed)).map((file, i) => {
    const rawUrl = snippetFileRawUrl(web, snippet.default_branch, file.path);
    const size = file.view ? viewSize(file.view) : Number.POSITIVE_INFINITY;
    // A view that adds no rendering (an image, a binary or too large a file) is never held back.
    const shown = file.view !== null && ((i === 0 && !embed) || size === 0 || size <= room);
    room -= shown ? size : 0;
    const view: PageFileView = shown ? file.view! : { kind: 'not_shown', limit, embed };
    // A copy button only where the page holds the file's text, and there is some (not in the embed: it has
    // no script of ours to run it).
    const copyable = !embed && file.size > 0 && (view.kind === 'code' || view.kind === 'markdown');
    return html`<section class="file" id="file-${i + 1}" aria-labelledby="file-${i + 1}-name">
<header class="file-header">
<h2 id="file-${i + 1}-name">${file.path}</h2><span class="size">${humanSize(file.size)}</span>
<nav class="file-actions" aria-label="Actions for ${file.path}"><a href="${rawUrl}">Raw</a> <a href="${rawUrl}?inline=false" download>Download</a>
${copyable ? copyButton(`file-${i + 1}`, `Copy ${file.path}`) : ''}</nav>
</header>
${fileBody(view, rawUrl, file.path)}
</section>`;
  });
}

/**
 * The embed script (/<project>/-/snippets/<id>.js): writes the snippet's files where it is included, with a
 * stylesheet scoped to them. Only for snippets anyone may read; 404 otherwise.
 */
async function embedScript(request: FastifyRequest, reply: FastifyReply, projectPath: string | null, id: number) {
  const store = storeOf(request);
  const { ctx, snippet } = await findSnippetOrPersonalForPage(store, null, projectPath, id);
  if (!isReadableByAnyone(ctx, snippet)) throw notFound('Snippet');
  const web = snippetWebUrl(baseUrl(request), ctx ? ctx.project.full_path : null, snippet.id);
  const markup = html`<style>${trusted(EMBED_STYLE)}</style>
<p class="snippetd-embed-title"><a href="${web}">${snippet.title}</a></p>
${await fileSections(store, snippet, web, true)}`;
  reply.header('Content-Type', 'application/javascript; charset=utf-8').header('Cache-Control', 'public, max-age=60');
  const literal = (text: string) => JSON.stringify(text).replace(/</g, '\\u003c');
  return sendCompressed(reply, `((markup, web) => {\n${EMBED_SCRIPT}\n})(${literal(markup.text)}, ${literal(web)});\n`);
}

/**
 * Writes the embed where its script is, then makes its ids its own: one page may hold several embeds (the
 * same snippet twice, even), so each id gets a prefix drawn for this one, and links within it follow. Line
 * numbers lead to the line on the snippet's page.
 */
const EMBED_SCRIPT = `const id = 'snippetd-' + Math.random().toString(36).slice(2, 10);
document.write('<div class="snippetd-embed" id="' + id + '">' + markup + '</div>');
const root = document.getElementById(id);
for (const a of root.querySelectorAll('a.ln')) a.href = web + a.getAttribute('href');
for (const el of root.querySelectorAll('[id]')) el.id = id + '-' + el.id;
for (const el of root.querySelectorAll('[aria-labelledby]')) el.setAttribute('aria-labelledby', id + '-' + el.getAttribute('aria-labelledby'));
for (const a of root.querySelectorAll('a.anchor')) a.setAttribute('href', '#' + a.id);
for (const a of root.querySelectorAll('a[href^="#"]:not(.anchor)')) a.setAttribute('href', '#' + id + '-' + a.getAttribute('href').slice(1));`;

// Scoped to the embed's own elements, so it neither takes nor gives styles to the page around it: what a page's
// own `pre`, `code` and `a` rules would change (colours, background, font) is set here.
const EMBED_STYLE = `.snippetd-embed{font:14px/1.45 system-ui,sans-serif;border:1px solid #dcdcde;border-radius:6px;color:#1f1f24;background:#fff}
.snippetd-embed .snippetd-embed-title{margin:0;padding:.5rem .75rem;border-bottom:1px solid #dcdcde}
.snippetd-embed .file-header{display:flex;gap:1rem;padding:.4rem .75rem;background:#f6f6f8}
.snippetd-embed .file-header h2{font-size:1em;margin:0}.snippetd-embed button.copy{display:none}
.snippetd-embed pre{margin:0;padding:.75rem;overflow-x:auto;font:13px/1.45 ui-monospace,monospace;color:#1f1f24;background:#fff;border:0;border-radius:0}
.snippetd-embed pre code{font:inherit;color:inherit;background:none;padding:0;border:0}
.snippetd-embed a{color:#1068bf}.snippetd-embed .markdown{padding:0 .75rem}.snippetd-embed details.source{padding:0 .75rem .5rem}
.snippetd-embed .hljs-keyword{color:#a626a4}.snippetd-embed .hljs-string{color:#2a7a2a}
.snippetd-embed .hljs-number{color:#8a5d00}.snippetd-embed .hljs-comment{color:#6a6a72}
.snippetd-embed .hljs-title{color:#2856c3}
.snippetd-embed code{counter-reset:line}.snippetd-embed .line{display:block;counter-increment:line}
.snippetd-embed .ln{display:inline-block;min-width:3ch;margin-right:1rem;text-align:right;color:#6a6a72;text-decoration:none;user-select:none}
.snippetd-embed .ln::before{content:counter(line)}.snippetd-embed .line:target{background:#fbf2da}`;

async function snippetPage(request: FastifyRequest, reply: FastifyReply, projectPath: string | null, id: number) {
  const store = storeOf(request);
  const { ctx, snippet } = await findSnippetOrPersonalForPage(store, pageViewer(request), projectPath, id);
  const author = (await store.users.findById(snippet.author_id)) as User;
  const base = baseUrl(request);
  const where = ctx ? ctx.project.full_path : null;
  const web = snippetWebUrl(base, where, snippet.id);
  const sections = await fileSections(store, snippet, web);
  const nonce = newNonce();
  const subject = ctx ? { ...ctx, snippet } : { project: null, access: NO_ACCESS, snippet };
  const body = html`<article class="snippet">
<h1>${snippet.title}</h1>
${snippetActions(request.pageUser, subject, new URL(web).pathname)}
<p class="meta"><span class="badge">${snippet.visibility}</span>
by <a href="${base}/${author.username}">${author.name}</a>
· created <time datetime="${snippet.created_at}">${snippet.created_at.slice(0, 10)}</time>
· updated <time datetime="${snippet.updated_at}">${snippet.updated_at.slice(0, 10)}</time></p>
${snippet.description ? html`<div class="description markdown">${trusted(await markdownHtml(snippet.description))}</div>` : ''}
${where ? html`<p class="meta">in <a href="${base}/${where}">${where}</a></p>` : ''}
<p class="meta"><a href="${web}/revisions">Revisions</a></p>
${clonePanel(snippetHttpRepoUrl(base, where, snippet.id), isReadableByAnyone(ctx, snippet) ? web : null)}
${sections}
</article>
${pageScript(nonce)}`;
  return sendPage(reply, 200, snippet.title, body, nonce);
}

function clonePanel(clone: string, embedFrom: string | null): Html {
  return html`<section class="clone">
${cloneField(clone)}
${embedFrom ? copyField('embed', 'Embed', `<script src="${embedFrom}.js"></script>`) : ''}
</section>`;
}

async function rawPage(
  request: FastifyRequest,
  reply: FastifyReply,
  projectPath: string | null,
  id: number,
  at: { ref: string; path: string } | null,
) {
  const store = storeOf(request);
  const viewer = pageViewer(request);
  const { ctx, snippet } = await findSnippetOrPersonalForPage(store, viewer, projectPath, id);
  const rawScope = ctx ? ctx.project.id : null;
  if (at) await limitRaw(request, rawScope, `snippets/${snippet.id}/${at.path}`, viewer !== null);
  const file = at
    ? { path: at.path, ...(await readSnippetFile(store, snippet, at.ref, at.path)) }
    : await firstSnippetFile(store, snippet).then((f) => ({ ...f, path: f.path ?? snippet.file_name }));
  if (!at) await limitRaw(request, rawScope, `snippets/${snippet.id}/${file.path}`, viewer !== null);
  // A minute at any ref: GitLab's snippet raw (Snippets::BlobsActions) finds its blob without setting the ref
  // SendsBlob looks at for a commit id.
  return sendWebRaw(request, reply, file, { public: isReadableByAnyone(ctx, snippet), atCommitId: false });
}

/**
 * [pattern over the URL's path as sent, handler]; the first match serves the request. The handler gets
 * the pattern's groups decoded one by one, so an encoded "/" inside a ref stays part of the ref.
 */
export const SNIPPET_PAGES: [RegExp, PageHandler][] = [
  [/^\/-\/snippets\/(\d+)$/, (rq, rp, g) => snippetPage(rq, rp, null, parseRowId(g[0])!)],
  [/^\/-\/snippets\/(\d+)\.js$/, (rq, rp, g) => embedScript(rq, rp, null, parseRowId(g[0])!)],
  [/^\/-\/snippets\/(\d+)\/raw$/, (rq, rp, g) => rawPage(rq, rp, null, parseRowId(g[0])!, null)],
  [
    /^\/-\/snippets\/(\d+)\/raw\/([^/]+)\/(.+)$/,
    (rq, rp, g) => rawPage(rq, rp, null, parseRowId(g[0])!, { ref: g[1], path: g[2] }),
  ],
  [/^\/(.+)\/-\/snippets\/(\d+)$/, (rq, rp, g) => snippetPage(rq, rp, g[0], parseRowId(g[1])!)],
  [/^\/(.+)\/-\/snippets\/(\d+)\.js$/, (rq, rp, g) => embedScript(rq, rp, g[0], parseRowId(g[1])!)],
  [/^\/(.+)\/-\/snippets\/(\d+)\/raw$/, (rq, rp, g) => rawPage(rq, rp, g[0], parseRowId(g[1])!, null)],
  [
    /^\/(.+)\/-\/snippets\/(\d+)\/raw\/([^/]+)\/(.+)$/,
    (rq, rp, g) => rawPage(rq, rp, g[0], parseRowId(g[1])!, { ref: g[2], path: g[3] }),
  ],
  // GitLab's legacy paths move permanently to the /-/ ones; only a well-formed project path, so that an
  // encoded "/" (`/%2Fevil.example/snippets/1`) can never make the target another site (`//evil.example/…`).
  [
    /^\/(.+)\/snippets\/(\d+)(\/raw)?$/,
    (rq, rp, g) => {
      if (!isWellFormedFullPath(g[0])) throw notFound('Project');
      return rp.redirect(sitePath(rq, `/${encodePath(g[0])}/-/snippets/${g[1]}${g[2] ?? ''}${queryOf(rq)}`), 301);
    },
  ],
];

const queryOf = (request: FastifyRequest) => {
  const at = request.url.indexOf('?');
  return at === -1 ? '' : request.url.slice(at);
};
