// The web face: every path outside the API that is not git is a page. Pages have a router of their own (the
// PAGES table: methods, a pattern over the path as sent, a handler), reached from the one route for paths
// of any depth (routes/paths.ts) as git over HTTP is; the sign-in routes, the stylesheet and the
// code editor's script are plain routes.
import fs from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { routeNotFound } from '../../domain/failure.ts';
import { sendFailurePage, sendPage, STYLESHEET_PATH } from './layout.ts';
import { html } from '../views/html.ts';
import { SNIPPET_PAGES } from './snippets.ts';
import { REVISION_PAGES } from './revisions.ts';
import { SNIPPET_FORM_PAGES } from './snippet-forms.ts';
import { ACCESS_TOKEN_PAGES } from './access-tokens.ts';
import { readPageUser, sessionRoutes } from './sessions.ts';
import { oidcRoutes } from './oidc.ts';
import { PROJECT_PAGES } from './projects.ts';
import { NAMESPACE_PAGES } from './namespaces.ts';
import { SEARCH_PAGES } from './search.ts';
import { shippedFile } from '../../shipped-files.ts';
import { sendCompressed } from '../plugins/compression.ts';
import type { PageHandler } from './common.ts';
import { EDITOR_ROUTE, serveEditorFile } from './editor.ts';
import { sitePath } from '../urls.ts';

/** A page: the methods it answers (GET answers HEAD too), a pattern over the path as sent, its handler. */
export interface PageRoute {
  methods: readonly ('GET' | 'POST')[];
  pattern: RegExp;
  handler: PageHandler;
}

const withMethods =
  (methods: PageRoute['methods']) =>
  (pages: readonly (readonly [RegExp, PageHandler])[]): PageRoute[] =>
    pages.map(([pattern, handler]) => ({ methods, pattern, handler }));
const gets = withMethods(['GET']);
const forms = withMethods(['GET', 'POST']);

/** GitLab's /-/snippets: one's own snippets when signed in, else everyone's. */
function snippetsIndex(request: FastifyRequest, reply: FastifyReply) {
  return reply.redirect(sitePath(request, request.pageUser ? '/dashboard/snippets' : '/explore/snippets'), 302);
}

// Snippet paths first (the forms before the pages whose paths they extend), then groups and users (one
// segment); the project page takes any path that is left.
const PAGES: PageRoute[] = [
  ...gets([
    [/^\/$/, homePage],
    [/^\/-\/snippets$/, snippetsIndex],
  ]),
  ...forms([...SNIPPET_FORM_PAGES, ...ACCESS_TOKEN_PAGES]),
  ...gets([...SNIPPET_PAGES, ...REVISION_PAGES, ...SEARCH_PAGES, ...NAMESPACE_PAGES, ...PROJECT_PAGES]),
];

const methodOf = (request: FastifyRequest) => (request.method === 'HEAD' ? 'GET' : request.method);

/** Whether some page answers this method at `rawPath`. */
export const hasPage = (request: FastifyRequest, rawPath: string) =>
  PAGES.some((page) => page.methods.includes(methodOf(request) as 'GET') && page.pattern.test(rawPath));

/** Whether this POST is a form of some page, from a signed-in visitor (who may send a snippet's files). */
export const isSignedInForm = async (request: FastifyRequest) =>
  hasPage(request, request.url.split('?')[0]) && (await readPageUser(request)) !== null;

const STYLESHEET = fs.readFileSync(shippedFile('http', 'views', 'app.css'));

/** Serves the page at `rawPath` (the path as sent, still encoded); a failure becomes a page too. */
export async function servePage(request: FastifyRequest, reply: FastifyReply, rawPath: string): Promise<unknown> {
  // The API's own unknown routes stay JSON ("api" is a name GitLab reserves, so no project lives there).
  if (rawPath.startsWith('/api/')) throw routeNotFound();
  const method = methodOf(request);
  for (const { methods, pattern, handler } of PAGES) {
    if (!methods.includes(method as 'GET')) continue;
    const match = pattern.exec(rawPath);
    if (!match) continue;
    try {
      await readPageUser(request);
      return await handler(
        request,
        reply,
        match.slice(1).map((g) => g && decodeURIComponent(g)),
      );
    } catch (error) {
      return sendFailurePage(request, reply, error);
    }
  }
  // A browser path no page serves: an HTML page too (the API's paths keep their JSON 404 above).
  await readPageUser(request);
  return sendFailurePage(request, reply, routeNotFound());
}

export async function pageRoutes(app: FastifyInstance) {
  await app.register(sessionRoutes);
  await app.register(oidcRoutes);
  app.get(STYLESHEET_PATH, (_request, reply) =>
    sendCompressed(
      reply.header('Content-Type', 'text/css; charset=utf-8').header('Cache-Control', 'public, max-age=3600'),
      STYLESHEET,
    ),
  );
  app.get<{ Params: { file: string } }>(EDITOR_ROUTE, serveEditorFile);
}

/** The front page: who is signed in, and where to go. */
function homePage(request: FastifyRequest, reply: FastifyReply) {
  const user = request.pageUser;
  const body = html`<h1>snippetd</h1>
<p>GitLab's snippets and templates, self-hosted. ${user ? html`Signed in as <strong>${user.username}</strong>.` : ''}</p>`;
  return sendPage(reply, 200, 'snippetd', body);
}
