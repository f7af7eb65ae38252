// Project pages at GitLab's paths: the project (/<project>), its snippets (/<project>/-/snippets), and
// the files of its repository (/<project>/-/tree/<ref>/<dir>, /<project>/-/blob/<ref>/<file>), since
// template projects live there. The same domain calls as the API; hidden is a 404 page.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findReadableProject, type ProjectContext } from '../../domain/projects.ts';
import { can, NO_ACCESS } from '../../domain/policy.ts';
import { findSnippets } from '../../domain/snippets/finder.ts';
import { Failure, notFound } from '../../domain/failure.ts';
import {
  compareCommits,
  listTree,
  nameOf,
  projectCommitDiff,
  projectRangeDiff,
  readFileBlob,
  splitRefPath,
} from '../../domain/project-files.ts';
import { markdownHtml, viewOf, type FileView } from '../../domain/rendering.ts';
import type { Snippet } from '../../storage/db/schema.ts';
import type { TreeEntry } from '../../storage/git/repository.ts';
import { storeOf } from '../request.ts';
import { baseUrl, encodePath, snippetWebUrl } from '../urls.ts';
import { html, trusted, type Html } from '../views/html.ts';
import { newNonce, sendPage } from './layout.ts';
import { pageScript } from './scripts.ts';
import { sendWebRaw } from '../raw.ts';
import { limitRaw } from '../rate-limits.ts';
import { groupPage } from './namespaces.ts';
import { comparisonArticle, diffArticle, shortId } from './revisions.ts';
import {
  cloneField,
  codeBlock,
  copyButton,
  pageLinks,
  pageViewer,
  positiveQueryNumber,
  tooLargeToDisplay,
  type PageHandler,
} from './common.ts';

const SNIPPETS_PER_PAGE = 20;

/** The project, if the page's viewer may see it (404 otherwise, as the API). */
const projectFor = (request: FastifyRequest, projectPath: string) =>
  findReadableProject(storeOf(request), pageViewer(request), projectPath);

/** One page of the snippets the viewer may see, newest first; none when the snippets feature is closed to them. */
async function visibleSnippets(request: FastifyRequest, ctx: ProjectContext, page: number, title?: string) {
  const viewer = pageViewer(request);
  if (!can(viewer, 'read_project_snippets', ctx)) return null;
  const window = { offset: (page - 1) * SNIPPETS_PER_PAGE, limit: SNIPPETS_PER_PAGE };
  return findSnippets(storeOf(request), viewer, { projectId: ctx.project.id, titleContains: title }, window);
}

function snippetList(base: string, ctx: ProjectContext, snippets: Snippet[]): Html {
  if (!snippets.length) return html`<p class="empty">No snippets to show.</p>`;
  return html`<ul class="list">${snippets.map(
    (s) => html`<li><a href="${snippetWebUrl(base, ctx.project.full_path, s.id)}">${s.title}</a>
<span class="badge">${s.visibility}</span> <time datetime="${s.updated_at}">${s.updated_at.slice(0, 10)}</time></li>`,
  )}</ul>`;
}

/** Entries a folder's page lists: 50,000 made 5 MB of HTML in 160 ms. The API's tree pages through them all. */
const TREE_ITEMS_SHOWN = 1_000;

function treeList(base: string, ctx: ProjectContext, ref: string, items: readonly TreeEntry[]): Html {
  const link = (kind: 'tree' | 'blob', item: TreeEntry) =>
    `${base}/${ctx.project.full_path}/-/${kind}/${encodeURIComponent(ref)}/${encodePath(item.path)}`;
  const more = items.length - TREE_ITEMS_SHOWN;
  return html`<ul class="list tree">${items
    .slice(0, TREE_ITEMS_SHOWN)
    .map((item) =>
      item.type === 'tree'
        ? html`<li><a href="${link('tree', item)}">${nameOf(item)}/</a></li>`
        : html`<li><a href="${link('blob', item)}">${nameOf(item)}</a></li>`,
    )}</ul>
${more > 0 ? html`<p class="meta">The first ${TREE_ITEMS_SHOWN.toLocaleString('en')} entries are shown, ${more.toLocaleString('en')} more are not.</p>` : ''}`;
}

function projectHeader(base: string, ctx: ProjectContext): Html {
  const { project } = ctx;
  return html`<h1><a href="${base}/${project.full_path}">${project.name}</a></h1>
<p class="meta"><span class="badge">${project.visibility}</span> ${project.full_path}</p>`;
}

async function projectPage(request: FastifyRequest, reply: FastifyReply, projectPath: string) {
  const ctx = await projectFor(request, projectPath);
  const base = baseUrl(request);
  const snippets = await visibleSnippets(request, ctx, 1);
  const ref = ctx.project.default_branch;
  const canReadCode = can(pageViewer(request), 'download_code', ctx);
  // An empty repository has no tree yet: the page shows no files rather than failing.
  const files =
    canReadCode && ref
      ? await listTree(storeOf(request), ctx, { recursive: false }).catch((error) => {
          if (error instanceof Failure && error.reason === 'not_found') return [];
          throw error;
        })
      : [];
  const readme = canReadCode && ref ? await readmeOf(request, ctx, ref, files) : null;
  const nonce = newNonce();
  const body = html`${projectHeader(base, ctx)}
${ctx.project.description ? html`<div class="description markdown">${trusted(await markdownHtml(ctx.project.description))}</div>` : ''}
${canReadCode ? html`<section class="clone">${cloneField(`${base}/${ctx.project.full_path}.git`)}</section>` : ''}
${
  snippets
    ? html`<section><h2>Snippets</h2>${snippetList(base, ctx, snippets.rows)}
<p><a href="${base}/${ctx.project.full_path}/-/snippets">All snippets</a></p></section>`
    : ''
}
${
  canReadCode && ref
    ? html`<section><h2>Files on ${ref}</h2>${
        files.length ? treeList(base, ctx, ref, files) : html`<p class="meta">The repository is empty.</p>`
      }</section>`
    : ''
}
${readme ?? ''}
${pageScript(nonce)}`;
  return sendPage(reply, 200, ctx.project.name, body, nonce);
}

/** README names GitLab shows below a project's files, Markdown first. */
const README = /^readme(\.(md|markdown|mdown|mkd|txt|rst|adoc))?$/i;

/** The project's README on `ref`, rendered, when its root has one. */
async function readmeOf(request: FastifyRequest, ctx: ProjectContext, ref: string, files: readonly TreeEntry[]) {
  const readmes = files.filter((f) => f.type === 'blob' && README.test(nameOf(f)));
  const name = readmes.find((f) => /\.(md|markdown|mdown|mkd)$/i.test(nameOf(f))) ?? readmes[0];
  if (!name) return null;
  const { blobId, content } = await readFileBlob(storeOf(request), ctx, ref, name.path);
  const view = await viewOf(
    blobId,
    name.path,
    content,
    'readme-L',
    relativeLinks(baseUrl(request), ctx, ref, name.path),
  );
  const rawUrl = rawFileUrl(baseUrl(request), ctx, ref, name.path);
  return html`<section class="file readme" aria-labelledby="readme-name"><header class="file-header"><h2 id="readme-name">${nameOf(name)}</h2></header>
${fileView(view, rawUrl, nameOf(name))}
</section>`;
}

/** Where the relative links of a file at `file` lead: files' pages, images' raw bytes (render-worker.ts). */
function relativeLinks(base: string, ctx: ProjectContext, ref: string, file: string) {
  const dir = file.includes('/') ? `${encodePath(file.slice(0, file.lastIndexOf('/')))}/` : '';
  const at = (kind: string) => `${base}/${ctx.project.full_path}/-/${kind}/${encodeURIComponent(ref)}/${dir}`;
  return { blob: at('blob'), raw: at('raw') };
}

/** A repository file at its raw web path (GitLab's `/-/raw/<ref>/<path>`). */
const rawFileUrl = (base: string, ctx: ProjectContext, ref: string, file: string) =>
  `${base}/${ctx.project.full_path}/-/raw/${encodeURIComponent(ref)}/${encodePath(file)}`;

function fileView(view: FileView, rawUrl: string, fileName: string): Html {
  switch (view.kind) {
    case 'code':
      return codeBlock(view);
    case 'too_large':
      return tooLargeToDisplay(view.limit, rawUrl, `${rawUrl}?inline=false`);
    case 'markdown':
      return html`<div class="markdown">${trusted(view.html)}</div>`;
    case 'image':
      return html`<div class="image"><img src="${rawUrl}" alt="${fileName}"></div>`;
    case 'binary':
      return html`<p class="binary"><a href="${rawUrl}?inline=false" download>Download ${fileName}</a></p>`;
  }
}

async function snippetsPage(request: FastifyRequest, reply: FastifyReply, projectPath: string) {
  const ctx = await projectFor(request, projectPath);
  const query = request.query as Record<string, unknown>;
  const page = positiveQueryNumber(request, 'page') ?? 1;
  const title = typeof query.search === 'string' && query.search !== '' ? query.search : undefined;
  const result = await visibleSnippets(request, ctx, page, title);
  if (!result) throw notFound('Project');
  const base = baseUrl(request);
  const listUrl = (p: number) =>
    `${base}/${ctx.project.full_path}/-/snippets?page=${p}${title ? `&search=${encodeURIComponent(title)}` : ''}`;
  const mayCreate = can(pageViewer(request), 'create_snippet', ctx);
  const body = html`${projectHeader(base, ctx)}
<h2>Snippets</h2>
${mayCreate ? html`<p><a class="button" href="${base}/${ctx.project.full_path}/-/snippets/new">New snippet</a></p>` : ''}
<form method="get" class="search" role="search"><label>Title contains <input name="search" value="${title ?? ''}"></label> <button type="submit">Search</button></form>
${snippetList(base, ctx, result.rows)}
${pageLinks(
  page > 1 ? { href: listUrl(page - 1), label: 'Newer' } : undefined,
  result.hasMore ? { href: listUrl(page + 1), label: 'Older' } : undefined,
)}`;
  return sendPage(reply, 200, `Snippets · ${ctx.project.name}`, body);
}

async function codeProject(request: FastifyRequest, projectPath: string) {
  const ctx = await projectFor(request, projectPath);
  if (!can(pageViewer(request), 'download_code', ctx)) throw notFound('Project');
  return ctx;
}

async function treePage(request: FastifyRequest, reply: FastifyReply, projectPath: string, refAndDir: string) {
  const ctx = await codeProject(request, projectPath);
  const { ref, path: dir } = await splitRefPath(storeOf(request), ctx, refAndDir);
  const items = await listTree(storeOf(request), ctx, { ref, path: dir, recursive: false });
  const base = baseUrl(request);
  const nonce = newNonce();
  // A directory's README below its files, as GitLab shows it.
  const body = html`${projectHeader(base, ctx)}
<h2>${dir ?? '/'} <span class="meta">on ${ref}</span></h2>
${treeList(base, ctx, ref, items)}
${(await readmeOf(request, ctx, ref, items)) ?? ''}
${pageScript(nonce)}`;
  return sendPage(reply, 200, `${dir ?? ref} · ${ctx.project.name}`, body, nonce);
}

/** The ref and file of a blob or raw web path; 404 File Not Found when it names no file after the ref. */
async function refAndFile(request: FastifyRequest, ctx: ProjectContext, refAndFile: string) {
  const { ref, path } = await splitRefPath(storeOf(request), ctx, refAndFile);
  if (path === undefined) throw notFound('File');
  return { ref, file: path };
}

async function blobPage(request: FastifyRequest, reply: FastifyReply, projectPath: string, refAndPath: string) {
  const ctx = await codeProject(request, projectPath);
  const { ref, file } = await refAndFile(request, ctx, refAndPath);
  const { blobId, content } = await readFileBlob(storeOf(request), ctx, ref, file);
  const base = baseUrl(request);
  const view = await viewOf(blobId, file, content, 'L', relativeLinks(base, ctx, ref, file));
  const rawUrl = rawFileUrl(base, ctx, ref, file);
  const fileName = file.split('/').pop()!;
  const copyable = Buffer.isBuffer(content) && content.length > 0 && (view.kind === 'code' || view.kind === 'markdown');
  const nonce = newNonce();
  const body = html`${projectHeader(base, ctx)}
<section class="file" id="file-1" aria-labelledby="file-1-name"><header class="file-header"><h2 id="file-1-name">${file}</h2><span class="meta">on ${ref}</span>
<nav class="file-actions"><a href="${rawUrl}">Raw</a> <a href="${rawUrl}?inline=false" download>Download</a>
${copyable ? copyButton('file-1', `Copy ${fileName}`) : ''}</nav></header>
${fileView(view, rawUrl, fileName)}
${view.kind === 'markdown' ? html`<details class="source"><summary>Source</summary><pre><code>${trusted(view.sourceHtml)}</code></pre></details>` : ''}
</section>
${pageScript(nonce)}`;
  return sendPage(reply, 200, `${file} · ${ctx.project.name}`, body, nonce);
}

/** /<project>/-/commit/<sha>: a commit of the repository with its diff, where the commits API's web_url leads. */
async function commitPage(request: FastifyRequest, reply: FastifyReply, projectPath: string, ref: string) {
  const ctx = await codeProject(request, projectPath);
  const diff = await projectCommitDiff(storeOf(request), request.server.gitNode.caches, ctx, ref);
  if (!diff) throw notFound('Commit');
  const base = baseUrl(request);
  const web = `${base}/${ctx.project.full_path}`;
  const nav = html`<a href="${web}">${ctx.project.name}</a>
${diff.parent ? html`<a href="${web}/-/commit/${diff.parent}">Parent commit <code>${shortId(diff.parent)}</code></a>` : ''}`;
  const rawUrlOf = (commit: string, path: string) => rawFileUrl(base, ctx, commit, path);
  const { subject, body } = await diffArticle(diff, nav, rawUrlOf, 'commit');
  return sendPage(reply, 200, `${subject} · ${ctx.project.name}`, body);
}

/**
 * /<project>/-/compare/<from>...<to>: the commits `to` has and `from` has not, and the diff from their merge base,
 * where the compare API's web_url leads (GitLab's compare page). 404 when either names no commit.
 */
async function comparePage(
  request: FastifyRequest,
  reply: FastifyReply,
  projectPath: string,
  from: string,
  to: string,
) {
  const ctx = await codeProject(request, projectPath);
  const store = storeOf(request);
  const { caches } = request.server.gitNode;
  const compared = await compareCommits(store, caches, ctx, { from, to, straight: false }, { patches: false });
  if (!compared) throw notFound('Ref');
  const diff =
    compared.from === compared.to ? null : await projectRangeDiff(store, caches, ctx, compared.base, compared.to);
  const base = baseUrl(request);
  const web = `${base}/${ctx.project.full_path}`;
  const nav = html`<a href="${web}">${ctx.project.name}</a>
<a href="${web}/-/commit/${compared.to}">Commit <code>${shortId(compared.to)}</code></a>`;
  const body = comparisonArticle(
    compared,
    diff,
    nav,
    (id) => `${web}/-/commit/${id}`,
    (commit, path) => rawFileUrl(base, ctx, commit, path),
  );
  return sendPage(
    reply,
    200,
    `Compare ${shortId(compared.from)}...${shortId(compared.to)} · ${ctx.project.name}`,
    body,
  );
}

/**
 * A repository file's bytes at GitLab's raw web path, inert as the snippets' raw files (raw.ts), counted by
 * the same raw limits as the API's raw endpoint.
 */
async function rawFilePage(request: FastifyRequest, reply: FastifyReply, projectPath: string, refAndPath: string) {
  const ctx = await codeProject(request, projectPath);
  const { ref, file } = await refAndFile(request, ctx, refAndPath);
  const viewer = pageViewer(request);
  await limitRaw(request, ctx.project.id, file, viewer !== null);
  const { blobId, content } = await readFileBlob(storeOf(request), ctx, ref, file);
  const anyone = can(null, 'download_code', { project: ctx.project, access: NO_ACCESS });
  return sendWebRaw(
    request,
    reply,
    { path: file, content, blobId },
    { public: anyone, atCommitId: /^[0-9a-f]{40}$/.test(ref) },
  );
}

/**
 * A path of several segments names a project or a subgroup (GitLab gives both one space of names, so at
 * most one of them exists): the project when there is one the viewer may see, else the group.
 */
async function projectOrGroupPage(request: FastifyRequest, reply: FastifyReply, path: string) {
  try {
    return await projectPage(request, reply, path);
  } catch (error) {
    if (error instanceof Failure && error.reason === 'not_found' && path.includes('/'))
      return groupPage(request, reply, path);
    throw error;
  }
}

/** Most specific first: the project page takes whatever path is left. */
export const PROJECT_PAGES: [RegExp, PageHandler][] = [
  [/^\/(.+)\/-\/snippets$/, (rq, rp, g) => snippetsPage(rq, rp, g[0])],
  // `<ref>/<path>`: a branch may hold `/` (splitRefPath). The project's path is the shortest before `/-/` (no project
  // path holds one), so a folder named `-` keeps its place in the file's path.
  [/^\/(.+?)\/-\/tree\/(.+)$/, (rq, rp, g) => treePage(rq, rp, g[0], g[1])],
  [/^\/(.+?)\/-\/blob\/(.+)$/, (rq, rp, g) => blobPage(rq, rp, g[0], g[1])],
  [/^\/(.+?)\/-\/raw\/(.+)$/, (rq, rp, g) => rawFilePage(rq, rp, g[0], g[1])],
  [/^\/(.+?)\/-\/commit\/([^/]+)$/, (rq, rp, g) => commitPage(rq, rp, g[0], g[1])],
  // No ref holds `..` (git refuses it), so the first `...` parts the two.
  [/^\/(.+?)\/-\/compare\/(.+?)\.\.\.(.+)$/, (rq, rp, g) => comparePage(rq, rp, g[0], g[1], g[2])],
  [/^\/([^-][^?]*[^/])$/, (rq, rp, g) => projectOrGroupPage(rq, rp, g[0])],
];
