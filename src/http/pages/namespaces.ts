// Group and user pages: a group (/groups/<path>, and /<path> as GitLab) with the subgroups and projects the
// viewer may see; a user (/<username>, all of them at /users/<username>/snippets) with the snippets the
// viewer may see; the instance's snippets (/explore/snippets) and the signed-in user's own
// (/dashboard/snippets), personal and project ones. Every list is paged and comes from the snippets finder.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findReadableGroup, visibleChildGroups } from '../../domain/groups.ts';
import { visibleProjectsIn } from '../../domain/projects.ts';
import { findNewestSnippets, projectsOf, type SnippetListFilter } from '../../domain/snippets/finder.ts';
import type { Snippet } from '../../storage/db/schema.ts';
import { findReadableUser } from '../../domain/users.ts';
import { publicVisibilityRestricted } from '../../domain/settings.ts';
import { storeOf } from '../request.ts';
import { baseUrl, sitePath, snippetWebUrl } from '../urls.ts';
import { html } from '../views/html.ts';
import { sendPage } from './layout.ts';
import { pageLinks, pageViewer, positiveQueryNumber, type PageHandler } from './common.ts';
import { idsBelow } from '../../domain/ids.ts';

const PROJECTS_PER_PAGE = 50;
const SUBGROUPS_PER_PAGE = 20;
const SNIPPETS_PER_PAGE = 20;

export async function groupPage(request: FastifyRequest, reply: FastifyReply, groupPath: string) {
  const store = storeOf(request);
  const viewer = pageViewer(request);
  const { group } = await findReadableGroup(store, viewer, groupPath);
  const base = baseUrl(request);
  // Subgroups a page at a time after the last one shown (`subgroups_after`), as GitLab pages them by 20.
  const after = positiveQueryNumber(request, 'subgroups_after') ?? null;
  const subgroups = await visibleChildGroups(store, viewer, group, after, SUBGROUPS_PER_PAGE);
  const lastShown = subgroups.groups.at(-1)?.group.id;
  const page = positiveQueryNumber(request, 'page') ?? 1;
  const window = { offset: (page - 1) * PROJECTS_PER_PAGE, limit: PROJECTS_PER_PAGE };
  const projects = await visibleProjectsIn(store, viewer, group.id, window);
  const pageUrl = (n: number) => `${base}/groups/${group.full_path}?page=${n}`;
  const body = html`<h1>${group.name}</h1>
<p class="meta"><span class="badge">${group.visibility}</span> ${group.full_path}</p>
${group.description ? html`<p class="description">${group.description}</p>` : ''}
<section><h2>Subgroups</h2>
${
  subgroups.groups.length
    ? html`<ul class="list">${subgroups.groups.map((g) => html`<li><a href="${base}/groups/${g.group.full_path}">${g.group.name}</a> <span class="badge">${g.group.visibility}</span></li>`)}</ul>`
    : html`<p class="empty">No subgroups to show.</p>`
}
${subgroups.more ? html`<p><a rel="next" href="${base}/groups/${group.full_path}?subgroups_after=${lastShown}">More subgroups</a></p>` : ''}</section>
<section><h2>Projects</h2>
${
  projects.rows.length
    ? html`<ul class="list">${projects.rows.map((p) => html`<li><a href="${base}/${p.full_path}">${p.name}</a> <span class="badge">${p.visibility}</span></li>`)}</ul>`
    : html`<p class="empty">No projects to show.</p>`
}
${pageLinks(
  page > 1 ? { href: pageUrl(page - 1), label: 'Previous' } : undefined,
  projects.hasMore ? { href: pageUrl(page + 1), label: 'Next' } : undefined,
)}</section>`;
  return sendPage(reply, 200, group.name, body);
}

async function userPage(request: FastifyRequest, reply: FastifyReply, username: string) {
  const user = await findReadableUser(storeOf(request), pageViewer(request), username);
  const snippets = await snippetsPage(request, { authorId: user.id });
  const body = html`<h1>${user.name}</h1>
<p class="meta">@${user.username}</p>
<section><h2>Snippets</h2>${await snippetsAcrossProjects(request, `/${user.username}`, snippets)}
<p><a href="${baseUrl(request)}/users/${user.username}/snippets">All snippets by ${user.name}</a></p></section>`;
  return sendPage(reply, 200, user.name, body);
}

/** /users/<username>/snippets: the snippets of one author that the viewer may see, personal and project ones. */
async function userSnippetsPage(request: FastifyRequest, reply: FastifyReply, username: string) {
  const user = await findReadableUser(storeOf(request), pageViewer(request), username);
  const listPath = `/users/${user.username}/snippets`;
  const body = html`<h1>Snippets by <a href="${baseUrl(request)}/${user.username}">${user.name}</a></h1>
${await snippetsAcrossProjects(request, listPath, await snippetsPage(request, { authorId: user.id }))}`;
  return sendPage(reply, 200, `Snippets · ${user.name}`, body);
}

interface SnippetsPage {
  snippets: Snippet[];
  /** Where the next page starts (snippets with smaller ids), or null when none are left. */
  nextBefore: number | null;
}

/** The page of snippets that the `before` parameter asks for (the newest when absent), keyed by id. */
async function snippetsPage(request: FastifyRequest, filter: SnippetListFilter): Promise<SnippetsPage> {
  const before = idsBelow(positiveQueryNumber(request, 'before'));
  const page = await findNewestSnippets(
    storeOf(request),
    pageViewer(request),
    { ...filter, beforeId: before },
    SNIPPETS_PER_PAGE,
  );
  return { snippets: page.rows, nextBefore: page.hasMore ? page.rows[page.rows.length - 1].id : null };
}

/** The list of a page of snippets, with links to older ones; `listPath` is the list's own path. */
async function snippetsAcrossProjects(
  request: FastifyRequest,
  listPath: string,
  { snippets, nextBefore }: SnippetsPage,
) {
  const base = baseUrl(request);
  const projects = await projectsOf(storeOf(request), snippets);
  const here = `${base}${listPath}`;
  const links = pageLinks(
    positiveQueryNumber(request, 'before') ? { href: here, label: 'Newest' } : undefined,
    nextBefore ? { href: `${here}?before=${nextBefore}`, label: 'Older' } : undefined,
  );
  if (!snippets.length) return html`<p class="empty">No snippets to show.</p>${links}`;
  return html`<ul class="list">${snippets.map((snippet) => {
    const projectPath = snippet.project_id === null ? null : (projects.get(snippet.project_id)?.full_path ?? null);
    return html`<li><a href="${snippetWebUrl(base, projectPath, snippet.id)}">${snippet.title}</a>
<span class="meta">${projectPath ?? 'Personal snippet'}</span> <span class="badge">${snippet.visibility}</span></li>`;
  })}</ul>${links}`;
}

/** /explore/snippets: the newest snippets the viewer may see, across the instance. */
async function explorePage(request: FastifyRequest, reply: FastifyReply) {
  if (!pageViewer(request) && (await publicVisibilityRestricted(storeOf(request))))
    return reply.redirect(
      sitePath(request, `/users/sign_in?redirect_to=${encodeURIComponent('/explore/snippets')}`),
      302,
    );
  const body = html`<h1>Explore snippets</h1>${await snippetsAcrossProjects(request, '/explore/snippets', await snippetsPage(request, {}))}`;
  return sendPage(reply, 200, 'Explore snippets', body);
}

/** /dashboard/snippets: the signed-in user's own snippets; visitors are sent to sign in first. */
async function dashboardPage(request: FastifyRequest, reply: FastifyReply) {
  const viewer = pageViewer(request);
  if (!viewer)
    return reply.redirect(
      sitePath(request, `/users/sign_in?redirect_to=${encodeURIComponent('/dashboard/snippets')}`),
      302,
    );
  const snippets = await snippetsPage(request, { authorId: viewer.id });
  const body = html`<h1>Your snippets</h1>${await snippetsAcrossProjects(request, '/dashboard/snippets', snippets)}`;
  return sendPage(reply, 200, 'Your snippets', body);
}

/** A single path segment names a user or a top-level group (GitLab keeps both in one namespace of names). */
async function namespacePage(request: FastifyRequest, reply: FastifyReply, name: string) {
  if (await storeOf(request).users.findByUsername(name)) return userPage(request, reply, name);
  return groupPage(request, reply, name);
}

export const NAMESPACE_PAGES: [RegExp, PageHandler][] = [
  [/^\/explore\/snippets$/, (rq, rp) => explorePage(rq, rp)],
  [/^\/dashboard\/snippets$/, (rq, rp) => dashboardPage(rq, rp)],
  [/^\/users\/([^/]+)\/snippets$/, (rq, rp, g) => userSnippetsPage(rq, rp, g[0])],
  [/^\/groups\/(.+)$/, (rq, rp, g) => groupPage(rq, rp, g[0])],
  [/^\/([^/-][^/]*)$/, (rq, rp, g) => namespacePage(rq, rp, g[0])],
];
