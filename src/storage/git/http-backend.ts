// Git's smart HTTP protocol (v0 and v2) served by git's own CGI program, `git http-backend`, which runs
// upload-pack / receive-pack --stateless-rpc. The request body is streamed into it with a size limit (a push's
// is received into a file first, spoolBody) and its answer is streamed back; nothing is held in memory whole.
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Duplex, finished, PassThrough, type Readable, type Writable } from 'node:stream';
import { PRIVATE_FILE_MODE } from '../private-files.ts';

export interface BackendRequest {
  /** Root that `pathInfo` is relative to. */
  root: string;
  /** e.g. /projects/5.git/info/refs */
  pathInfo: string;
  method: string;
  query: string;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  gitProtocol: string | undefined;
  remoteUser: string | null;
  remoteAddr: string;
  body: Readable | null;
  maxBodyBytes: number;
  /** Extra git configuration (key -> value). */
  config?: Record<string, string>;
  /**
   * Given the socket git gets as its file descriptor 3, which receive-pack's hooks inherit (a push's
   * pre-receive hook asks on it, push-hooks.ts). It is closed when git http-backend exits.
   */
  hookChannel?: (channel: Duplex) => void;
}

export interface BackendResponse {
  status: number;
  headers: Record<string, string>;
  body: Readable;
  /** Resolves with the exit code once git has finished (after the body has been read). */
  done: Promise<number>;
}

export class BodyTooLarge extends Error {}
/** The client hung up, or Node's request timeout ended the request, before its body was whole. */
export class BodyIncomplete extends Error {}

/** A request body kept whole in a file of its own: `read` streams it, `remove` deletes the file. */
export interface SpooledBody {
  read(): Readable;
  remove(): void;
}

/**
 * Receives a request body whole into a new file in `dir`, so that git can read it later at disk speed. More
 * than `maxBytes` rejects with BodyTooLarge at once; the rest is read and dropped, since a request left paused
 * holds its connection open for good. A body cut short rejects with BodyIncomplete. Nothing is left on rejection.
 */
export function spoolBody(body: Readable, dir: string, maxBytes: number): Promise<SpooledBody> {
  const file = path.join(dir, crypto.randomBytes(8).toString('hex'));
  const spooled = { read: () => fs.createReadStream(file), remove: () => fs.rmSync(file, { force: true }) };
  return new Promise((resolve, reject) => {
    const out = fs.createWriteStream(file, { flags: 'wx', mode: PRIVATE_FILE_MODE });
    let received = 0;
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      body.unpipe(out);
      body.resume();
      out.destroy();
      out.on('close', spooled.remove);
      reject(error);
    };
    body.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) fail(new BodyTooLarge());
    });
    finished(body, (error) => error && fail(new BodyIncomplete()));
    out.on('error', fail);
    out.on('finish', () => failed || resolve(spooled));
    body.pipe(out);
  });
}

export function runHttpBackend(req: BackendRequest): Promise<BackendResponse> {
  const config = Object.entries(req.config ?? {});
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GIT_PROJECT_ROOT: req.root,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: req.pathInfo,
    REQUEST_METHOD: req.method,
    QUERY_STRING: req.query,
    REMOTE_ADDR: req.remoteAddr,
    ...(req.contentType && { CONTENT_TYPE: req.contentType }),
    ...(req.contentEncoding && { HTTP_CONTENT_ENCODING: req.contentEncoding }),
    ...(req.gitProtocol && { GIT_PROTOCOL: req.gitProtocol }),
    ...(req.remoteUser && { REMOTE_USER: req.remoteUser }),
    GIT_CONFIG_COUNT: String(config.length),
    ...Object.fromEntries(
      config.flatMap(([k, v], i) => [
        [`GIT_CONFIG_KEY_${i}`, k],
        [`GIT_CONFIG_VALUE_${i}`, v],
      ]),
    ),
  };
  const child = spawn('git', ['http-backend'], {
    env,
    stdio: ['pipe', 'pipe', 'pipe', req.hookChannel ? 'pipe' : 'ignore'],
  }) as ChildProcessByStdio<Writable, Readable, Readable>;
  // git that cannot start (no file descriptor left) has no pipes, and says why in an error event: heard from
  // here on, since one nobody hears stops the process.
  const failed = new Promise<never>((_, reject) => child.on('error', reject));
  failed.catch(() => {});
  if (!child.stdin || !child.stdout || !child.stderr) return failed;
  const channel = child.stdio[3] as Duplex | null;
  if (req.hookChannel && channel) {
    // A hook still running once git is gone would hold the channel, and with it the 'close' below.
    child.on('exit', () => channel.destroy());
    req.hookChannel(channel);
  }
  const done = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  const pushing = req.method === 'POST' && req.pathInfo.endsWith('/git-receive-pack');
  let tooLarge = false;
  if (req.body) {
    let received = 0;
    req.body.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > req.maxBodyBytes && !tooLarge) {
        tooLarge = true;
        child.kill('SIGKILL');
        // Keep reading (and dropping) the rest: a request left paused holds its connection open for good,
        // and the server could never close.
        req.body!.unpipe(child.stdin);
        req.body!.resume();
      }
    });
    // A client that hangs up mid-push: git must not apply a half-received pack.
    req.body.on('error', () => child.kill('SIGKILL'));
    req.body.pipe(child.stdin).on('error', () => {});
  } else {
    child.stdin.end();
  }
  child.stderr.resume();

  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    const body = new PassThrough();
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = headerEnd(head);
      if (end === null) return;
      child.stdout.off('data', onData);
      const { status, headers } = parseCgiHeaders(head.subarray(0, end.at).toString('latin1'));
      body.write(head.subarray(end.at + end.length));
      child.stdout.pipe(body);
      // A client gone before the answer's end leaves git waiting to write it, for good. A fetch's git is
      // stopped (its pack is for no one); a push's is read to its end, as stopping it could leave its
      // repository between two states.
      body.on('close', () => {
        if (body.readableEnded) return;
        if (pushing) child.stdout.resume();
        else child.kill('SIGKILL');
      });
      resolve({ status, headers, body, done });
    };
    child.stdout.on('data', onData);
    failed.catch(reject);
    done.then(() => {
      if (tooLarge) reject(new BodyTooLarge());
      else if (headerEnd(head) === null) reject(new Error('git http-backend answered without headers'));
    });
  });
}

function headerEnd(buf: Buffer): { at: number; length: number } | null {
  const crlf = buf.indexOf('\r\n\r\n');
  const lf = buf.indexOf('\n\n');
  if (crlf !== -1 && (lf === -1 || crlf < lf)) return { at: crlf, length: 4 };
  return lf !== -1 ? { at: lf, length: 2 } : null;
}

function parseCgiHeaders(text: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else headers[name] = value;
  }
  return { status, headers };
}
