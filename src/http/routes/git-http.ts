// git clone / fetch / push over HTTP for project repositories (/<project path>.git) and snippet
// repositories (/<project path>/snippets/<id>.git, a personal snippet's /snippets/<id>.git). Credentials: HTTP Basic with a personal access token
// as the password (any user name, as GitLab accepts oauth2:<token>), or the API's token carriers. Who
// may do what is decided in domain/git-access.ts; domain/git-serving.ts runs git for it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { User } from '../../storage/db/schema.ts';
import { authenticateToken, scopesOf } from '../../domain/tokens.ts';
import { Failure } from '../../domain/failure.ts';
import { challenge, checkGitCaller, resolveGitTarget } from '../../domain/git-access.ts';
import { type GitNode, serveGitCall } from '../../domain/git-serving.ts';
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

/** A git request: the repository path (`group/project`, `snippets/7`, ...), its part and the service asked. */
export interface GitRequest {
  repoPath: string;
  part: string;
  service: string;
  /** The query git is given: `service=` and the checked service alone (info/refs), else nothing. */
  query: string;
}

/** The request as git over HTTP, or null when it is not one (routes/paths.ts sends it elsewhere). */
export function gitRequestOf(request: FastifyRequest): GitRequest | null {
  const [urlPath, query = ''] = request.url.split('?');
  const match = GIT_PATH.exec(decodeURIComponent(urlPath));
  // The last `service` as Rack reads a repeated parameter (GitLab's params); git is given only that one, so
  // what is authorized (a read or a push) is what git serves.
  const service =
    match && (match[2] === 'info/refs' ? (new URLSearchParams(query).getAll('service').at(-1) ?? null) : match[2]);
  if (!match || !service || !SERVICES.has(service) || (match[2] === 'info/refs') !== (request.method === 'GET'))
    return null;
  return {
    repoPath: match[1],
    part: match[2],
    service,
    query: match[2] === 'info/refs' ? new URLSearchParams({ service }).toString() : '',
  };
}

/** Git request bodies are passed through as streams, never parsed or buffered: for the route that serves git. */
export function acceptGitBodies(app: FastifyInstance): void {
  app.addContentTypeParser(/^application\/x-git-/, (_request, payload, done) => done(null, payload));
}

/** Answers a git request: who asks, for which repository (404 and 403 as git clients expect), then git. */
export async function serveGit(request: FastifyRequest, reply: FastifyReply, git: GitRequest) {
  const write = git.service === 'git-receive-pack';
  const user = await gitCaller(request, write);
  const { store, gitNode } = request.server;
  const target = await resolveGitTarget(store, user, git.repoPath, write);
  const answer = await serveGitCall(
    store,
    gitNode,
    target,
    user,
    {
      part: git.part,
      method: request.method,
      query: git.query,
      contentType: request.headers['content-type'],
      contentEncoding: request.headers['content-encoding'] as string | undefined,
      gitProtocol: request.headers['git-protocol'] as string | undefined,
      remoteAddr: request.ip,
      // A body sent as another content type was read by the generic parser; git answers 415 for it.
      body: request.method === 'POST' && request.body instanceof Readable ? request.body : null,
    },
    write,
  );
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
}

declare module 'fastify' {
  interface FastifyInstance {
    gitNode: GitNode;
  }
}
