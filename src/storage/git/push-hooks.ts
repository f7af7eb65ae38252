// A push is accepted only once its objects and ref moves are committed to the database. git receive-pack
// runs the pre-receive hook (hooks/pre-receive) after it received the pack and before it moves any ref; the
// hook asks this process, over a Unix socket, to take the push, and passes the answer on. The pushed objects
// are read from git's quarantine with the environment the hook hands over; a push refused here leaves
// nothing, in the database or in the cache repository.
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type GitObject, parseCatFileBatch } from './objects.ts';
import { isProcessAlive, pidInName } from '../leftovers.ts';
import { shippedFile } from '../../shipped-files.ts';

const run = promisify(execFile);

export const HOOKS_DIR = shippedFile('storage', 'git', 'hooks');
const ZERO_ID = '0'.repeat(40);
const SOCKET_PREFIX = 'snippetd-hooks-';

export interface RefUpdate {
  ref: string;
  /** null: the ref did not exist. */
  old: string | null;
  /** null: the push deletes the ref. */
  new: string | null;
}

/** Null to accept the push, else the sentence the client is shown. */
export type PushDecision = (updates: RefUpdate[], received: GitObject[]) => Promise<string | null>;

interface HookRequest {
  push: string;
  cwd: string;
  env: Record<string, string>;
  updates: { old: string; new: string; ref: string }[];
}

export class PushHooks {
  private server: net.Server | null = null;
  private socketPath = '';
  private readonly decisions = new Map<string, PushDecision>();

  /**
   * The sockets of processes that were killed stay behind: they are removed here, at start-up, not at the
   * first push, which may never come.
   * @param onError told of a push that failed for a reason other than a refusal (the client is told to retry).
   */
  constructor(private readonly onError: (error: unknown) => void) {
    for (const name of fs.readdirSync(os.tmpdir())) {
      const pid = pidInName(name, SOCKET_PREFIX);
      if (pid > 0 && !isProcessAlive(pid)) fs.rmSync(path.join(os.tmpdir(), name), { force: true });
    }
  }

  /** The environment a receive-pack must run with so that its hook reaches `decide`; call done() after. */
  async register(decide: PushDecision): Promise<{ env: Record<string, string>; done: () => void }> {
    await this.listen();
    const push = crypto.randomBytes(16).toString('hex');
    this.decisions.set(push, decide);
    return {
      env: { SNIPPETD_HOOK_SOCKET: this.socketPath, SNIPPETD_PUSH_ID: push, SNIPPETD_NODE: process.execPath },
      done: () => this.decisions.delete(push),
    };
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise((resolve) => server.close(resolve));
    fs.rmSync(this.socketPath, { force: true });
  }

  private async listen(): Promise<void> {
    if (this.server) return;
    this.socketPath = path.join(
      os.tmpdir(),
      `${SOCKET_PREFIX}${process.pid}-${crypto.randomBytes(6).toString('hex')}.sock`,
    );
    // Half-open: the hook ends its side once it has asked, and still waits for the answer.
    const server = net.createServer({ allowHalfOpen: true }, (socket) => this.serve(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.socketPath, resolve);
    });
    server.unref();
  }

  private serve(socket: net.Socket): void {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      text += chunk;
    });
    socket.on('end', async () => {
      let message: string | null;
      try {
        const request = JSON.parse(text) as HookRequest;
        const decide = this.decisions.get(request.push);
        if (!decide) throw new Error('unknown push');
        const updates = request.updates.map((u) => ({
          ref: u.ref,
          old: u.old === ZERO_ID ? null : u.old,
          new: u.new === ZERO_ID ? null : u.new,
        }));
        message = await decide(updates, await receivedObjects(request, updates));
      } catch (error) {
        this.onError(error);
        message = 'snippetd: the server could not take the push; try again';
      }
      socket.end(JSON.stringify(message === null ? { ok: true } : { ok: false, message }));
    });
  }
}

/** The objects the push brought: reachable from the new ref values and not from any ref the cache had. */
async function receivedObjects(request: HookRequest, updates: RefUpdate[]): Promise<GitObject[]> {
  const tips = updates.map((u) => u.new).filter((id): id is string => id !== null);
  if (!tips.length) return [];
  const options = { cwd: request.cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...request.env } };
  const { stdout } = await run('git', ['rev-list', '--objects', ...tips, '--not', '--all'], {
    ...options,
    maxBuffer: 1 << 30,
  });
  const ids = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(0, 40));
  return readObjects(ids, options);
}

/** Reads objects through one `git cat-file --batch`. */
function readObjects(ids: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<GitObject[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['cat-file', '--batch'], { ...options, stdio: ['pipe', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`git cat-file exited ${code}`));
      resolve(parseCatFileBatch(Buffer.concat(chunks)));
    });
    child.stdin.end(ids.length ? `${ids.join('\n')}\n` : '');
  });
}
