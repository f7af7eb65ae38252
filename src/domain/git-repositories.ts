// Which git repository belongs to what: one per project and one per snippet, kept as rows in the database
// (storage/git/repository.ts), found by their owner so that renames never touch them.
import type { Project, Snippet } from '../storage/db/schema.ts';
import type { Store } from '../storage/db/store.ts';
import type { RepositoryKind } from '../storage/db/tables/git.ts';
import type { GitRepository } from '../storage/git/repository.ts';
import { notFound } from './failure.ts';

/** A project's repository for reading; null while nothing was ever written to it (an empty repository). */
export const projectRepository = (store: Store, project: Pick<Project, 'id'>) => store.git.find('project', project.id);

/** A project's repository for writing: created empty, HEAD at the project's default branch, when it has none. */
export const ensureProjectRepository = (store: Store, project: Pick<Project, 'id' | 'default_branch'>) =>
  store.git.ensure('project', project.id, project.default_branch ?? 'main');

/**
 * A snippet's repository: created with the snippet, in the same transaction. 404 Snippet when the snippet was
 * deleted since the caller found it.
 */
export async function snippetRepository(store: Store, snippet: Pick<Snippet, 'id'>): Promise<GitRepository> {
  const repo = await store.git.find('snippet', snippet.id);
  if (repo) return repo;
  // No repository says nothing yet: the snippet's row (not cached) tells a delete from damage.
  if (!(await store.snippets.findById(snippet.id))) throw notFound('Snippet');
  throw new Error(`snippet ${snippet.id} has no repository`);
}

/**
 * For what a read finds missing from a repository it found a moment before (a commit, a tree, a blob, a large
 * body's part): an owner's row and its repository are deleted in one transaction, which may commit between
 * two of the read's statements. Then the repository's row is gone too and the answer is 404 Snippet or 404
 * Project; else its data is damaged (`problem`). The repository's row is asked, not the owner's: a project's
 * row may be a copy cached before the delete (read-cache.ts).
 */
export async function deletedMeanwhile(
  store: Store,
  owner: { kind: RepositoryKind; id: number },
  problem: Error,
): Promise<never> {
  if (!(await store.git.find(owner.kind, owner.id))) throw notFound(owner.kind === 'snippet' ? 'Snippet' : 'Project');
  throw problem;
}
