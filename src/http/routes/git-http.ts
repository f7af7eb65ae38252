// git clone / fetch / push over HTTP for project repositories (/<project path>.git) and snippet
// repositories (/<project path>/snippets/<id>.git). Credentials: HTTP Basic with a personal access token
// as the password (any user name, as GitLab accepts oauth2:<token>), or the API's token carriers. Who
// may do what is decided in domain/git-access.ts; git's own http-backend serves the protocol.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { User } from '../../storage/db/schema.ts';
import { authenticateToken, scopesOf } from '../../domain/tokens.ts';
import { Failure } from '../../domain/failure.ts';
import { acceptPush, challenge, checkGitCaller, maxPushPackBytes, resolveGitTarget } from '../../domain/git-access.ts';
import { BodyTooLarge, runHttpBackend } from '../../storage/git/http-backend.ts';
import { HOOKS_DIR, type PushHooks } from '../../storage/git/push-hooks.ts';
import type { ServingCaches } from '../../storage/git/serving-cache.ts';
import { baseUrl } from '../urls.ts';

/** A git request's path, once decoded: the repository's path and git's service. */
export const GIT_PATH = /^\/(.+?)\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const SERVICES = new Set(['git-upload-pack', 'git-receive-pack']);

/** The caller: the API's token carriers, else HTTP Basic with a token as the password; null when anonymous. */
async function gitCaller(request: FastifyRequest, write: boolean): Promise<User | null> {
  let user = request.principal.user;
  let scopes = request.principal.token ? scopesOf(request.principal.token) : [];
  const basic = /^Basic\s+(.+)$/i.exec(request.headers.authorization ?? '');
  if (!user && basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const found = await authenticateToken(request.server.store, decoded.slice(decoded.indexOf(':') + 1)).catch(
      (error) => {
        throw error instanceof Failure ? challenge() : error;
      },
    );
    user = found.user;
    scopes = scopesOf(found.token);
  }
  if (user) checkGitCaller(user, scopes, write, baseUrl(request));
  return user;
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A git request: the repository path (`group/project`, `snippets/7`, ...), its part and the service asked. */
export interface GitRequest {
  repoPath: string;
  part: string;
  service: string;
  query: string;
}

/** The request as git over HTTP, or null when it is not one (routes/paths.ts sends it elsewhere). */
export function gitRequestOf(request: FastifyRequest): GitRequest | null {
  const [urlPath, query = ''] = request.url.split('?');
  const match = GIT_PATH.exec(decodeURIComponent(urlPath));
  const service = match && (match[2] === 'info/refs' ? new URLSearchParams(query).get('service') : match[2]);
  if (!match || !service || !SERVICES.has(service) || (match[2] === 'info/refs') !== (request.method === 'GET'))
    return null;
  return { repoPath: match[1], part: match[2], service, query };
}

/** Git request bodies are passed through as streams, never parsed or buffered: for the route that serves git. */
export function acceptGitBodies(app: FastifyInstance): void {
  app.addContentTypeParser(/^application\/x-git-/, (_request, payload, done) => done(null, payload));
}

/** Answers a git request: clone and fetch from this node's cache repository, a push through its hook. */
export async function serveGit(request: FastifyRequest, reply: FastifyReply, git: GitRequest) {
  const { query } = git;
  const write = git.service === 'git-receive-pack';
  const user = await gitCaller(request, write);
  const { store, gitCaches, pushHooks } = request.server;
  const target = await resolveGitTarget(store, user, git.repoPath, write);
  const repo = target.repository;
  const backend = (env: Record<string, string>, config: Record<string, string> = {}) =>
    runHttpBackend({
      root: gitCaches.root,
      pathInfo: `/${gitCaches.relativePath(repo.id)}/${git.part}`,
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
      config: { 'core.hooksPath': HOOKS_DIR, 'receive.fsckObjects': 'true', ...config },
      env,
    }).catch((error) => {
      throw error instanceof BodyTooLarge ? new Failure('payload_too_large_git') : error;
    });
  if (!(write && request.method === 'POST')) {
    await gitCaches.exclusive(repo.id, () => gitCaches.refresh(repo));
    const response = await backend({});
    return reply.code(response.status).headers(response.headers).send(response.body);
  }
  // A push holds this node's cache of the repository until git is done; the hook commits it to the
  // database first (domain/git-access.ts#acceptPush), so the client's next API call sees what it pushed.
  // git's index-pack refuses a larger pack as it reads it ("pack exceeds maximum allowed size").
  const maxPack = await maxPushPackBytes(store);
  const limits: Record<string, string> = maxPack ? { 'receive.maxInputSize': String(maxPack) } : {};
  const answer = await gitCaches.exclusive(repo.id, async () => {
    await gitCaches.refresh(repo);
    const hook = await pushHooks.register((updates, received) => acceptPush(store, target, updates, received));
    try {
      const response = await backend(hook.env, limits);
      const body = await collect(response.body);
      await response.done;
      return { response, body };
    } finally {
      hook.done();
    }
  });
  return reply.code(answer.response.status).headers(answer.response.headers).send(answer.body);
}

declare module 'fastify' {
  interface FastifyInstance {
    gitMaxBodyBytes: number;
    gitCaches: ServingCaches;
    pushHooks: PushHooks;
  }
}
