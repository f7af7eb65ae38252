// A repository's files at a commit as one archive (git archive), written by git into a file.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { GIT_ENV } from './history.ts';

export type ArchiveFormat = 'tar' | 'tar.gz' | 'tar.bz2' | 'zip';

/** git archive could not make it: the path is not in the commit, git failed, or it went past its time. */
export class ArchiveFailed extends Error {}

// A path is a path: no pathspec magic (`:(exclude)`, globs) from a request.
const ENV = { ...GIT_ENV, GIT_LITERAL_PATHSPECS: '1' };

/**
 * Writes the archive of `commit` (only `path` below it, when given), every entry under `prefix/`, into `fd`, git
 * writing it there itself; rejects with ArchiveFailed when git fails or takes over `timeoutMs` (it is killed then).
 */
export function writeGitArchive(
  dir: string,
  opts: { commit: string; prefix: string; format: ArchiveFormat; path?: string },
  fd: number,
  timeoutMs: number,
): Promise<void> {
  // tar.bz2 is no format of git's own: it is given one, bzip2 reading git's tar.
  const bzip2 = opts.format === 'tar.bz2' ? ['-c', 'tar.tar.bz2.command=bzip2 -c'] : [];
  const args = [
    '--git-dir',
    dir,
    ...bzip2,
    'archive',
    `--format=${opts.format}`,
    `--prefix=${opts.prefix}/`,
    opts.commit,
    ...(opts.path ? ['--', opts.path] : []),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env: ENV, stdio: ['ignore', fd, 'pipe'] });
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.stderr?.on('data', (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString();
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new ArchiveFailed(`git archive failed (${code ?? signal}): ${stderr.trim()}`));
    });
  });
}

/** A file's bytes as a stream, the file removed at once: nothing is left on disk whatever becomes of its reader. */
export async function readAndRemove(file: string): Promise<{ body: fs.ReadStream; size: number }> {
  const handle = await fs.promises.open(file, 'r');
  await fs.promises.rm(file, { force: true });
  const { size } = await handle.stat();
  return { body: handle.createReadStream(), size };
}
