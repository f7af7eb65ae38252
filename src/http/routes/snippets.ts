// Snippets by id, personal ones above all (GitLab's lib/api/snippets.rb). Reads of one snippet answer any
// snippet the caller may see, anonymous callers included (404 Snippet Not Found otherwise); the lists are
// for signed-in callers (401); writes are the caller's own snippets only (404 for anyone else's, admins
// included: they use Sudo). Every list goes through the snippets finder.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentUser, storeOf } from '../request.ts';
import { validateRequest } from '../params.ts';
import { pageOf, parsePage } from '../pagination.ts';
import { NOTHING_MORE, sendAnswer, sendRawAnswer } from '../kept-answers.ts';
import { listJson } from '../prepared-answer.ts';
import { limitSnippetRaw } from '../rate-limits.ts';
import * as spec from '../schemas/snippets.ts';
import { userAgentDetail } from '../presenters/snippets.ts';
import { createInput, depsOf, placeSnippets, presentSnippets, requestMeta } from '../snippet-answers.ts';
import { authorize, NO_ACCESS, type Viewer } from '../../domain/policy.ts';
import { invalidParams, notFound, recordNotFound } from '../../domain/failure.ts';
import { findSnippets, type SnippetListFilter } from '../../domain/snippets/finder.ts';
import { createSnippet } from '../../domain/snippets/create.ts';
import { deleteSnippet } from '../../domain/snippets/delete.ts';
import {
  findVisibleSnippetById,
  findVisibleSnippetWithPaths,
  firstSnippetFile,
  readSnippetFile,
  readStateOf,
} from '../../domain/snippets/reads.ts';
import { updateSnippet } from '../../domain/snippets/update.ts';
import type { Snippet } from '../../storage/db/schema.ts';
import { byteOrder } from '../../order.ts';

/** The writes look up their caller and settings, which they do not change, in the read cache (usesReadCache). */
const CACHED_LOOKUPS = { config: { cachedLookups: true } };

/**
 * A page of the finder's snippets, presented with their projects. Parameters are checked first (400), then
 * `scope` names the caller (401 when it must be signed in), the viewer the finder looks as and the filter.
 */
async function listAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  scope: () => { viewer: Viewer; filter: SnippetListFilter },
): Promise<unknown> {
  const { created_after, created_before } = validateRequest(spec.snippetListSpec, request);
  const page = parsePage(request);
  const { viewer, filter } = scope();
  return sendAnswer(request, reply, NOTHING_MORE, async () => {
    const { rows, headers } = await pageOf(request, page, (window) =>
      findSnippets(
        storeOf(request),
        viewer,
        { ...filter, createdAfter: created_after, createdBefore: created_before },
        window,
      ),
    );
    const json = await listJson(await presentSnippets(request, await placeSnippets(request, rows)));
    return { json, headers, source: 'database' };
  });
}

/** Snippet `id`, if the caller may see it; else 404 Snippet Not Found. */
async function visibleSnippet(request: FastifyRequest, id: number) {
  const found = await findVisibleSnippetById(storeOf(request), request.principal.user, id);
  if (!found) throw notFound('Snippet');
  return found.snippet;
}

/** The caller's own snippet `:id` names (GitLab's snippets_for_current_user); else 404 Snippet Not Found. */
async function ownSnippet(request: FastifyRequest, id: number) {
  const viewer = currentUser(request);
  const found = await findVisibleSnippetById(storeOf(request), viewer, id);
  if (!found || found.snippet.author_id !== viewer.id) throw notFound('Snippet');
  const subject = found.ctx
    ? { ...found.ctx, snippet: found.snippet }
    : { project: null, access: NO_ACCESS, snippet: found.snippet };
  return { viewer, ...found, subject };
}

/** The raw limits count a personal snippet's files under no project. */
const rawScope = (snippet: Snippet) => snippet.project_id;

export default async function snippetRoutes(app: FastifyInstance) {
  /** GET /snippets — signed in; the caller's own snippets, personal and project ones, newest first. */
  app.get('/snippets', async (request, reply) =>
    listAnswer(request, reply, () => {
      const viewer = currentUser(request);
      return { viewer, filter: { authorId: viewer.id } };
    }),
  );

  /** GET /snippets/public — signed in; public personal snippets, as an anonymous visitor sees them. */
  app.get('/snippets/public', async (request, reply) =>
    listAnswer(request, reply, () => {
      currentUser(request);
      return { viewer: null, filter: { kind: 'personal' } };
    }),
  );

  /** GET /snippets/all — signed in; every snippet the caller may see (everything for administrators). */
  app.get('/snippets/all', async (request, reply) =>
    listAnswer(request, reply, () => ({ viewer: currentUser(request), filter: {} })),
  );

  /** GET /snippets/:id — anyone who may see it. */
  app.get('/snippets/:id', async (request, reply) => {
    const { id } = validateRequest(spec.personalSnippetIdSpec, request);
    return sendAnswer(request, reply, NOTHING_MORE, async () => {
      const found = await findVisibleSnippetWithPaths(storeOf(request), request.principal.user, id);
      if (!found) throw notFound('Snippet');
      const { snippet, ctx, paths } = found;
      const placed = [{ snippet, project: ctx?.project ?? null }];
      const [answer] = await presentSnippets(request, placed, new Map([[snippet.id, paths]]));
      return { json: JSON.stringify(answer), source: 'database' };
    });
  });

  /** POST /snippets — signed-in users but external ones (401, 403); 201. */
  app.post('/snippets', CACHED_LOOKUPS, async (request, reply) => {
    const p = validateRequest(spec.createSnippetSpec, request, spec.createSnippetConstraints);
    if (p.content !== undefined && p.file_name === undefined) throw invalidParams('file_name is missing');
    const author = currentUser(request);
    authorize(author, 'create_snippet', { project: null, access: NO_ACCESS });
    const input = createInput(p);
    const created = await createSnippet(depsOf(request), null, author, input, requestMeta(request));
    const paths = [...new Set(input.files.map((f) => f.file_path))].sort(byteOrder);
    const [answer] = await presentSnippets(
      request,
      [{ snippet: created, project: null }],
      new Map([[created.id, paths]]),
    );
    return reply.code(201).send(answer);
  });

  /** PUT /snippets/:id — the author (404 for others); 422 invalid actions, 400 repository errors. */
  app.put('/snippets/:id', CACHED_LOOKUPS, async (request) => {
    const p = validateRequest(spec.updatePersonalSnippetSpec, request, spec.updateSnippetConstraints);
    const { viewer, snippet, ctx, subject } = await ownSnippet(request, p.id);
    authorize(viewer, 'update_snippet', subject);
    const state = await readStateOf(storeOf(request), snippet);
    if (!state) throw notFound('Snippet');
    const updated = await updateSnippet(depsOf(request), viewer, state, p, requestMeta(request));
    const paths = new Map([[updated.snippet.id, updated.paths]]);
    return (await presentSnippets(request, [{ snippet: updated.snippet, project: ctx?.project ?? null }], paths))[0];
  });

  /** DELETE /snippets/:id — the author (404 for others); 204, 412 on If-Unmodified-Since. */
  app.delete('/snippets/:id', CACHED_LOOKUPS, async (request, reply) => {
    const { id } = validateRequest(spec.personalSnippetIdSpec, request);
    const { viewer, snippet, subject } = await ownSnippet(request, id);
    authorize(viewer, 'admin_snippet', subject);
    const since = request.headers['if-unmodified-since'];
    await deleteSnippet(depsOf(request), snippet, typeof since === 'string' ? since : undefined);
    return reply.code(204).send();
  });

  /** GET /snippets/:id/raw — the first file (git order) of the current version. */
  app.get('/snippets/:id/raw', async (request, reply) => {
    const { id } = validateRequest(spec.personalSnippetIdSpec, request);
    return sendRawAnswer(request, reply, async () => {
      const snippet = await visibleSnippet(request, id);
      const file = await firstSnippetFile(storeOf(request), snippet);
      const limit = await limitSnippetRaw(request, rawScope(snippet), snippet.id, file.path);
      return { raw: file, limit, source: 'database' };
    });
  });

  /** GET /snippets/:id/files/:ref/:file_path/raw — one file at any revision (404 Reference/File Not Found). */
  app.get('/snippets/:id/files/:ref/:file_path/raw', async (request, reply) => {
    const p = validateRequest(spec.personalFileRawSpec, request);
    return sendRawAnswer(request, reply, async () => {
      const snippet = await visibleSnippet(request, p.id);
      const limit = await limitSnippetRaw(request, rawScope(snippet), snippet.id, p.file_path);
      const { content } = await readSnippetFile(storeOf(request), snippet, p.ref, p.file_path);
      return { raw: { path: p.file_path, content }, limit, source: 'database' };
    });
  });

  /** GET /snippets/:id/user_agent_detail — admins only (401/403), any snippet; 404 when none was recorded. */
  app.get('/snippets/:id/user_agent_detail', async (request) => {
    const { id } = validateRequest(spec.personalSnippetIdSpec, request);
    authorize(currentUser(request), 'admin_all_resources', null);
    const store = storeOf(request);
    const snippet = await store.snippets.findById(id);
    if (!snippet) throw recordNotFound();
    const detail = await store.snippets.userAgentDetail(snippet.id);
    if (!detail) throw notFound('UserAgentDetail');
    return userAgentDetail(detail);
  });
}
