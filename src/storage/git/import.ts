// Legacy repositories (bare ones on disk) into rows: how `snippetd migrate` brings in the data directory of an earlier
// version (one bare repository per project and snippet under repositories/). Every object's id is recomputed
// from its bytes before it is stored; running it again stores nothing twice.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { type GitObject, objectId, parseCatFileBatch } from './objects.ts';
import type { GitRepository } from './repository.ts';

const run = promisify(execFile);

/**
 * Stores every object of the repository at `dir` and makes the rows' refs and HEAD exactly the directory's.
 * Call inside a transaction, with `repo` bound to it.
 */
export async function importDirectory(repo: GitRepository, dir: string): Promise<{ objects: number; refs: number }> {
  const objects = await allObjects(dir);
  for (const o of objects) {
    if (objectId(o.type, o.body) !== o.id) throw new Error(`${dir}: object ${o.id} does not hash to its id`);
  }
  await repo.store(objects);
  const { stdout } = await run('git', ['--git-dir', dir, 'for-each-ref', '--format=%(objectname) %(refname)'], {
    maxBuffer: 1 << 28,
  });
  const wanted = new Map(
    stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => [line.slice(41), line.slice(0, 40)] as [string, string]),
  );
  const current = await repo.refs();
  for (const [name, id] of wanted)
    if (current.get(name) !== id) await repo.moveRef(name, current.get(name) ?? null, id);
  for (const [name, id] of current) if (!wanted.has(name)) await repo.moveRef(name, id, null);
  const head = await run('git', ['--git-dir', dir, 'symbolic-ref', '--short', 'HEAD']).catch(() => null);
  if (head?.stdout.trim() && head.stdout.trim() !== repo.head) await repo.setHead(head.stdout.trim());
  return { objects: objects.length, refs: wanted.size };
}

/**
 * Every object a ref reaches (what a clone would get: objects of deleted branches stay behind), through
 * `git rev-list --objects --all` and one `git cat-file --batch`.
 */
async function allObjects(dir: string): Promise<GitObject[]> {
  const { stdout } = await run('git', ['--git-dir', dir, 'rev-list', '--objects', '--all'], { maxBuffer: 1 << 30 });
  const ids = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(0, 40));
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['--git-dir', dir, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'ignore'] });
    child.on('error', reject); // first: a git that cannot start has no pipes
    if (!child.stdout || !child.stdin) return;
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${dir}: git cat-file exited ${code}`));
      resolve(parseCatFileBatch(Buffer.concat(chunks)));
    });
    child.stdin.end(ids.length ? `${ids.join('\n')}\n` : '');
  });
}
