// Repository files, tree and commits of a project (docs/gitlab-compatibility.md#repository-files). Reads need
// GitLab's download_code (403 for guests of private projects), writes push_code (developer+).
import { buffer } from 'node:stream/consumers';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentUser, storeOf } from '../request.ts';
import { type ParamsOf, validateRequest } from '../params.ts';
import { paginateArray, paginated, parsePage, setPageHeaders } from '../pagination.ts';
import { sendJsonList } from '../prepared-answer.ts';
import { baseUrl } from '../urls.ts';
import { contentDisposition, sendRaw } from '../raw.ts';
import { limitRaw } from '../rate-limits.ts';
import * as spec from '../schemas/repository.ts';
import { findReadableProject, type ProjectContext, refuseStartProject } from '../../domain/projects.ts';
import { apiError, invalidParams, notFound, routeNotFound } from '../../domain/failure.ts';
import { branch, commit, commitDetail, commitWithStats, fileDiff, tag } from '../presenters/commits.ts';
import { authorize, can, repositoryFeatureAvailable } from '../../domain/policy.ts';
import {
  blobById,
  type FileInfo,
  type FileWrite,
  listCommits,
  listTree,
  nameOf,
  branchExists,
  type CommitAction,
  commitFiles,
  commitPatches,
  archiveFormatOf,
  compareCommits,
  listContributors,
  projectArchive,
  MAX_MERGE_BASE_REFS,
  mergeBaseOf,
  createBranch,
  createTag,
  deleteBranch,
  deleteTag,
  findBranch,
  findTag,
  listTags,
  requireBranchName,
  listBranches,
  rawFile,
  readCommit,
  readFile,
  writeFile,
} from '../../domain/project-files.ts';
import { utf8Bytes } from '../../domain/utf8.ts';
import type { Scope } from '../../domain/access.ts';
import { loopSlice } from '../../loop-slice.ts';

/** The project's page; its commits are shown at …/-/commit/<id> (GitLab's). */
const projectWeb = (request: FastifyRequest, ctx: ProjectContext) => `${baseUrl(request)}/${ctx.project.full_path}`;
const commitsWeb = (request: FastifyRequest, ctx: ProjectContext) => `${projectWeb(request, ctx)}/-/commit`;

/** The branch name the path gives (decoded: a name with `/` comes as %2F); 400 when no branch can have it. */
const branchNameOf = (request: FastifyRequest) => requireBranchName((request.params as { branch: string }).branch);

/** The branch the path names; 404 Branch Not Found. */
async function branchOf(request: FastifyRequest, ctx: ProjectContext) {
  const found = await findBranch(storeOf(request), request.server.gitNode.caches, ctx, branchNameOf(request));
  if (!found) throw notFound('Branch');
  return found;
}

/**
 * The project, if the caller may read its code (404 when hidden, 403 for guests of private projects and where its
 * repository is closed to the caller). `api` 'branches' and 'commits' are GitLab's APIs of those names, whose
 * require_repository_enabled! answers 404 Repository first (readableRepository).
 */
async function readableCode(request: FastifyRequest, api: 'branches' | 'commits' | 'other' = 'other') {
  const viewer = request.principal.user;
  const ctx = api === 'other' ? await readableProject(request) : await readableRepository(request);
  authorize(viewer, 'download_code', ctx);
  return ctx;
}

const readableProject = (request: FastifyRequest) =>
  findReadableProject(storeOf(request), request.principal.user, (request.params as { id: string }).id);

/**
 * The project, for GitLab's branches and commits APIs (reads and writes): their require_repository_enabled! answers
 * 404 Repository Not Found when the repository feature is closed to the caller (disabled, or private and the
 * caller no member), before any other check of theirs.
 */
async function readableRepository(request: FastifyRequest) {
  const ctx = await readableProject(request);
  if (!repositoryFeatureAvailable(request.principal.user, ctx)) throw notFound('Repository');
  return ctx;
}

/**
 * The file entity as JSON bytes, its content last, in base64 (which JSON never escapes) written a few
 * mebibytes a turn: JSON.stringify of a 50 MB file's entity, then its bytes for the socket, held the event loop
 * about 0.4 s.
 */
async function fileJson(info: object, content: Buffer): Promise<Buffer> {
  return jsonWithContent(`${JSON.stringify(info).slice(0, -1)},"content":"`, content, '"}');
}

/** GitLab's blob answer, its keys in GitLab's order. */
const blobJson = (content: Buffer, sha: string) =>
  jsonWithContent(`{"size":${content.length},"encoding":"base64","content":"`, content, `","sha":"${sha}"}`);

/** `before`, the content in base64, then `after`: a turn for others between pieces of a large content. */
async function jsonWithContent(before: string, content: Buffer, after: string): Promise<Buffer> {
  const json = Buffer.allocUnsafe(Buffer.byteLength(before) + Math.ceil(content.length / 3) * 4 + after.length);
  let written = json.write(before);
  for (let at = 0; at < content.length; at += BASE64_BYTES_A_TURN) {
    if (at) await nextTurn();
    written += json.write(content.toString('base64', at, at + BASE64_BYTES_A_TURN), written, 'latin1');
  }
  json.write(after, written, 'latin1');
  return json;
}
/**
 * GitLab's set_http_headers(blob_data): each field of the file but its content as `X-Gitlab-<Field-Name>`, for
 * clients that read a file's metadata from HEAD (go-gitlab's GetFileMetaData). A value goes out as its UTF-8
 * bytes, as Rack writes it; a control character, which no header may hold, percent-encoded.
 */
function setFileHeaders(reply: FastifyReply, info: FileInfo): void {
  for (const [key, value] of Object.entries(info)) {
    const name = `X-Gitlab-${key
      .split('_')
      .map((w) => w[0].toUpperCase() + w.slice(1))
      .join('-')}`;
    const bytes = Buffer.from(String(value), 'utf8').toString('latin1');
    reply.header(
      name,
      bytes.replace(/[^\t\x20-\x7e\x80-\xff]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`),
    );
  }
}

/**
 * The changes of a POST …/repository/commits as the domain takes them, their contents as bytes; 400 with Grape's
 * messages for what its `given` blocks require of a kind of change.
 */
async function commitActionsOf(items: ParamsOf<typeof spec.createCommitSpec>['actions']): Promise<CommitAction[]> {
  const missing: string[] = [];
  const actions: CommitAction[] = [];
  const slice = loopSlice();
  for (const [i, a] of items.entries()) {
    if (slice.over()) await slice.pass();
    const needs = { move: 'previous_path', update: 'content', chmod: 'execute_filemode' } as const;
    const needed = needs[a.action as keyof typeof needs];
    if (needed && a[needed] === undefined) missing.push(`actions[${i}][${needed}] is missing`);
    const content =
      a.content === undefined
        ? undefined
        : a.encoding === 'base64'
          ? Buffer.from(String(a.content), 'base64')
          : await utf8Bytes(a.content);
    actions.push({
      action: a.action,
      filePath: a.file_path,
      previousPath: a.action === 'move' ? a.previous_path : undefined,
      content: a.action === 'delete' || a.action === 'chmod' ? undefined : content,
      executeFilemode: a.action === 'chmod' ? a.execute_filemode : undefined,
      lastCommitId: a.last_commit_id,
    });
  }
  if (missing.length) throw invalidParams(missing.join(', '));
  return actions;
}

/**
 * GitLab's files API also takes a read_repository token to read a file (its allow_access_with_scope :read_repository
 * for GET and HEAD), and names the scope when it refuses a token, writes included; its other endpoints do not.
 */
const READ_REPOSITORY = { config: { readScopes: ['read_repository'] as Scope[] } };

/** A multiple of 3, so that each turn's base64 joins the next without padding. */
const BASE64_BYTES_A_TURN = 3 * 1024 * 1024;

export default async function repositoryFileRoutes(app: FastifyInstance) {
  const write =
    (action: FileWrite['action'], status: number) =>
    async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
      const viewer = currentUser(request);
      const store = storeOf(request);
      const ctx = await findReadableProject(store, viewer, (request.params as { id: string }).id);
      const written = action === 'delete' ? null : validateRequest(spec.writeFileSpec, request);
      const p = written ?? validateRequest(spec.deleteFileSpec, request);
      const body =
        written &&
        (written.encoding === 'base64'
          ? Buffer.from(String(written.content), 'base64')
          : await utf8Bytes(written.content));
      authorize(viewer, 'push_code', ctx);
      await writeFile(store, ctx, {
        action,
        filePath: p.file_path,
        content: body ?? undefined,
        branch: p.branch,
        startBranch: p.start_branch,
        message: p.commit_message,
        author: { name: p.author_name || viewer.name, email: p.author_email || viewer.email },
        executeFilemode: written?.execute_filemode,
        // GitLab's update alone declares it (its delete's parameters leave it out, so Files::DeleteService never
        // sees one).
        lastCommitId: action === 'update' ? written?.last_commit_id : undefined,
      });
      if (action === 'delete') return reply.code(204).send();
      return reply.code(status).send({ file_path: p.file_path, branch: p.branch });
    };

  /** POST /projects/:id/repository/files/:file_path — developers+; 201 {file_path, branch}; 400 when it exists. */
  app.post('/projects/:id/repository/files/:file_path', READ_REPOSITORY, write('create', 201));
  /** PUT /projects/:id/repository/files/:file_path — developers+; 200 {file_path, branch}; 400 when missing. */
  app.put('/projects/:id/repository/files/:file_path', READ_REPOSITORY, write('update', 200));
  /** DELETE /projects/:id/repository/files/:file_path — developers+; 204; 400 when missing. */
  app.delete('/projects/:id/repository/files/:file_path', READ_REPOSITORY, write('delete', 204));

  /** GET /projects/:id/repository/files/:file_path?ref= — the file with base64 content; 404 Commit/File Not Found. */
  app.get('/projects/:id/repository/files/:file_path', READ_REPOSITORY, async (request, reply) => {
    const ctx = await readableCode(request);
    const p = validateRequest(spec.getFileSpec, request);
    const { info, content } = await readFile(storeOf(request), ctx, p.ref, p.file_path);
    setFileHeaders(reply, info);
    return reply.type('application/json').send(await fileJson(info, content));
  });

  /** GET /projects/:id/repository/files/:file_path/raw[?ref=] — the bytes; ref defaults to the default branch. */
  app.get('/projects/:id/repository/files/:file_path/raw', READ_REPOSITORY, async (request, reply) => {
    const ctx = await readableCode(request);
    const p = validateRequest(spec.rawFileSpec, request);
    await limitRaw(request, ctx.project.id, p.file_path, !!request.principal.user);
    const { info, content } = await rawFile(storeOf(request), ctx, p.ref, p.file_path);
    setFileHeaders(reply, info);
    return sendRaw(reply, p.file_path, content);
  });

  /** GET /projects/:id/repository/blobs/:sha — {size, encoding: base64, content, sha}; 404 Blob Not Found. */
  app.get('/projects/:id/repository/blobs/:sha', async (request, reply) => {
    const ctx = await readableCode(request);
    const p = validateRequest(spec.blobSpec, request);
    const blob = await blobById(storeOf(request), ctx, p.sha);
    const content = Buffer.isBuffer(blob) ? blob : await buffer(blob.open());
    return reply.type('application/json').send(await blobJson(content, p.sha.toLowerCase()));
  });

  /** GET /projects/:id/repository/blobs/:sha/raw — the bytes, typed as a raw file's, without a name. */
  app.get('/projects/:id/repository/blobs/:sha/raw', async (request, reply) => {
    const ctx = await readableCode(request);
    const p = validateRequest(spec.blobSpec, request);
    // GitLab's no_cache_headers: the id names the bytes for good, and yet this answer is not to be kept.
    return sendRaw(reply, '', await blobById(storeOf(request), ctx, p.sha), {
      'cache-control': 'no-store',
      pragma: 'no-cache',
      expires: 'Fri, 01 Jan 1990 00:00:00 GMT',
    });
  });

  /** GET /projects/:id/repository/tree — [{id, name, type, path, mode}], paginated; 404 Tree Not Found. */
  app.get('/projects/:id/repository/tree', async (request, reply) => {
    const ctx = await readableCode(request);
    const p = validateRequest(spec.treeSpec, request);
    const entries = await listTree(storeOf(request), ctx, p);
    return paginateArray(request, reply, entries).map((e) => ({
      id: e.id,
      name: nameOf(e),
      type: e.type,
      path: e.path,
      mode: e.mode,
    }));
  });

  /** GET /projects/:id/repository/commits?ref_name= — newest first, paginated without totals; [] for an empty repository. */
  app.get('/projects/:id/repository/commits', async (request, reply) => {
    const ctx = await readableCode(request, 'commits');
    const p = validateRequest(spec.commitsSpec, request);
    const page = parsePage(request);
    const window = { offset: page.offset, limit: page.perPage };
    const { commits, files, hasMore } = await listCommits(
      storeOf(request),
      request.server.gitNode.caches,
      ctx,
      {
        refName: p.ref_name,
        path: p.path,
        since: p.since,
        until: p.until,
        author: p.author,
        withStats: p.with_stats,
        all: p.all,
        firstParent: p.first_parent,
        order: p.order,
      },
      window,
    );
    // GitLab's commits list counts nothing (its pagination excludes the total headers): no X-Total here either.
    setPageHeaders(request, reply, page, null, hasMore);
    const web = commitsWeb(request, ctx);
    return sendJsonList(
      reply,
      commits.map((c, i) =>
        p.with_stats ? commitWithStats(c, files[i], web, p.trailers) : commit(c, web, p.trailers),
      ),
    );
  });

  /** GET /projects/:id/repository/branches — the branches by name, paginated; [] for an empty repository. */
  app.get('/projects/:id/repository/branches', async (request, reply) => {
    const ctx = await readableCode(request, 'branches');
    const p = validateRequest(spec.branchesSpec, request);
    const store = storeOf(request);
    const rows = await paginated(request, reply, (window) =>
      listBranches(store, request.server.gitNode.caches, ctx, { search: p.search, sort: p.sort }, window),
    );
    const canPush = can(request.principal.user, 'push_code', ctx);
    return rows.map((b) => branch(b, canPush, projectWeb(request, ctx)));
  });

  /** HEAD /projects/:id/repository/branches/:branch — 204 when the branch exists, else 404 (before the GET's own). */
  app.head('/projects/:id/repository/branches/:branch', async (request, reply) => {
    const ctx = await readableCode(request, 'branches');
    const { branch: name } = request.params as { branch: string };
    if (!(await branchExists(storeOf(request), ctx, name))) throw notFound('Branch');
    return reply.code(204).send();
  });

  /** GET /projects/:id/repository/branches/:branch — 404 Branch Not Found. */
  app.get('/projects/:id/repository/branches/:branch', async (request) => {
    const ctx = await readableCode(request, 'branches');
    const found = await branchOf(request, ctx);
    return branch(found, can(request.principal.user, 'push_code', ctx), projectWeb(request, ctx));
  });

  /** GET /projects/:id/repository/tags — the tags, newest commit first (or by name or version), paginated. */
  app.get('/projects/:id/repository/tags', async (request, reply) => {
    const ctx = await readableCode(request);
    const p = validateRequest(spec.tagsSpec, request);
    const rows = await paginated(request, reply, (window) =>
      listTags(storeOf(request), ctx, { orderBy: p.order_by, sort: p.sort, search: p.search }, window),
    );
    const web = commitsWeb(request, ctx);
    return rows.map((t) => tag(t, web));
  });

  /** GET /projects/:id/repository/tags/:tag_name — 404 Tag Not Found. */
  app.get('/projects/:id/repository/tags/:tag_name', async (request) => {
    const ctx = await readableCode(request);
    const { tag_name: name } = request.params as { tag_name: string };
    const found = await findTag(storeOf(request), ctx, name);
    if (!found) throw notFound('Tag');
    return tag(found, commitsWeb(request, ctx));
  });

  /** POST /projects/:id/repository/tags — developers+ (GitLab's admin_tag); 201 the tag; 400 and 409 as Tags::CreateService. */
  app.post('/projects/:id/repository/tags', async (request, reply) => {
    const viewer = request.principal.user;
    const store = storeOf(request);
    const ctx = await findReadableProject(store, viewer, (request.params as { id: string }).id);
    const p = validateRequest(spec.createTagSpec, request);
    authorize(viewer, 'push_code', ctx);
    // Only a user may push_code.
    const tagger = { name: viewer!.name, email: viewer!.email };
    const made = await createTag(store, ctx, { name: p.tag_name, ref: p.ref, message: p.message, tagger });
    return reply.code(201).send(tag(made, commitsWeb(request, ctx)));
  });

  /** DELETE /projects/:id/repository/tags/:tag_name — developers+; 204; 412 on If-Unmodified-Since. */
  app.delete('/projects/:id/repository/tags/:tag_name', async (request, reply) => {
    const viewer = request.principal.user;
    const store = storeOf(request);
    const ctx = await findReadableProject(store, viewer, (request.params as { id: string }).id);
    authorize(viewer, 'push_code', ctx);
    const { tag_name: name } = request.params as { tag_name: string };
    const since = request.headers['if-unmodified-since'];
    await deleteTag(store, ctx, name, typeof since === 'string' ? since : undefined);
    return reply.code(204).send();
  });

  /** POST /projects/:id/repository/branches — developers+; 201 the branch; 400 as GitLab's Branches::CreateService. */
  // As GitLab's branches API, which asks no sign-in first: a visitor gets 404 for a private project, 403 for another.
  app.post('/projects/:id/repository/branches', async (request, reply) => {
    const viewer = request.principal.user;
    const store = storeOf(request);
    const ctx = await readableRepository(request);
    const p = validateRequest(spec.createBranchSpec, request);
    authorize(viewer, 'push_code', ctx);
    // Only a user may push_code.
    const author = { name: viewer!.name, email: viewer!.email };
    const created = await createBranch(store, request.server.gitNode.caches, ctx, p.branch, p.ref, author);
    return reply.code(201).send(branch(created, true, projectWeb(request, ctx)));
  });

  /** DELETE /projects/:id/repository/branches/:branch — developers+; 204; 412 on If-Unmodified-Since. */
  app.delete('/projects/:id/repository/branches/:branch', async (request, reply) => {
    const viewer = request.principal.user;
    const store = storeOf(request);
    const ctx = await readableRepository(request);
    authorize(viewer, 'push_code', ctx);
    const since = request.headers['if-unmodified-since'];
    const name = branchNameOf(request);
    await deleteBranch(store, request.server.gitNode.caches, ctx, name, typeof since === 'string' ? since : undefined);
    return reply.code(204).send();
  });

  /** POST /projects/:id/repository/commits — developers+; 201 the commit (CommitDetail); 400 as GitLab answers. */
  app.post('/projects/:id/repository/commits', async (request, reply) => {
    const viewer = currentUser(request);
    const store = storeOf(request);
    const ctx = await readableRepository(request);
    const p = validateRequest(spec.createCommitSpec, request, spec.createCommitConstraints);
    const actions = await commitActionsOf(p.actions);
    if (p.start_project !== undefined) await refuseStartProject(store, viewer, p.start_project);
    authorize(viewer, 'push_code', ctx);
    const id = await commitFiles(store, ctx, {
      branch: p.branch,
      startBranch: p.start_branch,
      startSha: p.start_sha,
      force: p.force,
      message: p.commit_message,
      author: { name: p.author_name || viewer.name, email: p.author_email || viewer.email },
      actions,
    });
    const made = await readCommit(store, request.server.gitNode.caches, ctx, id, p.stats);
    if (!made) throw notFound('Commit');
    return reply.code(201).send(commitDetail(made.commit, made.files, ctx.project.id, commitsWeb(request, ctx)));
  });

  /** GET /projects/:id/repository/commits/:sha/diff — the commit's files with their patches, paginated. */
  app.get('/projects/:id/repository/commits/:sha/diff', async (request, reply) => {
    const ctx = await readableCode(request, 'commits');
    const p = validateRequest(spec.commitDiffSpec, request);
    const files = await commitPatches(storeOf(request), request.server.gitNode.caches, ctx, p.sha);
    if (!files) throw notFound('Commit');
    return paginateArray(request, reply, files).map((f) => fileDiff(f, p.unidiff));
  });

  /**
   * GET /projects/:id/repository/archive[.<format>]?sha=&path= — the files as one archive, written by git and then
   * sent (Workhorse's headers); 404 File Not Found. GitLab's archive rate limit is behind a flag that is off by default.
   */
  const archive = async (request: FastifyRequest, reply: FastifyReply) => {
    const ctx = await readableCode(request);
    const p = validateRequest(spec.archiveSpec, request);
    const extension = (request.params as { format?: string }).format;
    if (extension !== undefined && !spec.ARCHIVE_EXTENSIONS.includes(extension)) throw routeNotFound();
    const format = archiveFormatOf(extension ?? p.format);
    const store = storeOf(request);
    const { fileName, body } = await projectArchive(store, request.server.gitNode.caches, ctx, {
      ref: p.sha,
      path: p.path,
      format,
    });
    return reply
      .headers({
        'content-type': format === 'zip' ? 'application/zip' : 'application/octet-stream',
        'content-disposition': contentDisposition('attachment', fileName),
        'content-transfer-encoding': 'binary',
        'cache-control': 'private',
      })
      .send(body);
  };
  app.get('/projects/:id/repository/archive', archive);
  app.get('/projects/:id/repository/archive.:format', archive);

  /**
   * GET /projects/:id/repository/contributors — GitLab's Contributor entities, paginated; 404 for a ref that names no
   * commit (GitLab's rescue).
   */
  app.get('/projects/:id/repository/contributors', async (request, reply) => {
    const ctx = await readableCode(request);
    const p = validateRequest(spec.contributorsSpec, request);
    const found = await listContributors(storeOf(request), ctx, { ref: p.ref, orderBy: p.order_by, sort: p.sort });
    if (!found) throw notFound();
    // GitLab's lines added and deleted are no longer counted: always 0.
    return paginateArray(request, reply, found).map((c) => ({ ...c, additions: 0, deletions: 0 }));
  });

  /**
   * GET /projects/:id/repository/merge_base?refs[]= — the best common ancestor (Commit entity); 400 for fewer than
   * two refs or refs that name no commit, 404 Merge Base Not Found.
   */
  app.get('/projects/:id/repository/merge_base', async (request) => {
    const ctx = await readableCode(request);
    const { refs } = validateRequest(spec.mergeBaseSpec, request);
    if (refs.length < 2) throw apiError('Provide at least 2 refs');
    if (refs.length > MAX_MERGE_BASE_REFS) throw apiError(`Provide at most ${MAX_MERGE_BASE_REFS} refs`);
    const found = await mergeBaseOf(storeOf(request), request.server.gitNode.caches, ctx, refs);
    if (found.unknown.length)
      throw apiError(`Could not find ${found.unknown.length === 1 ? 'ref' : 'refs'}: ${found.unknown.join(', ')}`);
    if (!found.commit) throw notFound('Merge Base');
    return commit(found.commit, commitsWeb(request, ctx));
  });

  /**
   * GET /projects/:id/repository/compare?from=&to= — GitLab's Compare: the commits `to` reaches and `from` does not,
   * oldest first, and the diff from their merge base (or `from`, with straight); 404 Ref Not Found.
   */
  app.get('/projects/:id/repository/compare', async (request) => {
    const ctx = await readableCode(request);
    const p = validateRequest(spec.compareSpec, request);
    // Forks are not served: no project is another's fork, as GitLab's MergeRequestTargetProjectFinder would say.
    if (p.from_project_id !== undefined && p.from_project_id !== ctx.project.id) {
      // The project as the request named it, id or path (GitLab's params[:id]).
      const named = (request.params as { id: string }).id;
      throw apiError(`Target project id:${p.from_project_id} is not a fork of project id:${named}`);
    }
    const compared = await compareCommits(storeOf(request), request.server.gitNode.caches, ctx, p);
    if (!compared) throw notFound('Ref');
    const web = commitsWeb(request, ctx);
    return {
      commit: compared.commits.length ? commit(compared.commits.at(-1)!, web) : null,
      commits: compared.commits.map((c) => commit(c, web)),
      diffs: compared.files.map((f) => fileDiff(f, p.unidiff)),
      compare_timeout: compared.cut,
      compare_same_ref: compared.from === compared.to,
      web_url: `${projectWeb(request, ctx)}/-/compare/${compared.base ?? compared.from}...${compared.to}`,
    };
  });

  /** GET /projects/:id/repository/commits/:sha — a commit by id, branch or tag; 404 Commit Not Found. */
  app.get('/projects/:id/repository/commits/:sha', async (request) => {
    const ctx = await readableCode(request, 'commits');
    const p = validateRequest(spec.commitSpec, request);
    const found = await readCommit(storeOf(request), request.server.gitNode.caches, ctx, p.sha, p.stats);
    if (!found) throw notFound('Commit');
    return commitDetail(found.commit, found.files, ctx.project.id, commitsWeb(request, ctx));
  });
}
