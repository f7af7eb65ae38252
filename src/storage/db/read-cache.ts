// In-memory answers to the lookups every read request starts with (token, project, membership,
// settings), valid for one value of the database's access epoch, and whole answers (http/kept-answers.ts),
// valid for one value of both the access and the content epoch.
//
// Why it is never stale: every committed change to the access tables increases the access epoch, and every
// change to the snippet tables the answers are read from the content epoch, in the same transaction
// (change_epoch, migrations 0003 and 0014). Before a read request looks anything up, the epochs are read
// after the request arrived, so after anything acknowledged to any client was committed; what depends on
// an epoch that moved is dropped. A lookup is kept only if nothing was dropped while it loaded, and an answer
// only if nothing was dropped since its request's epochs were read (it is also built from what the request
// read before, its caller and project), so an entry always holds data read after the epochs it is filed
// under were observed. Writing requests do
// not use the cache, so a request never reads back a cached copy of what it just changed; the exceptions
// are the snippet writes, which look up through it only their caller, project and settings, none of which
// they change (http/request.ts, usesReadCache).
//
// The requests that arrive in one turn of the event loop share one epoch read, made in that turn's
// check phase (setImmediate), after all of them arrived: under load this saves most of the reads. While
// a read is under way (a PostgreSQL round trip), newcomers wait for the next, which starts when it ends.
import type { Epochs } from './database.ts';
import type { Store } from './store.ts';
import { PageBoundaries } from './page-boundaries.ts';

/** Entries kept before everything is dropped (a bound on memory, e.g. against sprayed tokens). */
const MAX_ENTRIES = 10_000;
/**
 * Bytes held by the keys (a path or a username from a URL may be 16 KB) and by kept values that say what they
 * hold (prepared answers) before everything is dropped.
 */
const MAX_BYTES = 32 * 1024 * 1024;

/** Keys longer than this are not kept (see `from`). */
const MAX_KEY_CHARS = 1024;

/** What `get` keeps of a value that was loaded. */
export interface KeepRules<T> {
  /** False when the value turned out to depend on more than the database: it is not kept. */
  keep?: (value: T) => boolean;
  /** The bytes the value holds, counted against MAX_BYTES. */
  bytes?: (value: T) => number;
}

/** null: the epochs cannot be known now (nothing is kept until they can). */
export type EpochReader = () => Epochs | null | Promise<Epochs | null>;

/** Values valid while the epochs they depend on stay where they were. */
class Shelf {
  entries = new Map<string, unknown>();
  bytes = 0;
  /** Moves whenever the shelf is emptied because its epochs moved: a load that spans a move keeps nothing. */
  generation = 0;

  drop(): void {
    this.generation++;
    this.clear();
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

export class ReadCache {
  private epochs: Epochs | null = null;
  /** The lookups (token, user, project, membership, settings): valid while the access epoch stays. */
  private readonly lookups = new Shelf();
  /** Whole answers (http/kept-answers.ts): valid while both epochs stay. */
  private readonly answers = new Shelf();
  /** Lookups answered from memory and loaded (GET /-/metrics reads them). */
  readonly counts = { hits: 0, misses: 0 };

  /** Requests waiting for the next epoch read, which has not started yet: requests arriving now may still share it. */
  private waiting: ((error?: Error) => void)[] | null = null;
  /** An epoch read (PostgreSQL's is a round trip) is under way: the next one starts when it is done. */
  private reading = false;

  constructor(private readonly readEpoch: EpochReader) {}

  /** Call at the start of every read request, before any cached lookup; `done` runs once the epoch is known. */
  refresh(done: (error?: Error) => void): void {
    if (this.waiting) {
      this.waiting.push(done);
      return;
    }
    this.waiting = [done];
    if (!this.reading) setImmediate(() => this.readNow());
  }

  private readNow(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = null;
    this.reading = true;
    let epochs: ReturnType<EpochReader>;
    try {
      epochs = this.readEpoch();
    } catch (error) {
      this.failed(waiting, error as Error);
      return;
    }
    if (epochs instanceof Promise)
      epochs.then(
        (e) => this.observed(waiting, e),
        (error) => this.failed(waiting, error),
      );
    else this.observed(waiting, epochs);
  }

  private observed(waiting: ((error?: Error) => void)[], epochs: Epochs | null): void {
    this.observe(epochs);
    this.readDone();
    for (const done of waiting) done();
  }

  private failed(waiting: ((error?: Error) => void)[], error: Error): void {
    this.readDone();
    for (const done of waiting) done(error);
  }

  /** Requests that arrived while the read was under way get the next one: it starts after all of them arrived. */
  private readDone(): void {
    this.reading = false;
    if (this.waiting) setImmediate(() => this.readNow());
  }

  private observe(epochs: Epochs | null): void {
    const was = this.epochs;
    this.epochs = epochs;
    if (epochs === null || was === null || epochs.access !== was.access) {
      this.lookups.drop();
      this.answers.drop();
    } else if (epochs.content !== was.content) this.answers.drop();
  }

  /** The lookup kept under `key`, else `load`'s, kept as `rules` say. */
  get<T>(key: string, load: () => Promise<T>, rules?: KeepRules<T>): Promise<T> {
    return this.from(this.lookups, key, load, rules);
  }

  /**
   * Where the epochs were when a request's read of them completed: an answer built for that request is kept
   * only if they have not moved since (`answer`'s `since`).
   */
  get generation(): number {
    return this.answers.generation;
  }

  /**
   * The answer kept under `key`, else `load`'s, kept as `rules` say; dropped when either epoch moves. Kept
   * only if the epochs stayed where they were at `rules.since` (the request's `generation`): an answer also
   * depends on what its request read before `load` ran.
   */
  answer<T>(key: string, load: () => Promise<T>, rules: KeepRules<T> & { since: number | null }): Promise<T> {
    return this.from(this.answers, key, load, rules, rules.since);
  }

  private from<T>(
    shelf: Shelf,
    key: string,
    load: () => Promise<T>,
    rules?: KeepRules<T>,
    since: number | null = shelf.generation,
  ): Promise<T> {
    // A key from a URL may be 16 KB; V8 hashes a string over 16,383 characters by its length alone, so such keys
    // would all share one bucket, each lookup comparing them all. They are not kept.
    if (key.length > MAX_KEY_CHARS) {
      this.counts.misses++;
      return load().then(deepFreeze);
    }
    // One map lookup for a hit (a cached undefined, e.g. an unknown token, needs the second).
    const hit = shelf.entries.get(key);
    if (hit !== undefined || shelf.entries.has(key)) {
      this.counts.hits++;
      return Promise.resolve(hit as T);
    }
    this.counts.misses++;
    return this.load(shelf, key, load, rules, since);
  }

  private async load<T>(
    shelf: Shelf,
    key: string,
    load: () => Promise<T>,
    rules: KeepRules<T> | undefined,
    since: number | null,
  ): Promise<T> {
    const value = deepFreeze(await load());
    if (since === shelf.generation && this.epochs !== null && (!rules?.keep || rules.keep(value))) {
      const bytes = key.length + (rules?.bytes ? rules.bytes(value) : 0);
      if (shelf.entries.size >= MAX_ENTRIES || shelf.bytes + bytes > MAX_BYTES) shelf.clear();
      shelf.entries.set(key, value);
      shelf.bytes += bytes;
    }
    return value;
  }
}

/** Cached values are shared between requests: freezing them makes an accidental change throw. */
function deepFreeze<T>(value: T): T {
  // Bytes (a prepared answer's body) cannot be frozen: they stay writable, and are only ever written out.
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !ArrayBuffer.isView(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** The store that read requests use: the same repositories, with the hot lookups served by `cache`. */
export function withCachedReads(store: Store, cache: ReadCache): Store {
  const { tokens, projects, members, settings, namespaces, users, snippets } = store;
  const boundaries = new PageBoundaries(() => cache.generation);
  return {
    ...store,
    snippets: { ...snippets, visiblePage: boundaries.visiblePage((...page) => snippets.visiblePage(...page)) },
    memo: (key, load, rules) => cache.get(key, load, rules),
    memoAnswer: (key, load, rules) => cache.answer(key, load, rules),
    tokens: {
      ...tokens,
      findWithUserByDigest: (digest) => cache.get(`token:${digest}`, () => tokens.findWithUserByDigest(digest)),
    },
    projects: {
      ...projects,
      withNamespace: (by) =>
        cache.get('id' in by ? `project:${by.id}` : `project-path:${by.fullPath.toLowerCase()}`, () =>
          projects.withNamespace(by),
        ),
      findById: (id) => cache.get(`project-row:${id}`, () => projects.findById(id)),
    },
    members: {
      ...members,
      accessLevels: (userId, projectId, namespaceIds) =>
        cache.get(`access:${userId}:${projectId}:${namespaceIds.join(',')}`, () =>
          members.accessLevels(userId, projectId, namespaceIds),
        ),
    },
    settings: { ...settings, all: () => cache.get('settings', () => settings.all()) },
    namespaces: {
      ...namespaces,
      findById: (id) => cache.get(`namespace:${id}`, () => namespaces.findById(id)),
      findManyByIds: (ids) => cache.get(`namespaces:${ids.join(',')}`, () => namespaces.findManyByIds(ids)),
    },
    users: {
      ...users,
      findById: (id) => cache.get(`user:${id}`, () => users.findById(id)),
      findByUsername: (username) =>
        cache.get(`username:${username.toLowerCase()}`, () => users.findByUsername(username)),
    },
  };
}
