// Serving a git request once it is known who asks for which repository (git-access.ts): a clone or fetch from
// this node's serving cache brought up to date from the rows, a push through git's receive-pack with the
// pre-receive hook that commits it to the database first (git-access.ts#acceptPush), so the client's next
// API call sees what it pushed. git's own `http-backend` speaks the protocol.
import type { Duplex, Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Store } from '../storage/db/store.ts';
import type { User } from '../storage/db/schema.ts';
import { BodyIncomplete, BodyTooLarge, runHttpBackend, spoolBody } from '../storage/git/http-backend.ts';
import { pushCommandsProblem } from '../storage/git/push-commands.ts';
import { HOOKS_DIR, type PushDecision, type PushHooks } from '../storage/git/push-hooks.ts';
import type { ServingCaches } from '../storage/git/serving-cache.ts';
import { Failure } from './failure.ts';
import { acceptPush, type GitTarget, maxPushPackBytes } from './git-access.ts';

/** What a node serves git with: its serving caches, its push hooks, the largest request body. */
export interface GitNode {
  caches: ServingCaches;
  pushHooks: PushHooks;
  maxBodyBytes: number;
}

/** A git request as HTTP carried it: the part of the repository asked (`info/refs`, `git-upload-pack`, ...). */
export interface GitCall {
  part: string;
  method: string;
  query: string;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  gitProtocol: string | undefined;
  remoteAddr: string;
  /** The body for git, as a stream; null when there is none or it came as another content type (git: 415). */
  body: Readable | null;
}

export interface GitAnswer {
  status: number;
  headers: Record<string, string>;
  body: Readable | Buffer;
}

/** The most a fetch's body may be, as sent and as git reads it inflated: 300,000 `have` lines. */
export const MAX_FETCH_BODY_BYTES = 16 << 20;

async function spoolFetchBody(body: Readable, dir: string, encoding: string | undefined) {
  const spooled = await spoolBody(body, dir, MAX_FETCH_BODY_BYTES).catch((error) => {
    if (error instanceof BodyTooLarge) throw new Failure('payload_too_large_git');
    throw error instanceof BodyIncomplete ? new Failure('request_timeout') : error;
  });
  if (
    /^(x-)?gzip$/i.test(encoding ?? '') &&
    (await inflatedBytes(spooled.read(), MAX_FETCH_BODY_BYTES + 1)) > MAX_FETCH_BODY_BYTES
  ) {
    spooled.remove();
    throw new Failure('payload_too_large_git');
  }
  return spooled;
}

/** How many bytes a gzipped stream inflates to, counted up to `upTo` (a body that is not gzip: git answers it). */
async function inflatedBytes(gzipped: Readable, upTo: number): Promise<number> {
  const inflating = gzipped.pipe(zlib.createGunzip());
  let bytes = 0;
  try {
    for await (const chunk of inflating as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes >= upTo) break;
    }
  } catch {
    // Not gzip after all: git's answer to it stands.
  } finally {
    gzipped.destroy();
    inflating.destroy();
  }
  return bytes;
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function serveGitCall(
  store: Store,
  node: GitNode,
  target: GitTarget,
  user: User | null,
  call: GitCall,
  write: boolean,
): Promise<GitAnswer> {
  const { caches, pushHooks } = node;
  const repo = target.repository;
  const backend = (
    body: Readable | null,
    config: Record<string, string> = {},
    hookChannel?: (channel: Duplex) => void,
  ) =>
    runHttpBackend({
      root: caches.root,
      pathInfo: `/${caches.relativePath(repo.id)}/${call.part}`,
      method: call.method,
      query: call.query,
      contentType: call.contentType,
      contentEncoding: call.contentEncoding,
      gitProtocol: call.gitProtocol,
      remoteUser: user?.username ?? null,
      remoteAddr: call.remoteAddr,
      body,
      maxBodyBytes: node.maxBodyBytes,
      config: { 'core.hooksPath': HOOKS_DIR, 'receive.fsckObjects': 'true', ...config },
      hookChannel,
    }).catch((error) => {
      throw error instanceof BodyTooLarge ? new Failure('payload_too_large_git') : error;
    });
  if (!(write && call.method === 'POST')) {
    // A fetch's body (its wants and haves) is received whole before git starts, and held to
    // MAX_FETCH_BODY_BYTES as git reads it: 200 anonymous fetches sending their bodies slowly held 400 git
    // processes, and 727 KB of gzip carried 5 million `have` lines (3.3 s of git's time).
    const spooled = call.body && (await spoolFetchBody(call.body, caches.spoolDir(), call.contentEncoding));
    let release = () => {};
    try {
      release = (await caches.refreshForReading(repo)).release;
      const response = await backend(spooled ? spooled.read() : null);
      response.done
        .finally(() => {
          release();
          spooled?.remove();
        })
        .catch(() => {});
      return response;
    } catch (error) {
      release();
      spooled?.remove();
      throw error;
    }
  }
  // A push holds this node's cache of the repository until git is done, so its body is received whole first:
  // a client sending it slowly holds only its own request, never the clones and pushes of others.
  const spooled =
    call.body &&
    (await spoolBody(call.body, caches.spoolDir(), node.maxBodyBytes).catch((error) => {
      if (error instanceof BodyTooLarge) throw new Failure('payload_too_large_git');
      throw error instanceof BodyIncomplete ? new Failure('request_timeout') : error;
    }));
  try {
    const odd = spooled && (await pushCommandsProblem(spooled.read(), call.contentEncoding));
    if (odd) throw new Failure('forbidden_git', `snippetd: ${odd}`);
    // git's index-pack refuses a larger pack as it reads it ("pack exceeds maximum allowed size").
    const maxPack = await maxPushPackBytes(store);
    const limits: Record<string, string> = maxPack ? { 'receive.maxInputSize': String(maxPack) } : {};
    return await caches.exclusive(repo.id, async () => {
      await caches.refresh(repo);
      let answered: Promise<void> = Promise.resolve();
      const decide: PushDecision = (updates, received) => acceptPush(store, target, updates, received);
      const response = await backend(spooled ? spooled.read() : null, limits, (channel) => {
        answered = pushHooks.answer(channel, decide);
      });
      const body = await collect(response.body);
      await response.done;
      // A client that hung up mid-decision ended git: the decision still ends before the cache is let go.
      await answered;
      return { status: response.status, headers: response.headers, body };
    });
  } finally {
    spooled?.remove();
  }
}
