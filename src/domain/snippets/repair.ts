// Making a snippet's rows agree with its repository again: fsck --repair and imports from earlier versions.
import type { Store } from '../../storage/db/store.ts';
import type { Snippet } from '../../storage/db/schema.ts';
import { snippetRepository } from '../git-repositories.ts';
import { commitFiles } from './commits.ts';
import { getSettings, indexedFileMaxBytes } from '../settings.ts';

/**
 * Makes the snippet's row and index of files say what its branch holds; call inside a transaction. For fsck
 * --repair and imports from the repositories of earlier versions, which could disagree after a crash; with
 * `allTexts`, every file's text in the search index is written again too.
 */
export async function reindexSnippet(tx: Store, snippetId: number, opts: { allTexts?: boolean } = {}): Promise<void> {
  const locked = await tx.snippets.lock(snippetId);
  if (!locked) return;
  const repo = await snippetRepository(tx, locked);
  const head = await repo.readBranch(locked.default_branch);
  if (!head) return;
  const files = (await repo.listTree(head)).map((e) => ({ path: e.path, blob_id: e.id, size: e.size }));
  const indexed = await tx.snippets.fileIndex(snippetId);
  const maxBytes = indexedFileMaxBytes(await getSettings(tx));
  // A file's text row without its index row (a damaged database) would clash with the one written again for it:
  // it goes, and comes back from the file's blob, or, where that blob cannot be read, from the text it held,
  // which may be the only copy of the file left.
  const known = new Set(indexed.map((f) => f.path));
  const orphans = files.filter((f) => !known.has(f.path));
  const bodies = new Map<string, Buffer>();
  if (orphans.length) {
    const held = await tx.snippets.texts.of(
      snippetId,
      orphans.map((f) => f.path),
    );
    for (const f of orphans) {
      const text = held.get(f.path);
      const readable = await repo.readBlobs([f.blob_id]).then(
        (blobs) => blobs.has(f.blob_id),
        () => false,
      );
      if (text && !readable) bodies.set(f.blob_id, Buffer.from(text));
    }
    await tx.snippets.texts.sync(
      snippetId,
      orphans.map((f) => f.path),
      [],
      maxBytes,
    );
  }
  await tx.snippets.syncFiles(snippetId, indexed, files, maxBytes, bodies);
  // An import's text rows were written before its repository was there (migration 0010), empty.
  if (opts.allTexts)
    await tx.snippets.texts.sync(
      snippetId,
      files.map((f) => f.path),
      files,
      maxBytes,
    );
  if (head !== locked.head_commit)
    await tx.snippets.update(snippetId, { head_commit: head, file_name: files[0]?.path ?? locked.file_name });
}

/**
 * Gives a snippet without a repository one commit of `files`, by its author; call inside a transaction.
 * For snippets of an earlier version whose repository was missing from the disk (legacy-repositories.ts).
 */
export async function recreateSnippetRepository(tx: Store, snippet: Snippet, files: Map<string, Buffer>) {
  const author = (await tx.users.findById(snippet.author_id))!;
  const repo = await tx.git.ensure('snippet', snippet.id, snippet.default_branch);
  const { commit, indexed } = await commitFiles(repo, null, files, author, 'Recovered from the database');
  await tx.snippets.syncFiles(
    snippet.id,
    await tx.snippets.fileIndex(snippet.id),
    indexed,
    indexedFileMaxBytes(await getSettings(tx)),
  );
  await tx.snippets.update(snippet.id, { head_commit: commit });
}

/** Deletes the snippet with its repository, in one transaction. The caller has authorized admin_snippet. */
