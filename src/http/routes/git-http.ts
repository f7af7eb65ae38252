// git clone / fetch / push over HTTP for project repositories (/<project path>.git) and snippet
// repositories (/<project path>/snippets/<id>.git). Credentials: HTTP Basic with a personal access token
// as the password (any user name, as GitLab accepts oauth2:<token>), or the API's token carriers.
// Clone needs read access and read_repository/write_repository/api; push needs developer+ (projects) or
// the right to update the snippet (snippets) and write_repository/api.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { User } from '../../storage/db/schema.ts';
import { authenticateToken, scopesOf } from '../../domain/tokens.ts';
import { accessDeniedReason, canPushRepository, canReadRepository, canUpdateSnippet } from '../../domain/policy.ts';
import { Failure } from '../../domain/failure.ts';
import { findReadableProject, type ProjectContext } from '../../domain/projects.ts';
import {
  ensureProjectRepository,
  projectRepositoryPath,
  repositoriesRoot,
  snippetRepository,
  snippetRepositoryPath,
} from '../../domain/repositories.ts';
import { findVisibleSnippet, mirrorRepositoryHead, requireSnippetsFeature } from '../../domain/snippets/service.ts';
import { getSettings } from '../../domain/settings.ts';
import {
  type BackendResponse,
  BodyTooLarge,
  runHttpBackend,
  SNIPPET_HOOKS_DIR,
} from '../../storage/git/http-backend.ts';
import { ROUTE_NOT_FOUND } from '../plugins/errors.ts';
import { baseUrl } from '../urls.ts';

const GIT_PATH = /^\/(.+?)\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const SERVICES = new Set(['git-upload-pack', 'git-receive-pack']);
const READ_SCOPES = ['api', 'read_repository', 'write_repository'];
const WRITE_SCOPES = ['api', 'write_repository'];

export const NOT_FOUND_TEXT =
  "The project you were looking for could not be found or you don't have permission to view it.";
export const PUSH_DENIED_TEXT = 'You are not allowed to push code to this project.';
export const SNIPPET_PUSH_DENIED_TEXT = 'You are not allowed to update this snippet.';

class GitDenied extends Error {
  constructor(
    readonly status: number,
    readonly text: string,
  ) {
    super(text);
  }
}

const challenge = () => new GitDenied(401, 'HTTP Basic: Access denied');

/** The user behind Basic credentials (password = token) or the API token carriers; null when anonymous. */
async function gitUser(request: FastifyRequest, write: boolean): Promise<User | null> {
  let user = request.principal.user;
  let scopes = request.principal.token ? scopesOf(request.principal.token) : [];
  const basic = /^Basic\s+(.+)$/i.exec(request.headers.authorization ?? '');
  if (!user && basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const password = decoded.slice(decoded.indexOf(':') + 1);
    try {
      const found = await authenticateToken(request.server.store, password);
      user = found.user;
      scopes = scopesOf(found.token);
    } catch (error) {
      if (error instanceof Failure) throw challenge();
      throw error;
    }
  }
  if (!user) return null;
  const denied = accessDeniedReason(user, baseUrl(request));
  if (denied) throw new GitDenied(403, denied);
  if (!(write ? WRITE_SCOPES : READ_SCOPES).some((s) => scopes.includes(s as never))) {
    throw new GitDenied(403, `Your token does not have the ${write ? 'write_repository' : 'read_repository'} scope.`);
  }
  return user;
}

interface Target {
  pathInfo: string;
  ctx: ProjectContext;
  snippetId: number | null;
}

/** Resolves the repository and checks access: anonymous callers are challenged, others get GitLab's texts. */
async function resolveTarget(
  request: FastifyRequest,
  repoPath: string,
  write: boolean,
  user: User | null,
): Promise<Target> {
  const store = request.server.store;
  const snippetMatch = /^(.+)\/snippets\/(\d+)$/.exec(repoPath);
  const hidden = () => (user ? new GitDenied(404, NOT_FOUND_TEXT) : challenge());
  let ctx: ProjectContext;
  try {
    ctx = await findReadableProject(store, user, snippetMatch ? snippetMatch[1] : repoPath);
  } catch (error) {
    if (error instanceof Failure) throw hidden();
    throw error;
  }
  if (snippetMatch) {
    try {
      requireSnippetsFeature(user, ctx);
    } catch {
      throw hidden();
    }
    const snippet = await findVisibleSnippet(store, user, ctx, Number(snippetMatch[2]));
    if (!snippet) throw hidden();
    if (write && !canUpdateSnippet(user, ctx.project, ctx.access, snippet.author_id))
      throw user ? new GitDenied(403, SNIPPET_PUSH_DENIED_TEXT) : challenge();
    return { pathInfo: `/${snippetRepositoryPath(snippet.id)}`, ctx, snippetId: snippet.id };
  }
  if (!canReadRepository(user, ctx.project, ctx.access)) throw hidden();
  if (write && !canPushRepository(user, ctx.project, ctx.access))
    throw user ? new GitDenied(403, PUSH_DENIED_TEXT) : challenge();
  ensureProjectRepository(request.server.dataDir, ctx.project);
  return { pathInfo: `/${projectRepositoryPath(ctx.project.id)}`, ctx, snippetId: null };
}

function deny(reply: FastifyReply, denied: GitDenied) {
  if (denied.status === 401) reply.header('WWW-Authenticate', 'Basic realm="GitLab"');
  return reply.code(denied.status).header('Content-Type', 'text/plain; charset=utf-8').send(`${denied.text}\n`);
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export default async function gitHttpRoutes(app: FastifyInstance) {
  // Git request bodies are passed through as streams, never parsed or buffered.
  app.addContentTypeParser(/^application\/x-git-/, (_request, payload, done) => done(null, payload));

  app.route({
    method: ['GET', 'POST'],
    url: '/*',
    config: { scopes: ['read_repository', 'write_repository'] },
    handler: async (request, reply) => {
      const [urlPath, query = ''] = request.url.split('?');
      const match = GIT_PATH.exec(decodeURIComponent(urlPath));
      const service = match && (match[2] === 'info/refs' ? new URLSearchParams(query).get('service') : match[2]);
      if (!match || !service || !SERVICES.has(service) || (match[2] === 'info/refs') !== (request.method === 'GET')) {
        return reply.code(404).send(ROUTE_NOT_FOUND);
      }
      const write = service === 'git-receive-pack';
      let target: Target;
      let user: User | null;
      try {
        user = await gitUser(request, write);
        target = await resolveTarget(request, match[1], write, user);
      } catch (error) {
        if (error instanceof GitDenied) return deny(reply, error);
        throw error;
      }
      const snippet =
        target.snippetId !== null
          ? await request.server.store.snippets.findInProject(target.ctx.project.id, target.snippetId)
          : undefined;
      const maxFiles = snippet ? (await getSettings(request.server.store)).max_snippet_files : 0;
      let response: BackendResponse;
      try {
        response = await runHttpBackend({
          root: repositoriesRoot(request.server.dataDir),
          pathInfo: `${target.pathInfo}/${match[2]}`,
          method: request.method,
          query,
          contentType: request.headers['content-type'],
          contentEncoding: request.headers['content-encoding'] as string | undefined,
          gitProtocol: request.headers['git-protocol'] as string | undefined,
          remoteUser: user?.username ?? null,
          remoteAddr: request.ip,
          // A body sent as another content type was read by the generic parser; git answers 415 for it.
          body: request.method === 'POST' && request.body instanceof Readable ? request.body : null,
          maxBodyBytes: request.server.gitMaxBodyBytes,
          config: snippet ? { 'core.hooksPath': SNIPPET_HOOKS_DIR, 'receive.fsckObjects': 'true' } : {},
          env: snippet ? { SNIPPETD_SNIPPET_BRANCH: snippet.default_branch, SNIPPETD_MAX_FILES: String(maxFiles) } : {},
        });
      } catch (error) {
        if (error instanceof BodyTooLarge) {
          // The client may still be sending: answer, then drop the connection rather than read the rest.
          reply.raw.once('finish', () => request.raw.destroy());
          return reply
            .code(413)
            .header('Connection', 'close')
            .header('Content-Type', 'text/plain; charset=utf-8')
            .send('Request body is too large\n');
        }
        throw error;
      }
      reply.code(response.status).headers(response.headers);
      if (!(write && request.method === 'POST')) return reply.send(response.body);
      // A push: let git finish, bring the API's view in line, then answer, so the client's next API
      // call sees what it pushed.
      const body = await collect(response.body);
      if ((await response.done) === 0) await afterPush(request, target);
      return reply.send(body);
    },
  });
}

async function afterPush(request: FastifyRequest, target: Target): Promise<void> {
  const { store, dataDir } = request.server;
  if (target.snippetId !== null) {
    const repo = snippetRepository(dataDir, target.snippetId);
    await store.transaction(async (tx) => {
      const locked = await tx.snippets.lock(target.snippetId!, store.db.dialect);
      if (locked) await mirrorRepositoryHead(tx, repo, locked);
    });
    return;
  }
  // The first push to an empty project repository decides its default branch when that one is absent.
  const repo = ensureProjectRepository(dataDir, target.ctx.project);
  const branches = await repo.branches();
  const current = target.ctx.project.default_branch;
  if (branches.size && (!current || !branches.has(current))) {
    const chosen = branches.has('main') ? 'main' : [...branches.keys()].sort()[0];
    repo.setHead(chosen);
    await store.projects.update(target.ctx.project.id, { default_branch: chosen });
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    gitMaxBodyBytes: number;
  }
}
