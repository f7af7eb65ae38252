// What `serve` needs, checked before it listens: without these it would start and then answer 500
// (or a misleading 404) to every request that writes or touches git. Each failure is one line naming the
// setting or the program.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type Config, ConfigError } from './config.ts';

/**
 * Checks the data directory and the database file at once; answers the check of git, which runs while the
 * caller goes on (opening the database and migrating it take longer than git does) and must be awaited
 * before the server listens.
 */
export function checkServeEnvironment(config: Config): Promise<void> {
  writableDirectory(config.dataDir, 'the data directory', 'SNIPPETD_DATA_DIR');
  if (config.databaseUrl.startsWith('sqlite:')) {
    const file = config.databaseUrl.slice('sqlite:'.length);
    if (file !== ':memory:') writableSqlite(path.resolve(file));
  }
  return new Promise((resolve, reject) =>
    execFile('git', ['--version'], (error) => {
      if (!error) return resolve();
      const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : 'not working';
      reject(new ConfigError(`git is ${why} on the PATH; snippetd runs it for every clone and push`));
    }),
  );
}

function writableDirectory(dir: string, what: string, setting: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new ConfigError(`${what} ${dir} (${setting}) cannot be created: ${(error as Error).message}`);
  }
  // access() asks the kernel, so a read-only file system counts too (even for root).
  if (!accessible(dir, fs.constants.W_OK | fs.constants.X_OK))
    throw new ConfigError(`${what} ${dir} (${setting}) is not writable`);
}

/** SQLite writes the file and, beside it, its write-ahead log and shared-memory index. */
function writableSqlite(file: string): void {
  writableDirectory(path.dirname(file), 'the directory of the database', 'SNIPPETD_DATABASE_URL');
  for (const f of [file, `${file}-wal`, `${file}-shm`])
    if (fs.existsSync(f) && !accessible(f, fs.constants.R_OK | fs.constants.W_OK))
      throw new ConfigError(`the database ${f} (SNIPPETD_DATABASE_URL) is not writable`);
}

function accessible(file: string, mode: number): boolean {
  try {
    fs.accessSync(file, mode);
    return true;
  } catch {
    return false;
  }
}
