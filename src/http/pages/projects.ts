// Project pages at GitLab's paths: the project (/<project>), its snippets (/<project>/-/snippets), and
// the files of its repository (/<project>/-/tree/<ref>/<dir>, /<project>/-/blob/<ref>/<file>), since
// template projects live there. The same domain calls as the API; hidden is a 404 page.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findReadableProject, type ProjectContext } from '../../domain/projects.ts';
import { can } from '../../domain/policy.ts';
import { findSnippets } from '../../domain/snippets/finder.ts';
import { Failure, notFound } from '../../domain/failure.ts';
import { listTree, readFile, type TreeItem } from '../../domain/project-files.ts';
import { viewOf } from '../../domain/rendering.ts';
import type { Snippet } from '../../storage/db/schema.ts';
import { storeOf } from '../request.ts';
import { baseUrl, encodePath, snippetWebUrl } from '../urls.ts';
import { html, trusted, type Html } from '../views/html.ts';
import { sendPage } from './layout.ts';
import { groupPage } from './namespaces.ts';
import {
  pageLinks,
  pageViewer,
  positiveQueryNumber,
  renderAbandoned,
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

function treeList(base: string, ctx: ProjectContext, ref: string, items: TreeItem[]): Html {
  const link = (kind: 'tree' | 'blob', item: TreeItem) =>
    `${base}/${ctx.project.full_path}/-/${kind}/${encodeURIComponent(ref)}/${encodePath(item.path)}`;
  return html`<ul class="list tree">${items.map((item) =>
    item.type === 'tree'
      ? html`<li><a href="${link('tree', item)}">${item.name}/</a></li>`
      : html`<li><a href="${link('blob', item)}">${item.name}</a></li>`,
  )}</ul>`;
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
  const body = html`${projectHeader(base, ctx)}
${ctx.project.description ? html`<p class="description">${ctx.project.description}</p>` : ''}
${canReadCode ? html`<section class="clone"><label>Clone with HTTPS <input readonly value="${base}/${ctx.project.full_path}.git"></label></section>` : ''}
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
}`;
  return sendPage(reply, 200, ctx.project.name, body);
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

async function treePage(request: FastifyRequest, reply: FastifyReply, projectPath: string, ref: string, dir?: string) {
  const ctx = await codeProject(request, projectPath);
  const items = await listTree(storeOf(request), ctx, { ref, path: dir, recursive: false });
  const base = baseUrl(request);
  const body = html`${projectHeader(base, ctx)}
<h2>${dir ?? '/'} <span class="meta">on ${ref}</span></h2>
${treeList(base, ctx, ref, items)}`;
  return sendPage(reply, 200, `${dir ?? ref} · ${ctx.project.name}`, body);
}

async function blobPage(request: FastifyRequest, reply: FastifyReply, projectPath: string, ref: string, file: string) {
  const ctx = await codeProject(request, projectPath);
  const { info, content } = await readFile(storeOf(request), ctx, ref, file);
  const view = await viewOf(info.blob_id, file, content);
  const base = baseUrl(request);
  const rawUrl = `${base}/api/v4/projects/${ctx.project.id}/repository/files/${encodeURIComponent(file)}/raw?ref=${encodeURIComponent(ref)}`;
  const shown =
    view.kind === 'code'
      ? html`${view.renderAbandoned ? renderAbandoned : ''}<pre class="code"><code class="hljs">${trusted(view.html)}</code></pre>`
      : view.kind === 'too_large'
        ? tooLargeToDisplay(view.limit, rawUrl, rawUrl)
        : view.kind === 'markdown'
          ? html`<div class="markdown">${trusted(view.html)}</div>`
          : html`<p class="binary"><a href="${rawUrl}">Download ${info.file_name}</a></p>`;
  const body = html`${projectHeader(base, ctx)}
<section class="file"><header class="file-header"><h2>${file}</h2><span class="meta">on ${ref}</span>
<nav class="file-actions"><a href="${rawUrl}">Raw</a></nav></header>
${shown}
</section>`;
  return sendPage(reply, 200, `${file} · ${ctx.project.name}`, body);
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
  [/^\/(.+)\/-\/tree\/([^/]+)(?:\/(.+))?$/, (rq, rp, g) => treePage(rq, rp, g[0], g[1], g[2])],
  [/^\/(.+)\/-\/blob\/([^/]+)\/(.+)$/, (rq, rp, g) => blobPage(rq, rp, g[0], g[1], g[2])],
  [/^\/([^-][^?]*[^/])$/, (rq, rp, g) => projectOrGroupPage(rq, rp, g[0])],
];
