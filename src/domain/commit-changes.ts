// The files a commit changed: as the rows tell them (storage/git/changes.ts) or, where only git can tell (a
// rename by similarity, a large change), as git works them out in the node's serving cache of the repository
// (storage/git/history.ts). Kept by commit id, which names its changes for good; a caller asks only for a commit
// it found in its own repository. Shared by a snippet's revisions and a project's commits.
import type { ServingCaches } from '../storage/git/serving-cache.ts';
import { type FileChange, GitTimeout, readRevisions } from '../storage/git/history.ts';
import type { GitRepository } from '../storage/git/repository.ts';
import { changesFromRows } from '../storage/git/changes.ts';
import { Kept, renderBudget } from './rendering.ts';

/** What a commit's changed files take, about: a path may be 4,096 characters, and a change holds two. */
export const changesSize = (files: { path: string; oldPath: string }[]) =>
  files.reduce((n, f) => n + 160 + 2 * (f.path.length + f.oldPath.length), 0);

/**
 * The files each commit changed, by commit id, as rows or git worked them out: a new commit's page of
 * revisions then works out one commit's files, not twenty (a page by its head is new after every commit).
 */
export const keptChanges = new Kept<FileChange[]>((files) => 64 + changesSize(files), {
  entries: 20_000,
  bytes: 8 * 1024 * 1024,
});

/** `read` given the repository's cache, up to date and kept while `read` runs. */
export async function readingCache<T>(caches: ServingCaches, repo: GitRepository, read: (dir: string) => Promise<T>) {
  const { dir, release } = await caches.refreshForReading(repo);
  try {
    return await read(dir);
  } finally {
    release();
  }
}

/** What git's listing of one commit may read of its output. */
const MAX_COMMIT_LOG_BYTES = 1024 * 1024;

/** The files `commitId` changed against its first parent; null when git did not list them within its bounds or time. */
export async function commitChanges(
  caches: ServingCaches,
  repo: GitRepository,
  commitId: string,
): Promise<FileChange[] | null> {
  const kept = keptChanges.get(commitId);
  if (kept) return kept;
  const fromRows = await changesFromRows(repo, commitId);
  if (fromRows) return keptChanges.keep(commitId, fromRows);
  const read = await readingCache(caches, repo, (dir) =>
    readRevisions(dir, commitId, { skip: 0, limit: 1, maxBytes: MAX_COMMIT_LOG_BYTES, timeoutMs: renderBudget() }),
  ).catch((error) => {
    // Past the time budget the files are not known, as past the output's bound: not a failure of the request.
    if (error instanceof GitTimeout) return null;
    throw error;
  });
  if (!read) return null;
  const { revisions, filesOmitted } = read;
  const files = revisions[0]?.files;
  return filesOmitted || !files ? null : keptChanges.keep(commitId, files);
}
