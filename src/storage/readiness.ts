// What /-/readiness checks of this node's storage (http/plugins/monitoring.ts runs them, app.ts hands them
// over): the database answers, and the node can serve git from its cache directory.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { Db } from './db/database.ts';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-files.ts';

/** The database answers `SELECT 1`. */
export async function databaseAnswers(db: Db): Promise<void> {
  const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(db.kysely);
  if (Number(rows[0]?.one) !== 1) throw new Error(`SELECT 1 answered ${JSON.stringify(rows)}`);
}

/** The node can serve git: its cache directory takes a file, and `git` runs. */
export async function servingCachesUsable(cacheDir: string): Promise<void> {
  await fs.mkdir(cacheDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const probe = path.join(cacheDir, `.readiness-${process.pid}`);
  await fs.writeFile(probe, 'ok', { mode: PRIVATE_FILE_MODE });
  await fs.rm(probe, { force: true });
  await new Promise<void>((resolve, reject) => {
    const git = spawn('git', ['--version'], { stdio: 'ignore' });
    git.once('error', (error) => reject(new Error(`git does not run: ${error.message}`)));
    git.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`git --version exited ${code}`))));
  });
}
