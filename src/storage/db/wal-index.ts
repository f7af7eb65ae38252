// Has anything been committed to a SQLite database in WAL mode since we last looked? The WAL index (the
// `-shm` file) starts with two copies of its header, and every commit changes them: the change counter
// goes up, and the frame count or the salt changes with it (https://sqlite.org/walformat.html, "The
// WAL-Index Header"). A commit updates the header before it returns, so before any client hears of it.
//
// Reading those 96 bytes is one pread; a query reads them too, but also takes and drops a read lock
// (two more system calls) and runs a statement. The epoch reader (database.ts) asks here first and runs
// its query only when the header moved since the query last ran.
import fs from 'node:fs';

/** Two copies of the 48-byte header. */
const HEADER_BYTES = 96;
const COPY_BYTES = 48;
/** The WAL-index format this check knows (iVersion, the header's first field). */
const WAL_INDEX_VERSION = 3007000;
/** Whatever the header says, the query runs at least this often: a bound on any case not foreseen here. */
const MAX_SKIP_MS = 1000;

export class WalIndexHeader {
  private fd: number | null = null;
  private seen = Buffer.alloc(HEADER_BYTES);
  private now = Buffer.alloc(HEADER_BYTES);
  private length = 0;
  /** `seen` holds a header read before the last successful query, which so saw every commit it records. */
  private known = false;
  private acceptedAt = 0;

  /** `databaseFile` as opened; SQLite keeps the index beside the file a symbolic link leads to. */
  constructor(databaseFile: string) {
    try {
      this.fd = fs.openSync(`${fs.realpathSync(databaseFile)}-shm`, 'r');
    } catch {
      this.fd = null; // no WAL index to watch: every call says "changed"
    }
  }

  /**
   * Reads the header: true when it is a valid one and the one `accept` last recorded, so nothing was
   * committed since. Call before the query; call `accept` once the query succeeded, so a commit landing
   * between the two is seen next time.
   */
  unchanged(): boolean {
    if (this.fd === null) return false;
    // A short read (the index being created) or a header changing under the read (a commit at that very
    // moment) differs from what was recorded: then the query runs, which is always right.
    this.length = fs.readSync(this.fd, this.now, 0, HEADER_BYTES, 0);
    return (
      this.known &&
      this.length === HEADER_BYTES &&
      this.now.equals(this.seen) &&
      performance.now() - this.acceptedAt < MAX_SKIP_MS
    );
  }

  /** The query that followed the last `unchanged` succeeded: record the header read before it. */
  accept(): void {
    this.known = this.length === HEADER_BYTES && isValidHeader(this.now);
    this.acceptedAt = performance.now();
    [this.seen, this.now] = [this.now, this.seen];
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}

/** A header in use and of the known format, both copies alike (as a finished commit leaves them). */
function isValidHeader(header: Buffer): boolean {
  const version = header.readUInt32LE(0) === WAL_INDEX_VERSION || header.readUInt32BE(0) === WAL_INDEX_VERSION; // native byte order
  const initialised = header[12] === 1;
  return version && initialised && header.subarray(0, COPY_BYTES).equals(header.subarray(COPY_BYTES, HEADER_BYTES));
}
