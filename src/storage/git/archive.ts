// A repository's files at a commit as one archive (git archive), streamed as git writes it.
import { spawn } from 'node:child_process';
import { PassThrough, type Readable } from 'node:stream';
import { GIT_ENV } from './history.ts';

export type ArchiveFormat = 'tar' | 'tar.gz' | 'tar.bz2' | 'zip';

/** git archive could not make it: the path is not in the commit, or git failed before its first byte. */
export class ArchiveFailed extends Error {}

// A path is a path: no pathspec magic (`:(exclude)`, globs) from a request.
const ENV = { ...GIT_ENV, GIT_LITERAL_PATHSPECS: '1' };

/**
 * The archive of `commit` (only `path` below it, when given), every entry under `prefix/`. Answers once git has
 * written its first bytes, with the rest to come as the reader takes them (git waits while the reader does); rejects
 * with ArchiveFailed when git ends before writing anything. Destroying the answer stops git.
 */
export function gitArchive(
  dir: string,
  opts: { commit: string; prefix: string; format: ArchiveFormat; path?: string },
): Promise<Readable> {
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
    const child = spawn('git', args, { env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let started = false;
    let stderr = '';
    child.on('error', (error) => (started ? undefined : reject(error)));
    if (!child.stdout || !child.stderr) return;
    const body = new PassThrough();
    child.stderr.on('data', (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString();
    });
    child.stdout.once('data', () => {
      started = true;
      resolve(body);
    });
    child.stdout.pipe(body);
    child.on('close', (code) => {
      if (!started && code === 0) resolve(body);
      else if (code === 0) return;
      else if (!started) reject(new ArchiveFailed(`git archive failed (${code}): ${stderr.trim()}`));
      // Cut off after its start: the reader must not take it for a whole archive.
      else body.destroy(new ArchiveFailed(`git archive failed (${code}) while it was read`));
    });
    // The reader gone (the client left): git stops.
    body.on('close', () => child.kill('SIGKILL'));
  });
}
