// Deleting a snippet with its repository, in one transaction.
import type { Snippet } from '../../storage/db/schema.ts';
import { Failure, notFound } from '../failure.ts';
import type { SnippetDeps } from './commits.ts';

export async function deleteSnippet(
  deps: SnippetDeps,
  snippet: Snippet,
  ifUnmodifiedSince: string | undefined,
): Promise<void> {
  await deps.store.transaction(async (tx) => {
    // The row locked first, as every writer of the snippet does (no deadlock with a push or an update),
    // and the precondition checked on it: an update committed since `snippet` was read counts.
    const locked = await tx.snippets.lock(snippet.id);
    if (!locked) throw notFound('Snippet'); // deleted meanwhile
    if (ifUnmodifiedSince !== undefined) {
      const since = Date.parse(ifUnmodifiedSince);
      // HTTP dates have whole seconds; compare at that precision.
      if (!Number.isNaN(since) && Math.floor(Date.parse(locked.updated_at) / 1000) > Math.floor(since / 1000))
        throw new Failure('precondition_failed');
    }
    await tx.snippets.delete(snippet.id);
    await tx.git.delete('snippet', [snippet.id]);
  });
}
