// What snippetd keeps on disk (the database with password hashes and private snippets, backups, caches of
// repositories) is for the service's own user only: directories 0700, files 0600. The modes are given
// where each is made, never through the process's umask (which an embedding process owns); a umask can
// only take bits away, so it never makes them looser. SQLite makes its -wal and -shm files with the mode
// of the database file, so a database file made 0600 keeps those 0600 too.
import fs from 'node:fs';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** `mkdir -p`, every directory it makes 0700 (those that exist are left as they are). */
export function makePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Makes `file` empty and 0600; false when it exists already (made by no one else in between: `wx`), so a
 * caller that needs a new file learns it and one that opens it anyway finds it tightened as well.
 */
export function createPrivateFile(file: string): boolean {
  try {
    fs.closeSync(fs.openSync(file, 'wx', PRIVATE_FILE_MODE));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  }
}

/**
 * Takes group and other access away from what exists of `paths` (made looser by an earlier version, or by
 * hand). Best effort: a path this user may not change (EPERM, a read-only file system) is left as it is.
 */
export function tightenPrivate(paths: string[]): void {
  for (const p of paths) {
    try {
      const { mode } = fs.statSync(p);
      if ((mode & 0o077) !== 0) fs.chmodSync(p, mode & 0o700);
    } catch {
      // Missing, or not ours to change: nothing to do.
    }
  }
}
