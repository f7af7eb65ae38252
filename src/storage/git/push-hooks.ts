// A push is accepted only once its objects and ref moves are committed to the database. git receive-pack
// runs the pre-receive hook (hooks/pre-receive) after it received the pack and before it moves any ref; the
// hook asks this process, over a Unix socket, to take the push, and passes the answer on. The pushed objects
// are read from git's quarantine with the environment the hook hands over; a push refused here leaves
// nothing, in the database or in the cache repository. No object is read before its type and inflated size
// are known (`git cat-file --batch-check`), so the limits (max_file_size) are checked first; bodies are then
// streamed from `git cat-file --batch` into the database in batches. The list of the push's objects (ids,
// types, sizes, paths) is held whole.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import zlib from 'node:zlib';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { deflateBody, deflateLevel, type ObjectType } from './objects.ts';
import { PART_BYTES, PartWriter } from './object-parts.ts';
import type { DeflatedObject, PendingObjects, StoredObject } from './repository.ts';
import { isProcessAlive, pidInName } from '../leftovers.ts';
import { shippedFile } from '../../shipped-files.ts';

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
export type PushDecision = (updates: RefUpdate[], received: ReceivedPush) => Promise<string | null>;

export interface PushEvents {
  /** A push refused before it was decided because it names objects it did not send: the client's mistake. */
  refused: (details: { updates: RefUpdate[]; missing: string[] }) => void;
  /** A push that failed for another reason (the client is told to try again). */
  failed: (error: unknown) => void;
}

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
   * first push, which may never come. One this user may not remove (another user's) is left where it is.
   */
  constructor(private readonly events: PushEvents) {
    for (const name of fs.readdirSync(os.tmpdir())) {
      // Only ours (a name without the prefix has no pid: NaN), and only a dead process's.
      const pid = pidInName(name, SOCKET_PREFIX);
      if (!(pid > 0 && !isProcessAlive(pid))) continue;
      try {
        fs.unlinkSync(path.join(os.tmpdir(), name));
      } catch {
        // Gone already, or not ours to remove.
      }
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
        const received = await ReceivedPush.list({ cwd: request.cwd, env: gitEnv(request.env) }, updates);
        if (received.missing.length) {
          // receive-pack refuses the updates it cannot connect itself, which the client sees as "missing
          // necessary objects". The rest is refused with them: git may refuse them too (an atomic push), and
          // the database must never move a ref that git does not.
          this.events.refused({ updates, missing: received.missing });
          const named = received.missing.slice(0, 10).join(', ');
          const more = received.missing.length > 10 ? ` and ${received.missing.length - 10} more` : '';
          message = `snippetd: the push names objects it did not send: ${named}${more} (missing necessary objects)`;
        } else message = await decide(updates, received);
      } catch (error) {
        this.events.failed(error);
        message = 'snippetd: the server could not take the push; try again';
      }
      socket.end(JSON.stringify(message === null ? { ok: true } : { ok: false, message }));
    });
  }
}

interface Git {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

const gitEnv = (hookEnv: Record<string, string>): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  ...hookEnv,
});

export interface ReceivedObject {
  id: string;
  type: ObjectType;
  /** Inflated, as `git cat-file --batch-check` tells it: known before any body is read. */
  size: number;
  /** The path it was first reached by (`git rev-list --objects`), for blobs and trees; '' otherwise. */
  path: string;
}

/** Rows per batch and deflated bytes per batch, whichever comes first, when a push is streamed to the database. */
const BATCH_ROWS = 500;
const BATCH_BYTES = 8 << 20;
/** Bodies from this size on are deflated as a stream, a piece at a time; smaller ones in one call. */
const STREAM_DEFLATE_BYTES = 64 * 1024;

/**
 * The objects a push brought (reachable from the new ref values and not from any ref the cache had), by
 * type and size; bodies are read only when asked for.
 */
export class ReceivedPush implements PendingObjects {
  /** The parts written of each large object (uploadLargeBodies), by object id. */
  private readonly uploads = new Map<string, PartWriter>();

  private constructor(
    private readonly git: Git,
    readonly objects: ReceivedObject[],
    /** Objects the updates name or reach that git has neither in the quarantine nor in the repository. */
    readonly missing: string[],
    private readonly byId = new Map<string, ReceivedObject>(),
  ) {}

  static async list(git: Git, updates: RefUpdate[]): Promise<ReceivedPush> {
    const tips = [...new Set(updates.map((u) => u.new).filter((id): id is string => id !== null))];
    if (!tips.length) return new ReceivedPush(git, [], []);
    // A tip git does not have makes rev-list fail outright ("bad object"): look for those first.
    const missingTips: string[] = [];
    await batchCheck(git, tips, (o) => {
      if (o.type === 'missing') missingTips.push(o.id);
    });
    if (missingTips.length) return new ReceivedPush(git, [], missingTips);
    const missing: string[] = [];
    const paths = new Map<string, string>();
    await gitLines(git, ['rev-list', '--objects', '--missing=print', ...tips, '--not', '--all'], [], (line) => {
      if (line.startsWith('?')) missing.push(line.slice(1, 41));
      else if (line) paths.set(line.slice(0, 40), line.slice(41));
    });
    // Each object as its line comes: a million of them, gathered after, held the event loop (see gitLines).
    const objects: ReceivedObject[] = [];
    const byId = new Map<string, ReceivedObject>();
    await batchCheck(git, [...paths.keys()], (o) => {
      if (o.type === 'missing') return void missing.push(o.id);
      const received = { id: o.id, type: o.type as ObjectType, size: o.size, path: paths.get(o.id) ?? '' };
      objects.push(received);
      byId.set(o.id, received);
    });
    return new ReceivedPush(git, objects, missing, byId);
  }

  sizeOf(id: string): number | undefined {
    return this.byId.get(id)?.size;
  }

  /** Some objects whole, inflated: call only for objects whose sizes were checked. */
  async read(ids: readonly string[]): Promise<Map<string, StoredObject>> {
    const out = new Map<string, StoredObject>();
    await catFileBatch(this.git, ids, (header) => {
      const pieces: Buffer[] = [];
      return {
        write: (piece) => void pieces.push(piece),
        end: () => void out.set(header.id, { type: header.type, body: Buffer.concat(pieces, header.size) }),
      };
    });
    return out;
  }

  /**
   * Writes the body of every object from PART_BYTES on as parts, deflated as it streams from git, a part a
   * statement (object-parts.ts): call before the transaction that stores the push (forEachBatch), and
   * discard `uploadIds` once it is over. No more than a part of a body is held at once.
   */
  async uploadLargeBodies(db: Kysely<Database>): Promise<void> {
    const large = this.objects.filter((o) => o.size >= PART_BYTES).map((o) => o.id);
    await catFileBatch(this.git, large, (header) => {
      const parts = new PartWriter(db);
      this.uploads.set(header.id, parts);
      const deflate = zlib.createDeflate({ level: deflateLevel(header.size) });
      const written = (async () => {
        for await (const chunk of deflate) await parts.write(chunk as Buffer);
        await parts.end();
      })();
      // A part that cannot be written stops the read of the body (its write below waits on this).
      written.catch((error) => deflate.destroy(error));
      return {
        write: async (piece) => {
          if (!deflate.write(piece)) await Promise.race([once(deflate, 'drain'), written]);
        },
        end: async () => {
          deflate.end();
          await written;
        },
        abort: () => deflate.destroy(),
      };
    });
  }

  /** The uploads begun by uploadLargeBodies, claimed or not. */
  get uploadIds(): number[] {
    return [...this.uploads.values()].flatMap((parts) => (parts.id === null ? [] : [parts.id]));
  }

  /**
   * Every object, deflated as the database keeps it, in batches handed to `take` one at a time: reading
   * waits for each batch to be taken, so no more than a batch (and one object) is held at once. An object
   * uploadLargeBodies wrote comes with its parts' upload instead, and is not read again.
   */
  async forEachBatch(take: (batch: DeflatedObject[]) => Promise<void>): Promise<void> {
    let batch: DeflatedObject[] = [];
    let bytes = 0;
    for (const o of this.objects) {
      const upload = this.uploads.get(o.id)?.id;
      if (upload === undefined || upload === null) continue;
      batch.push({ id: o.id, type: o.type, size: o.size, data: Buffer.alloc(0), parts: upload });
    }
    await catFileBatch(
      this.git,
      this.objects.filter((o) => !this.uploads.has(o.id)).map((o) => o.id),
      (header) => {
        const keep = async (data: Buffer) => {
          batch.push({ ...header, data });
          bytes += data.length;
          if (batch.length >= BATCH_ROWS || bytes >= BATCH_BYTES) {
            const full = batch;
            batch = [];
            bytes = 0;
            await take(full);
          }
        };
        // A small body (most trees, commits and files) deflated in one call: a stream each costs more than
        // the work; a large one through zlib's stream on the thread pool, so it never holds the event loop.
        if (header.size < STREAM_DEFLATE_BYTES) {
          const pieces: Buffer[] = [];
          return {
            write: (piece) => void pieces.push(piece),
            end: () => keep(deflateBody(Buffer.concat(pieces, header.size))),
            abort: () => {},
          };
        }
        const deflate = zlib.createDeflate({ level: deflateLevel(header.size) });
        const out = new GrowingBuffer(header.size);
        deflate.on('data', (chunk: Buffer) => out.append(chunk));
        const ended = once(deflate, 'end');
        return {
          write: async (piece) => {
            if (!deflate.write(piece)) await once(deflate, 'drain');
          },
          end: async () => {
            deflate.end();
            await ended;
            await keep(out.bytes());
          },
          abort: () => deflate.destroy(),
        };
      },
    );
    if (batch.length) await take(batch);
  }
}

/**
 * A deflated body written in place: room for what deflate can make of `size` bytes is reserved at once (pages
 * never written are never resident), so a large body is not held twice, as pieces and then joined.
 */
class GrowingBuffer {
  private buffer: Buffer;
  private length = 0;

  constructor(size: number) {
    // zlib's bound for a stored (incompressible) body: 5 bytes per 16 KiB block, plus its header.
    this.buffer = Buffer.allocUnsafe(size + 5 * Math.ceil(size / 16384) + 64);
  }

  append(chunk: Buffer): void {
    if (this.length + chunk.length > this.buffer.length) {
      const larger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + chunk.length));
      this.buffer.copy(larger, 0, 0, this.length);
      this.buffer = larger;
    }
    this.length += chunk.copy(this.buffer, this.length);
  }

  /** The deflated body; in memory of its own size when it came out much smaller than the room reserved. */
  bytes(): Buffer {
    const body = this.buffer.subarray(0, this.length);
    return this.length < this.buffer.length / 2 ? Buffer.from(body) : body;
  }
}

/** Type and inflated size of each object, or type 'missing', handed to `onObject` as git tells them. */
async function batchCheck(
  git: Git,
  ids: string[],
  onObject: (o: { id: string; type: string; size: number }) => void,
): Promise<void> {
  await gitLines(git, ['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], ids, (line) => {
    if (!line) return;
    const [id, type, size] = line.split(' ');
    onObject({ id, type, size: Number(size ?? 0) });
  });
}

/**
 * Runs git with `input` on its standard input, a line each, and hands each line of its output to `onLine` as it
 * comes, a chunk at a time: a push of a million objects listed whole, then split, held the event loop 1.9 s
 * (rev-list) and 1.1 s (cat-file). Fails unless git exits 0.
 */
async function gitLines(git: Git, args: string[], input: readonly string[], onLine: (line: string) => void) {
  const child = spawn('git', args, { ...git, stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  exited.catch(() => {}); // awaited below; until then a failed start must not be an unhandled rejection
  child.stdin.on('error', () => {});
  const writing = (async () => {
    for (let at = 0; at < input.length && child.exitCode === null && !child.stdin.destroyed; at += LINES_A_WRITE) {
      if (!child.stdin.write(`${input.slice(at, at + LINES_A_WRITE).join('\n')}\n`))
        await Promise.race([once(child.stdin, 'drain'), exited]);
    }
    child.stdin.end();
  })().catch(() => {}); // a git that exits early says so by its exit code
  child.stdout.setEncoding('latin1');
  let rest = '';
  for await (const chunk of child.stdout) {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    for (const line of lines) onLine(line);
  }
  if (rest) onLine(rest);
  await writing;
  const code = await exited;
  if (code !== 0) throw new Error(`git ${args[0]} exited ${code}`);
}
const LINES_A_WRITE = 4096;

interface ObjectHeader {
  id: string;
  type: ObjectType;
  size: number;
}

interface BodySink {
  write(piece: Buffer): void | Promise<void>;
  end(): void | Promise<void>;
  /** Lets go of what the sink holds: the read stopped part-way. */
  abort?(): void;
}

/**
 * Streams `git cat-file --batch` ("<id> <type> <size>\n<body>\n" each) for `ids`, handing each body to the sink
 * `open` gives for its header, a piece at a time as git writes it; git is not read further until the sink
 * has taken a piece.
 */
async function catFileBatch(git: Git, ids: readonly string[], open: (header: ObjectHeader) => BodySink) {
  const child = spawn('git', ['cat-file', '--batch'], { ...git, stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  exited.catch(() => {}); // awaited below; until then a failed start must not be an unhandled rejection
  child.stdin.on('error', () => {});
  child.stdin.end(ids.length ? `${ids.join('\n')}\n` : '');
  let line = Buffer.alloc(0);
  let sink: BodySink | null = null;
  let left = 0;
  let newlineNext = false;
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      let at = 0;
      while (at < chunk.length) {
        if (newlineNext) {
          at++;
          newlineNext = false;
        } else if (sink) {
          const piece = chunk.subarray(at, Math.min(chunk.length, at + left));
          await sink.write(piece);
          left -= piece.length;
          at += piece.length;
          if (left === 0) {
            await sink.end();
            sink = null;
            newlineNext = true;
          }
        } else {
          const nl = chunk.indexOf(10, at);
          if (nl === -1) {
            line = Buffer.concat([line, chunk.subarray(at)]);
            break;
          }
          const [id, type, size] = Buffer.concat([line, chunk.subarray(at, nl)])
            .toString('latin1')
            .split(' ');
          line = Buffer.alloc(0);
          at = nl + 1;
          if (size === undefined) throw new Error(`git cat-file --batch: ${id} ${type}`);
          left = Number(size);
          sink = open({ id, type: type as ObjectType, size: left });
          if (left === 0) {
            await sink.end();
            sink = null;
            newlineNext = true;
          }
        }
      }
    }
  } catch (error) {
    sink?.abort?.();
    child.kill();
    throw error;
  }
  const code = await exited;
  if (code !== 0 || sink || line.length) throw new Error(`git cat-file --batch exited ${code} before it was done`);
}
