// Deleting a snippet with its repository, in one transaction.
import type { Snippet } from '../../storage/db/schema.ts';
import { checkUnmodifiedSince, notFound } from '../failure.ts';
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
    checkUnmodifiedSince(Date.parse(locked.updated_at), ifUnmodifiedSince);
    await tx.snippets.delete(snippet.id);
    await tx.git.delete('snippet', [snippet.id]);
  });
}
