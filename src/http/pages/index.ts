// The web face: every path outside the API that is not git is a page. Git over HTTP owns the catch-all
// route and hands such paths here (routes/git-http.ts); the stylesheet has a route of its own.
import fs from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { routeNotFound } from '../../domain/failure.ts';
import { sendFailurePage, sendPage, STYLESHEET_PATH } from './layout.ts';
import { html } from '../views/html.ts';
import { SNIPPET_PAGES } from './snippets.ts';
import { readPageUser, sessionRoutes } from './sessions.ts';
import { PROJECT_PAGES } from './projects.ts';
import { NAMESPACE_PAGES } from './namespaces.ts';
import { shippedFile } from '../../shipped-files.ts';
import { sendCompressed } from '../plugins/compression.ts';

// Snippet paths first, then groups and users (one segment); the project page takes any path that is left.
const PAGES = [[/^\/$/, homePage] as const, ...SNIPPET_PAGES, ...NAMESPACE_PAGES, ...PROJECT_PAGES];

const STYLESHEET = fs.readFileSync(shippedFile('http', 'views', 'app.css'));

/** Serves the page at `rawPath` (the path as sent, still encoded); a failure becomes a page too. */
export async function servePage(request: FastifyRequest, reply: FastifyReply, rawPath: string): Promise<unknown> {
  // The API's own unknown routes stay JSON ("api" is a name GitLab reserves, so no project lives there).
  if (rawPath.startsWith('/api/')) throw routeNotFound();
  for (const [pattern, handler] of PAGES) {
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
  throw routeNotFound();
}

export async function pageRoutes(app: FastifyInstance) {
  await app.register(sessionRoutes);
  app.get(STYLESHEET_PATH, (_request, reply) =>
    sendCompressed(
      reply.header('Content-Type', 'text/css; charset=utf-8').header('Cache-Control', 'public, max-age=3600'),
      STYLESHEET,
    ),
  );
}

/** The front page: who is signed in, and where to go. */
function homePage(request: FastifyRequest, reply: FastifyReply) {
  const user = request.pageUser;
  const body = html`<h1>snippetd</h1>
<p>GitLab's snippets and templates, self-hosted. ${user ? html`Signed in as <strong>${user.username}</strong>.` : ''}</p>`;
  return sendPage(reply, 200, 'snippetd', body);
}
