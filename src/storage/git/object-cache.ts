// Git objects never change once written (an id is the hash of the content), so a node may keep the ones it
// read without ever checking back with the database: a snippet read at its 10,000th revision walks its
// commits once, not on every request. Keyed by repository as well as id, so a read can only find what its
// own repository has; filled from rows read and from writes once committed (GitRepository.remember), never
// from a write that might still roll back. One cache per store (storage/db/store.ts): two databases in one
// process have repositories with the same ids.
import type { StoredObject, TreeEntry } from './repository.ts';

/** Objects larger than this are not kept: one large file would push out thousands of small ones. */
const MAX_KEPT_OBJECT = 256 * 1024;
const BUDGET_BYTES = 32 * 1024 * 1024;

/**
 * A tree's listing is as unchanging as the objects it is read from, and walking a large one again costs far
 * more than keeping it: each page of a project's recursive tree of 49,500 entries walked 39,600 trees, 270-450
 * ms of CPU a page. Listings that walked fewer entries than this are quick to walk again and are not kept.
 */
const MIN_KEPT_LISTING = 1000;
const LISTING_BUDGET_BYTES = 32 * 1024 * 1024;
/**
 * What a kept listing entry holds besides its path: the object, its id and the array's slot (measured: ~250
 * bytes with a 17-character path), and its slot in the listing's GitLab order (domain/project-files.ts).
 */
const LISTING_ENTRY_BYTES = 250;

/** A tree's whole listing (GitRepository.listTree) and how many entries its walk went through. */
export interface TreeListing {
  entries: readonly TreeEntry[];
  walked: number;
}

export class ObjectCache {
  private readonly entries = new Map<string, StoredObject>();
  private bytes = 0;
  private readonly listings = new Map<string, { listing: TreeListing; bytes: number }>();
  private listingBytes = 0;
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
    this.listings.clear();
    this.listingBytes = 0;
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

  /** The listing kept under `key` (the tree, the path it is at and how it was listed), most recently used last. */
  listing(repositoryId: number, key: string): TreeListing | undefined {
    const full = `${repositoryId}:${key}`;
    const hit = this.listings.get(full);
    if (!hit) return undefined;
    this.listings.delete(full);
    this.listings.set(full, hit);
    return hit.listing;
  }

  keepListing(repositoryId: number, key: string, listing: TreeListing): void {
    if (listing.walked < MIN_KEPT_LISTING) return;
    const full = `${repositoryId}:${key}`;
    if (this.listings.has(full)) return;
    // A path's characters as two bytes each: V8 keeps one beyond Latin-1 so.
    const bytes = listing.entries.reduce((sum, e) => sum + LISTING_ENTRY_BYTES + 2 * e.path.length, 0);
    if (bytes > LISTING_BUDGET_BYTES) return;
    this.listings.set(full, { listing, bytes });
    this.listingBytes += bytes;
    for (const [oldest, value] of this.listings) {
      if (this.listingBytes <= LISTING_BUDGET_BYTES) break;
      this.listings.delete(oldest);
      this.listingBytes -= value.bytes;
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
