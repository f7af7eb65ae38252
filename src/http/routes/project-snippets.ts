// Project snippets (GitLab's lib/api/project_snippets.rb). Every endpoint first resolves the project
// (404 Project Not Found when unreadable) and applies the snippets feature gate (403), then validates
// parameters (400), then authenticates where required (401), then looks up and authorises the snippet.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { currentUser, storeOf } from '../request.ts';
import { validateRequest } from '../params.ts';
import { pageOf, parsePage } from '../pagination.ts';
import { NOTHING_MORE, sendAnswer, sendRawAnswer } from '../kept-answers.ts';
import { listJson } from '../prepared-answer.ts';
import { limitSnippetRaw } from '../rate-limits.ts';
import * as spec from '../schemas/snippets.ts';
import { userAgentDetail } from '../presenters/snippets.ts';
import { createInput, depsOf, presentSnippets, requestMeta } from '../snippet-answers.ts';
import { findReadableProject, type ProjectContext } from '../../domain/projects.ts';
import { authorize } from '../../domain/policy.ts';
import { findSnippets } from '../../domain/snippets/finder.ts';
import { invalidParams, notFound, recordNotFound } from '../../domain/failure.ts';
import { createSnippet } from '../../domain/snippets/create.ts';
import { deleteSnippet } from '../../domain/snippets/delete.ts';
import {
  findVisibleSnippet,
  findVisibleSnippetState,
  firstSnippetFile,
  readSnippetFile,
} from '../../domain/snippets/reads.ts';
import { updateSnippet } from '../../domain/snippets/update.ts';
import type { Snippet } from '../../storage/db/schema.ts';
import { byteOrder } from '../../order.ts';

/**
 * The writes below change snippets and their repositories only: they look up their caller, project and
 * settings, which they do not change, through the read cache, as reads do (http/request.ts, usesReadCache).
 */
const CACHED_LOOKUPS = { config: { cachedLookups: true } };

const projectId = (request: FastifyRequest) => (request.params as { id: string }).id;

/** The before-hook of every snippet endpoint: readable project and snippets feature available. */
async function snippetProject(request: FastifyRequest): Promise<ProjectContext> {
  const viewer = request.principal.user;
  const ctx = await findReadableProject(storeOf(request), viewer, projectId(request));
  authorize(viewer, 'read_project_snippets', ctx);
  return ctx;
}

/** Presents snippets of the project; paths already at hand (on writes) are not looked up again. */
const present = (
  request: FastifyRequest,
  ctx: ProjectContext,
  snippets: Snippet[],
  knownPaths?: Map<number, string[]>,
) =>
  presentSnippets(
    request,
    snippets.map((snippet) => ({ snippet, project: ctx.project })),
    knownPaths,
  );

export default async function projectSnippetRoutes(app: FastifyInstance) {
  /** GET /projects/:id/snippets — signed in (401 anonymous); visible snippets, newest first, paginated. */
  app.get('/projects/:id/snippets', async (request, reply) => {
    const ctx = await snippetProject(request);
    const viewer = currentUser(request);
    const page = parsePage(request);
    return sendAnswer(request, reply, NOTHING_MORE, async () => {
      const { rows, headers } = await pageOf(request, page, (window) =>
        findSnippets(storeOf(request), viewer, { projectId: ctx.project.id }, window),
      );
      return { json: await listJson(await present(request, ctx, rows)), headers, source: 'database' };
    });
  });

  /** GET /projects/:id/snippets/:snippet_id — anyone who may see it; 404 {"message":"404 Not found"}. */
  app.get('/projects/:id/snippets/:snippet_id', async (request, reply) => {
    const ctx = await snippetProject(request);
    const { snippet_id } = validateRequest(spec.snippetIdSpec, request);
    return sendAnswer(request, reply, NOTHING_MORE, async () => {
      const snippet = await findVisibleSnippet(storeOf(request), request.principal.user, ctx, snippet_id);
      if (!snippet) throw recordNotFound();
      const [answer] = await present(request, ctx, [snippet]);
      return { json: JSON.stringify(answer), source: 'database' };
    });
  });

  /** POST /projects/:id/snippets — reporters+ and admins (401 anonymous, 403 others or archived); 201. */
  app.post('/projects/:id/snippets', CACHED_LOOKUPS, async (request, reply) => {
    const ctx = await snippetProject(request);
    const p = validateRequest(spec.createSnippetSpec, request, spec.createSnippetConstraints);
    if (p.content !== undefined && p.file_name === undefined) throw invalidParams('file_name is missing');
    const author = currentUser(request);
    authorize(author, 'create_snippet', ctx);
    const input = createInput(p);
    const created = await createSnippet(depsOf(request), ctx, author, input, requestMeta(request));
    const paths = [...new Set(input.files.map((f) => f.file_path))].sort(byteOrder);
    return reply.code(201).send((await present(request, ctx, [created], new Map([[created.id, paths]])))[0]);
  });

  /** PUT /projects/:id/snippets/:snippet_id — authors and maintainers+; 422 invalid actions, 400 repository errors. */
  app.put('/projects/:id/snippets/:snippet_id', CACHED_LOOKUPS, async (request) => {
    const ctx = await snippetProject(request);
    const p = validateRequest(spec.updateSnippetSpec, request, spec.updateSnippetConstraints);
    const viewer = currentUser(request);
    const found = await findVisibleSnippetState(storeOf(request), viewer, ctx, p.snippet_id);
    if (!found) throw notFound('Snippet');
    authorize(viewer, 'update_snippet', { ...ctx, snippet: found.snippet });
    const updated = await updateSnippet(depsOf(request), viewer, found, p, requestMeta(request));
    return (await present(request, ctx, [updated.snippet], new Map([[updated.snippet.id, updated.paths]])))[0];
  });

  /** DELETE /projects/:id/snippets/:snippet_id — own (reporter+) or maintainer+; 204, 412 on If-Unmodified-Since. */
  app.delete('/projects/:id/snippets/:snippet_id', CACHED_LOOKUPS, async (request, reply) => {
    const ctx = await snippetProject(request);
    const { snippet_id } = validateRequest(spec.snippetIdSpec, request);
    const viewer = currentUser(request);
    const snippet = await findVisibleSnippet(storeOf(request), viewer, ctx, snippet_id);
    if (!snippet) throw notFound('Snippet');
    authorize(viewer, 'admin_snippet', { ...ctx, snippet });
    const since = request.headers['if-unmodified-since'];
    await deleteSnippet(depsOf(request), snippet, typeof since === 'string' ? since : undefined);
    return reply.code(204).send();
  });

  /** GET /projects/:id/snippets/:snippet_id/raw — the first file (git order) of the current version. */
  app.get('/projects/:id/snippets/:snippet_id/raw', async (request, reply) => {
    const ctx = await snippetProject(request);
    const { snippet_id } = validateRequest(spec.snippetIdSpec, request);
    return sendRawAnswer(request, reply, async () => {
      const store = storeOf(request);
      const snippet = await findVisibleSnippet(store, request.principal.user, ctx, snippet_id);
      if (!snippet) throw notFound('Snippet');
      const file = await firstSnippetFile(store, snippet);
      const limit = await limitSnippetRaw(request, ctx.project.id, snippet.id, file.path);
      return { raw: file, limit, source: 'database' };
    });
  });

  /**
   * GET /projects/:id/snippets/:snippet_id/files/:ref/:file_path/raw — one file at any revision
   * (404 Reference/File Not Found).
   */
  app.get('/projects/:id/snippets/:snippet_id/files/:ref/:file_path/raw', async (request, reply) => {
    const ctx = await snippetProject(request);
    const p = validateRequest(spec.fileRawSpec, request);
    return sendRawAnswer(request, reply, async () => {
      const store = storeOf(request);
      const snippet = await findVisibleSnippet(store, request.principal.user, ctx, p.snippet_id);
      if (!snippet) throw notFound('Snippet');
      const limit = await limitSnippetRaw(request, ctx.project.id, snippet.id, p.file_path);
      const { content } = await readSnippetFile(store, snippet, p.ref, p.file_path);
      return { raw: { path: p.file_path, content }, limit, source: 'database' };
    });
  });

  /** GET /projects/:id/snippets/:snippet_id/user_agent_detail — admins only (401/403); 404 when none was recorded. */
  app.get('/projects/:id/snippets/:snippet_id/user_agent_detail', async (request) => {
    const ctx = await snippetProject(request);
    const { snippet_id } = validateRequest(spec.snippetIdSpec, request);
    authorize(currentUser(request), 'admin_all_resources', null);
    const store = storeOf(request);
    const snippet = await store.snippets.findInProject(ctx.project.id, snippet_id);
    if (!snippet) throw recordNotFound();
    const detail = await store.snippets.userAgentDetail(snippet.id);
    if (!detail) throw notFound('UserAgentDetail');
    return userAgentDetail(detail);
  });
}
