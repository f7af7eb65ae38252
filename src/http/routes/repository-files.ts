// Repository files, tree and commits of a project (admin-api.md "Project repository files"). Reads need
// GitLab's download_code (403 for guests of private projects), writes push_code (developer+).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { currentUser, storeOf } from '../request.ts';
import { validateRequest } from '../params.ts';
import { paginateArray, parsePage, setPageHeaders } from '../pagination.ts';
import { baseUrl } from '../urls.ts';
import { sendRaw } from '../raw.ts';
import * as spec from '../schemas/repository.ts';
import { findReadableProject, type ProjectContext } from '../../domain/projects.ts';
import { authorize } from '../../domain/policy.ts';
import { notFound } from '../../domain/failure.ts';
import { ensureProjectRepository } from '../../domain/git-repositories.ts';
import { readFile, writeFile, type FileWrite } from '../../domain/repository-files.ts';

async function readableRepository(request: FastifyRequest) {
  const viewer = request.principal.user;
  const ctx = await findReadableProject(storeOf(request), viewer, (request.params as { id: string }).id);
  authorize(viewer, 'download_code', ctx);
  return { ctx, repo: ensureProjectRepository(request.server.dataDir, ctx.project) };
}

/** git's strict ISO dates carry seconds; GitLab's carry milliseconds (2024-05-02T10:11:12.000+00:00). */
const withMillis = (iso: string) => iso.replace(/(T\d\d:\d\d:\d\d)(?=[Z+-])/, '$1.000');

const defaultRef = (ctx: ProjectContext) => ctx.project.default_branch ?? 'HEAD';

export default async function repositoryFileRoutes(app: FastifyInstance) {
  const write =
    (action: FileWrite['action'], status: number) =>
    async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
      const viewer = currentUser(request);
      const store = storeOf(request);
      const ctx = await findReadableProject(store, viewer, (request.params as { id: string }).id);
      const written = action === 'delete' ? null : validateRequest(spec.writeFileSpec, request);
      const p = written ?? validateRequest(spec.deleteFileSpec, request);
      const body = written && Buffer.from(written.content, written.encoding === 'base64' ? 'base64' : 'utf8');
      authorize(viewer, 'push_code', ctx);
      const repo = ensureProjectRepository(request.server.dataDir, ctx.project);
      await writeFile(store, ctx, repo, {
        action,
        filePath: p.file_path,
        content: body ?? undefined,
        branch: p.branch,
        startBranch: p.start_branch,
        message: p.commit_message,
        author: { name: p.author_name || viewer.name, email: p.author_email || viewer.email },
        executeFilemode: written?.execute_filemode,
      });
      if (action === 'delete') return reply.code(204).send();
      return reply.code(status).send({ file_path: p.file_path, branch: p.branch });
    };

  /** POST /projects/:id/repository/files/:file_path — developers+; 201 {file_path, branch}; 400 when it exists. */
  app.post('/projects/:id/repository/files/:file_path', write('create', 201));
  /** PUT /projects/:id/repository/files/:file_path — developers+; 200 {file_path, branch}; 400 when missing. */
  app.put('/projects/:id/repository/files/:file_path', write('update', 200));
  /** DELETE /projects/:id/repository/files/:file_path — developers+; 204; 400 when missing. */
  app.delete('/projects/:id/repository/files/:file_path', write('delete', 204));

  /** GET /projects/:id/repository/files/:file_path?ref= — the file with base64 content; 404 Commit/File Not Found. */
  app.get('/projects/:id/repository/files/:file_path', async (request) => {
    const { repo } = await readableRepository(request);
    const p = validateRequest(spec.getFileSpec, request);
    const { info, content } = await readFile(repo, p.ref, p.file_path);
    return { ...info, content: content.toString('base64') };
  });

  /** GET /projects/:id/repository/files/:file_path/raw[?ref=] — the bytes; ref defaults to the default branch. */
  app.get('/projects/:id/repository/files/:file_path/raw', async (request, reply) => {
    const { ctx, repo } = await readableRepository(request);
    const p = validateRequest(spec.rawFileSpec, request);
    const { info, content } = await readFile(repo, p.ref ?? defaultRef(ctx), p.file_path);
    reply
      .header('X-Gitlab-Blob-Id', info.blob_id)
      .header('X-Gitlab-Commit-Id', info.commit_id)
      .header('X-Gitlab-Last-Commit-Id', info.last_commit_id);
    return sendRaw(reply, p.file_path, content);
  });

  /** GET /projects/:id/repository/tree — [{id, name, type, path, mode}], paginated; 404 Tree Not Found. */
  app.get('/projects/:id/repository/tree', async (request, reply) => {
    const { ctx, repo } = await readableRepository(request);
    const p = validateRequest(spec.treeSpec, request);
    const commit = await repo.resolveCommit(p.ref ?? defaultRef(ctx));
    if (!commit) throw notFound('Tree');
    const dir = p.path?.replace(/^\/+|\/+$/g, '') || undefined;
    // `ls-tree -t` also names the directory asked for; GitLab lists what is inside it.
    const entries = (await repo.listTree(commit, { path: dir, recursive: p.recursive, trees: true })).filter(
      (e) => e.path !== dir,
    );
    if (dir && entries.length === 0) throw notFound('Tree');
    // GitLab's Tree#sorted_entries: directories, then files, then submodules, each in git's order.
    const rank = { tree: 0, blob: 1, commit: 2 };
    const items = entries
      .map((e, i) => ({ e, i }))
      .sort((a, b) => rank[a.e.type] - rank[b.e.type] || a.i - b.i)
      .map(({ e }) => ({ id: e.id, name: e.path.split('/').pop()!, type: e.type, path: e.path, mode: e.mode }));
    return paginateArray(request, reply, items);
  });

  /** GET /projects/:id/repository/commits?ref_name= — newest first, paginated; [] for an empty repository. */
  app.get('/projects/:id/repository/commits', async (request, reply) => {
    const { ctx, repo } = await readableRepository(request);
    const p = validateRequest(spec.commitsSpec, request);
    const page = parsePage(request);
    const ref = await repo.resolveCommit(p.ref_name ?? defaultRef(ctx));
    if (!ref) {
      setPageHeaders(request, reply, page, 0, false);
      return [];
    }
    const commits = await repo.log(ref, { skip: page.offset, limit: page.perPage, path: p.path });
    setPageHeaders(request, reply, page, await repo.countCommits(ref, p.path), false);
    const web = `${baseUrl(request)}/${ctx.project.full_path}/-/commit`;
    return commits.map((c) => ({
      id: c.id,
      short_id: c.id.slice(0, 8),
      created_at: withMillis(c.committedAt),
      parent_ids: c.parents,
      title: c.message.split('\n')[0],
      message: c.message.replace(/\n$/, ''),
      author_name: c.authorName,
      author_email: c.authorEmail,
      authored_date: withMillis(c.authoredAt),
      committer_name: c.committerName,
      committer_email: c.committerEmail,
      committed_date: withMillis(c.committedAt),
      web_url: `${web}/${c.id}`,
    }));
  });
}
