// A pack file (git's format v2) and its index written from stored objects as their deflated bodies come, a
// piece at a time: a serving cache's objects (serving-cache.ts). Written whole in memory, a 48 MiB object
// was copied, hashed and written to disk in one go on the event loop, for a clone right after it was pushed.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import zlib from 'node:zlib';
import { PRIVATE_FILE_MODE } from '../private-files.ts';

/** Bytes gathered before one write to the file. */
const WRITE_BYTES = 1 << 20;

export class PackFileWriter {
  private readonly hash = crypto.createHash('sha1');
  private readonly entries: { id: string; offset: number; crc: number }[] = [];
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private offset = 0;
  private crc = 0;

  private constructor(
    private readonly dir: string,
    private readonly tmp: string,
    private readonly file: fs.promises.FileHandle,
  ) {}

  /** Begins a pack of `count` objects in `dir` (a serving cache's objects/pack). */
  static async begin(dir: string, count: number): Promise<PackFileWriter> {
    const tmp = path.join(dir, `tmp_pack_${crypto.randomBytes(6).toString('hex')}`);
    const writer = new PackFileWriter(dir, tmp, await fs.promises.open(tmp, 'wx', PRIVATE_FILE_MODE));
    const header = Buffer.alloc(12);
    header.write('PACK', 0, 'latin1');
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(count, 8);
    await writer.append(header);
    return writer;
  }

  /** Bytes of the pack so far. */
  get size(): number {
    return this.offset;
  }

  /** Begins an object: its deflated body follows through `body`. */
  async object(id: string, type: number, size: number): Promise<void> {
    const head = packObjectHeader(type, size);
    this.entries.push({ id, offset: this.offset, crc: 0 });
    this.crc = zlib.crc32(head);
    await this.append(head);
  }

  /** A piece of the current object's deflated body. */
  async body(piece: Buffer): Promise<void> {
    this.crc = zlib.crc32(piece, this.crc);
    this.entries[this.entries.length - 1].crc = this.crc;
    await this.append(piece);
  }

  /** Ends the pack: the checksum, then the index; answers the pack's name. The index is made last: git finds packs by it. */
  async finish(): Promise<string> {
    await this.flush();
    const packSha = this.hash.digest();
    await this.file.write(packSha);
    await this.file.close();
    const name = `pack-${packSha.toString('hex')}`;
    const base = path.join(this.dir, name);
    await fs.promises.rename(this.tmp, `${base}.pack`);
    const indexTmp = `${base}.idx.tmp`;
    await fs.promises.writeFile(indexTmp, await packIndex(this.entries, packSha), { mode: PRIVATE_FILE_MODE });
    await fs.promises.rename(indexTmp, `${base}.idx`);
    return name;
  }

  /** Drops what was written (the refresh failed). */
  async abandon(): Promise<void> {
    await this.file.close().catch(() => {});
    await fs.promises.rm(this.tmp, { force: true });
  }

  private async append(bytes: Buffer): Promise<void> {
    this.offset += bytes.length;
    this.buffered.push(bytes);
    this.bufferedBytes += bytes.length;
    if (this.bufferedBytes >= WRITE_BYTES) await this.flush();
  }

  private async flush(): Promise<void> {
    const bytes = this.buffered.length === 1 ? this.buffered[0] : Buffer.concat(this.buffered, this.bufferedBytes);
    this.buffered = [];
    this.bufferedBytes = 0;
    this.hash.update(bytes); // once a write, not once a piece: a small object's pieces are a few bytes each
    await this.file.write(bytes);
  }
}

/** Type and size as a pack entry header: 3 type bits, then the size in 4 + 7n bits, little-endian groups. */
function packObjectHeader(type: number, size: number): Buffer {
  const bytes = [((type & 7) << 4) | (size & 15)];
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes[bytes.length - 1] |= 0x80;
    bytes.push(rest & 0x7f);
    rest = Math.floor(rest / 128);
  }
  return Buffer.from(bytes);
}

/** Entries put in the index between two turns of the event loop: 100,000 in one took 115-166 ms. */
const INDEX_ENTRIES_A_TURN = 10_000;

/** Pack index v2: fan-out table, sorted ids, CRC-32s, 31-bit offsets, then the pack and index checksums. */
async function packIndex(entries: { id: string; offset: number; crc: number }[], packSha: Buffer): Promise<Buffer> {
  // A cache's objects come in id order (serving-cache.ts), which the sort checks with one comparison an entry.
  const sorted = [...entries].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const n = sorted.length;
  const idsAt = 8 + 256 * 4;
  const crcsAt = idsAt + n * 20;
  const offsetsAt = crcsAt + n * 4;
  const end = offsetsAt + n * 4 + 20;
  const buf = Buffer.alloc(end + 20);
  buf.writeUInt32BE(0xff744f63, 0);
  buf.writeUInt32BE(2, 4);
  // fan-out[b]: how many ids start with a byte <= b.
  const counts = new Array<number>(256).fill(0);
  for (let i = 0; i < n; i++) {
    if (i > 0 && i % INDEX_ENTRIES_A_TURN === 0) await nextTurn();
    const e = sorted[i];
    buf.write(e.id, idsAt + i * 20, 20, 'hex');
    counts[buf[idsAt + i * 20]]++;
    buf.writeUInt32BE(e.crc >>> 0, crcsAt + i * 4);
    buf.writeUInt32BE(e.offset, offsetsAt + i * 4);
  }
  let running = 0;
  for (let b = 0; b < 256; b++) {
    running += counts[b];
    buf.writeUInt32BE(running, 8 + b * 4);
  }
  packSha.copy(buf, end - 20);
  crypto.createHash('sha1').update(buf.subarray(0, end)).digest().copy(buf, end);
  return buf;
}
