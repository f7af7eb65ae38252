// A push is accepted only once its objects and ref moves are committed to the database. git receive-pack
// runs the pre-receive hook (hooks/pre-receive) after it received the pack and before it moves any ref; the
// hook asks this process, over the socket git http-backend was started with as its file descriptor 3, to take
// the push, and passes the answer on. The pushed objects are read from git's quarantine with the environment
// the hook hands over; a push refused here leaves nothing, in the database or in the serving cache. No
// object is read before its type and inflated size are known (`git cat-file --batch-check`), so the limits
// (max_file_size) are checked first; bodies are then streamed from `git cat-file --batch` into the database in
// batches. The list of the push's objects (ids, types, sizes, paths) is held whole.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import zlib from 'node:zlib';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { deflateBody, deflateLevel, type ObjectType } from './objects.ts';
import { PART_BYTES, PartWriter } from './object-parts.ts';
import type { DeflatedObject, PendingObjects, StoredObject } from './repository.ts';
import { shippedFile } from '../../shipped-files.ts';
import { MAX_COMMANDS_BYTES } from './push-commands.ts';

export const HOOKS_DIR = shippedFile('storage', 'git', 'hooks');
const ZERO_ID = '0'.repeat(40);
/**
 * The hook's request: these lines, `NAME=value` each, then git's input to the hook (its ref updates) in hex on
 * one line. Git hands on a ref name as the client sent it, newlines and all, and refuses it only after the hook:
 * in hex, no name can end the request early or add a line to it.
 */
const REQUEST_HEAD = [
  'cwd',
  'GIT_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_QUARANTINE_PATH',
];
const UPDATE_LINE = /^([0-9a-f]{40}) ([0-9a-f]{40}) (refs\/.+)$/s;
const utf8 = new TextDecoder('utf-8', { fatal: true });

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

export class PushHooks {
  constructor(private readonly events: PushEvents) {}

  /**
   * Answers the pre-receive hook of one receive-pack on `channel`, the socket it has as file descriptor 3.
   * Resolves once the answer is written, or once the channel closed without a request (git refused the push
   * before its hook ran, or the client hung up).
   */
  async answer(channel: Duplex, decide: PushDecision): Promise<void> {
    channel.on('error', () => {});
    const lines = await readRequest(channel);
    if (!lines) return;
    let message: string | null;
    try {
      const head = new Map(
        lines
          .slice(0, REQUEST_HEAD.length)
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      );
      if (REQUEST_HEAD.some((name) => !head.has(name))) throw new Error('the pre-receive hook sent no environment');
      const hex = lines[REQUEST_HEAD.length];
      // Buffer.from stops at the first byte that is not hex: a line cut or marked (od failed) would read short.
      const updates = /^(?:[0-9a-f]{2})*$/.test(hex)
        ? parseUpdates(Buffer.from(hex, 'hex'))
        : 'the push sent no ref updates git could read';
      if (typeof updates === 'string') message = `snippetd: ${updates}`;
      else {
        const env = Object.fromEntries(
          REQUEST_HEAD.slice(1).flatMap((name) => (head.get(name) ? [[name, head.get(name) as string]] : [])),
        );
        const received = await ReceivedPush.list({ cwd: head.get('cwd') as string, env: gitEnv(env) }, updates);
        if (received.missing.length) {
          // receive-pack refuses the updates it cannot connect itself, which the client sees as "missing
          // necessary objects". The rest is refused with them: git may refuse them too (an atomic push), and
          // the database must never move a ref that git does not.
          this.events.refused({ updates, missing: received.missing });
          const named = received.missing.slice(0, 10).join(', ');
          const more = received.missing.length > 10 ? ` and ${received.missing.length - 10} more` : '';
          message = `snippetd: the push names objects it did not send: ${named}${more} (missing necessary objects)`;
        } else message = await decide(updates, received);
      }
    } catch (error) {
      this.events.failed(error);
      message = 'snippetd: the server could not take the push; try again';
    }
    if (!channel.destroyed) channel.end(message === null ? 'accept\n' : `refuse ${message}\n`);
  }
}

/**
 * git's input to the pre-receive hook as ref updates, or why the push is refused whole. git writes a line per
 * update, `<old> <new> <ref>`, with the name as the client sent it: a line that is not such an update (what a
 * name ending in a newline leaves) or a name that is not UTF-8 refuses the push, before anything is decided on
 * it; git refuses such names too, after the hook. A push with a newline in a name is refused before git
 * runs (push-commands.ts); this holds whatever reaches the hook.
 */
function parseUpdates(input: Buffer): RefUpdate[] | string {
  if (input.length === 0 || input[input.length - 1] !== 0x0a) return 'the push sent no ref updates git could read';
  const updates: RefUpdate[] = [];
  const refs = new Set<string>();
  for (let at = 0; at < input.length; ) {
    const end = input.indexOf(0x0a, at);
    const line = input.subarray(at, end);
    at = end + 1;
    const match = UPDATE_LINE.exec(line.toString('latin1'));
    let ref: string;
    try {
      ref = match ? utf8.decode(line.subarray(line.length - match[3].length)) : '';
    } catch {
      ref = '';
    }
    if (!match || !ref) return `not a valid ref name: ${JSON.stringify(line.toString())}`;
    if (refs.has(ref)) return `a push updates each ref once: ${JSON.stringify(ref)}`;
    refs.add(ref);
    updates.push({ ref, old: match[1] === ZERO_ID ? null : match[1], new: match[2] === ZERO_ID ? null : match[2] });
  }
  return updates;
}

/**
 * The hook's request as its lines, or null if the channel closed first. A request past MAX_COMMANDS_BYTES
 * closes the channel (the hook then fails, and git refuses the push) and gives null.
 */
function readRequest(channel: Duplex): Promise<string[] | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let newlines = 0;
    const read = (chunk: Buffer) => {
      chunks.push(chunk);
      bytes += chunk.length;
      for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) newlines++;
      if (bytes > 2 * MAX_COMMANDS_BYTES + 64 * 1024) {
        channel.off('data', read);
        channel.destroy();
        resolve(null);
      } else if (newlines >= REQUEST_HEAD.length + 1) {
        channel.off('data', read);
        // The paths as UTF-8, as the file system has them; the hex line is ASCII.
        const text = Buffer.concat(chunks, bytes).toString('utf8');
        resolve(text.split('\n').slice(0, REQUEST_HEAD.length + 1));
      }
    };
    channel.on('data', read);
    channel.once('close', () => resolve(null));
    channel.once('end', () => resolve(null));
  });
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
/** A push whose objects' inflated sizes add up to no more than this keeps their bodies once read (eachBody). */
const KEPT_PUSH_BYTES = 256 * 1024;
/** Bodies from this size on are deflated as a stream, a piece at a time; smaller ones in one call. */
const STREAM_DEFLATE_BYTES = 64 * 1024;

/**
 * The objects a push brought (reachable from the new ref values and not from any ref the cache had), by
 * type and size; bodies are read only when asked for.
 */
export class ReceivedPush implements PendingObjects {
  /** The parts written of each large object (uploadLargeBodies), by object id. */
  private readonly uploads = new Map<string, PartWriter>();
  /** Every body of a small push, once read (eachBody). */
  private kept: Promise<Map<string, StoredObject>> | null = null;

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
    const missing: string[] = [];
    const paths = new Map<string, string>();
    try {
      await gitLines(git, ['rev-list', '--objects', '--missing=print', '--stdin', '--not', '--all'], tips, (line) => {
        if (line.startsWith('?')) missing.push(line.slice(1, 41));
        else if (line) paths.set(line.slice(0, 40), line.slice(41));
      });
    } catch (error) {
      // A tip git does not have makes rev-list fail outright ("bad object"): those are what the push lacks.
      const missingTips: string[] = [];
      await batchCheck(git, tips, (o) => {
        if (o.type === 'missing') missingTips.push(o.id);
      });
      if (missingTips.length) return new ReceivedPush(git, [], missingTips);
      throw error;
    }
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

  /**
   * Each body of `ids` to the sink `open` gives for its header. The bodies of a small push are read once, all
   * in one git process, and kept: a one-line push read them in five, a few milliseconds each.
   */
  private async eachBody(ids: readonly string[], open: (header: ObjectHeader) => BodySink): Promise<void> {
    if (this.objects.reduce((sum, o) => sum + o.size, 0) > KEPT_PUSH_BYTES) return catFileBatch(this.git, ids, open);
    this.kept ??= this.readAll();
    const kept = await this.kept;
    for (const id of ids) {
      const object = kept.get(id);
      if (!object) throw new Error(`the push brought no object ${id}`);
      const sink = open({ id, type: object.type, size: object.body.length });
      await sink.write(object.body);
      await sink.end();
    }
  }

  private async readAll(): Promise<Map<string, StoredObject>> {
    const all = new Map<string, StoredObject>();
    await catFileBatch(
      this.git,
      this.objects.map((o) => o.id),
      (header) => {
        const pieces: Buffer[] = [];
        return {
          write: (piece) => void pieces.push(piece),
          end: () => void all.set(header.id, { type: header.type, body: Buffer.concat(pieces, header.size) }),
        };
      },
    );
    return all;
  }

  sizeOf(id: string): number | undefined {
    return this.byId.get(id)?.size;
  }

  /** Some objects whole, inflated: call only for objects whose sizes were checked. */
  async read(ids: readonly string[]): Promise<Map<string, StoredObject>> {
    const out = new Map<string, StoredObject>();
    await this.eachBody(ids, (header) => {
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
    if (!large.length) return;
    await this.eachBody(large, (header) => {
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
    await this.eachBody(
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
