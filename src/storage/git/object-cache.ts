// Git objects never change once written (an id is the hash of the content), so a node may keep the ones it
// read without ever checking back with the database: a snippet read at its 10,000th revision walks its
// commits once, not on every request. Keyed by repository as well as id, so a read can only find what its
// own repository has; filled from rows read and from writes once committed (GitRepository.remember), never
// from a write that might still roll back. One cache per store (storage/db/store.ts): two databases in one
// process have repositories with the same ids.
import type { StoredObject } from './repository.ts';

/** Objects larger than this are not kept: one large file would push out thousands of small ones. */
const MAX_KEPT_OBJECT = 256 * 1024;
const BUDGET_BYTES = 32 * 1024 * 1024;

export class ObjectCache {
  private readonly entries = new Map<string, StoredObject>();
  private bytes = 0;
  /** Lookups that found the object and that did not (GET /-/metrics reads them). */
  readonly counts = { hits: 0, misses: 0 };

  get(repositoryId: number, id: string): StoredObject | undefined {
    const key = `${repositoryId}:${id}`;
    const hit = this.entries.get(key);
    if (!hit) {
      this.counts.misses++;
      return undefined;
    }
    this.counts.hits++;
    // Most recently used last: Map keeps insertion order, and eviction takes from the front.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  /** Whether the object is kept, without counting a lookup or touching its place. */
  has(repositoryId: number, id: string): boolean {
    return this.entries.has(`${repositoryId}:${id}`);
  }

  /** Forgets everything: the rows were replaced wholesale (an ephemeral server's reset reuses ids). */
  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  set(repositoryId: number, id: string, object: StoredObject): void {
    if (object.body.length > MAX_KEPT_OBJECT) return;
    const key = `${repositoryId}:${id}`;
    if (this.entries.has(key)) return;
    this.entries.set(key, { type: object.type, body: ownSize(object.body) });
    this.bytes += object.body.length;
    for (const [oldest, value] of this.entries) {
      if (this.bytes <= BUDGET_BYTES) break;
      this.entries.delete(oldest);
      this.bytes -= value.body.length;
    }
  }
}

/**
 * zlib's output is a view of a 16 KiB block: kept as it is, a 200-byte object would hold 16 KiB, and the
 * budget, counted in object bytes, would bound nothing (the soak's RSS grew 8 MiB a minute). A kept object
 * gets a buffer of exactly its size, outside Node's shared pool.
 */
function ownSize(body: Buffer): Buffer {
  if (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength) return body;
  const copy = Buffer.allocUnsafeSlow(body.length);
  body.copy(copy);
  return copy;
}
