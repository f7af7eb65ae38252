// What every snippet write shares: its dependencies, its refusals in GitLab's words, the spam check, and the
// commit of a snippet's files built in-process.
import type { Store } from '../../storage/db/store.ts';
import type { User, Visibility } from '../../storage/db/schema.ts';
import type { IndexedFile } from '../../storage/db/tables/snippets.ts';
import { ObjectWriter, prepareBlobs } from '../../storage/git/objects.ts';
import type { GitRepository } from '../../storage/git/repository.ts';
import { Failure, serviceError } from '../failure.ts';
import type { ApplicationSettings } from '../settings.ts';
import { SPAM_DISCARDED, type SpamChecker } from '../spam.ts';
import { FileActionError } from './files.ts';

export interface SnippetDeps {
  /**
   * Where lookups before the transaction (settings) are made: a request's cached store will do (see
   * http/request.ts, usesReadCache). Writes are in its transaction, which is never cached.
   */
  store: Store;
  spam: SpamChecker;
  /** Told of each commit an update stored, once committed (history.ts#RevisionPreparer). */
  committed?: (snippetId: number, commit: string) => void;
}

export function restrictedError(level: Visibility): Failure {
  const message = `Visibility level ${level} has been restricted by your GitLab administrator`;
  return new Failure('forbidden_service', message, { visibility: [message] });
}

export function repositoryError(verb: 'creating' | 'updating', error: unknown, settings: ApplicationSettings): Failure {
  const base = `Repository Error ${verb} the snippet`;
  const message =
    error instanceof FileActionError && error.kind === 'invalid_name'
      ? `${base} - Invalid file name`
      : error instanceof FileActionError && error.kind === 'too_many_files'
        ? `${base} - Snippet can't have more than ${settings.max_snippet_files} files`
        : error instanceof FileActionError && error.kind === 'no_files'
          ? `${base} - A snippet needs at least one file`
          : base;
  return new Failure('bad_request_service', message, { files: [message] });
}

export interface Meta {
  userAgent: string;
  ip: string;
}

export async function rejectSpam(
  deps: SnippetDeps,
  author: User,
  meta: Meta,
  s: { title: string; description: string | null; files: Map<string, Buffer> },
) {
  const spam = await deps.spam.isSpam({
    title: s.title,
    description: s.description,
    files: [...s.files.values()],
    userAgent: meta.userAgent,
    ip: meta.ip,
    author: { username: author.username, email: author.email },
  });
  if (spam) throw serviceError(SPAM_DISCARDED);
}

/** The objects of one commit with `files` (each 100644 unless `modes` says) on top of `parent`, and their index. */
export async function buildCommit(
  parent: string | null,
  files: Map<string, Buffer>,
  author: User,
  message: string,
  modes: ReadonlyMap<string, string> = new Map(),
) {
  const writer = new ObjectWriter();
  const prepared = await prepareBlobs([...files.values()]);
  const indexed: IndexedFile[] = [...files].map(([p, content], i) => ({
    path: p,
    size: content.length,
    blob_id: writer.blob(content, prepared[i]),
  }));
  const tree = await writer.tree(indexed.map((f) => ({ path: f.path, blobId: f.blob_id, mode: modes.get(f.path) })));
  const commit = writer.commit({
    tree,
    parent,
    author: { name: author.name, email: author.email, time: Math.floor(Date.now() / 1000) },
    message,
  });
  return { commit, indexed, objects: writer.objects() };
}

/**
 * Stores one commit with `files` on top of `parent` and moves the branch to it; call inside the transaction
 * that writes the snippet's rows. Answers the commit and the new index of the head's files.
 */
export async function commitFiles(
  repo: GitRepository,
  parent: string | null,
  files: Map<string, Buffer>,
  author: User,
  message: string,
) {
  const { commit, indexed, objects } = await buildCommit(parent, files, author, message);
  await repo.commitToBranch(repo.head, parent, commit, objects);
  return { commit, indexed, objects };
}
