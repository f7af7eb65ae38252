// Who may clone and push which repository over HTTP, with the answers git clients get: anonymous callers
// are challenged for credentials (so git asks for them), signed-in callers get GitLab's sentences. And
// what a successful push changes in the database.
import type { Store } from '../storage/db/store.ts';
import type { User } from '../storage/db/schema.ts';
import type { Scope } from './access.ts';
import type { GitRepository } from '../storage/git/repository.ts';
import { Failure } from './failure.ts';
import { findReadableProject, type ProjectContext } from './projects.ts';
import {
  ensureProjectRepository,
  projectRepositoryPath,
  snippetRepository,
  snippetRepositoryPath,
} from './git-repositories.ts';
import { accessDeniedReason, can } from './policy.ts';
import { findVisibleSnippet, mirrorRepositoryHead } from './snippets/service.ts';
import { getSettings } from './settings.ts';

const NOT_FOUND_TEXT = "The project you were looking for could not be found or you don't have permission to view it.";
const PUSH_DENIED_TEXT = 'You are not allowed to push code to this project.';
const SNIPPET_PUSH_DENIED_TEXT = 'You are not allowed to update this snippet.';
const READ_SCOPES: Scope[] = ['api', 'read_repository', 'write_repository'];
const WRITE_SCOPES: Scope[] = ['api', 'write_repository'];

export const challenge = () => new Failure('unauthorized_git');

/** A signed-in git caller whose account or token may not do this: GitLab's sentence, as a 403. */
export function checkGitCaller(user: User, scopes: Scope[], write: boolean, externalUrl: string): void {
  const denied = accessDeniedReason(user, externalUrl);
  if (denied) throw new Failure('forbidden_git', denied);
  if (!(write ? WRITE_SCOPES : READ_SCOPES).some((s) => scopes.includes(s))) {
    const scope = write ? 'write_repository' : 'read_repository';
    throw new Failure('forbidden_git', `Your token does not have the ${scope} scope.`);
  }
}

export interface GitTarget {
  /** The repository's path below the repositories root, e.g. projects/5.git. */
  repositoryPath: string;
  ctx: ProjectContext;
  /** For a snippet repository: the pre-receive hook's rules (its branch and file limit). */
  snippet: { id: number; branch: string; maxFiles: number } | null;
}

/** The repository at `repoPath` (`group/project` or `group/project/snippets/7`), if the caller may use it. */
export async function resolveGitTarget(
  store: Store,
  dataDir: string,
  user: User | null,
  repoPath: string,
  write: boolean,
): Promise<GitTarget> {
  const snippetMatch = /^(.+)\/snippets\/(\d+)$/.exec(repoPath);
  // Hidden things are "not found" to a signed-in caller and a credentials challenge to an anonymous one.
  const hidden = () => (user ? new Failure('not_found_git', NOT_FOUND_TEXT) : challenge());
  const refused = (text: string) => (user ? new Failure('forbidden_git', text) : challenge());
  const ctx = await findReadableProject(store, user, snippetMatch ? snippetMatch[1] : repoPath).catch((error) => {
    throw error instanceof Failure ? hidden() : error;
  });
  if (snippetMatch) {
    if (!can(user, 'read_project_snippets', ctx)) throw hidden();
    const snippet = await findVisibleSnippet(store, user, ctx, Number(snippetMatch[2]));
    if (!snippet) throw hidden();
    if (write && !can(user, 'update_snippet', { ...ctx, snippet })) throw refused(SNIPPET_PUSH_DENIED_TEXT);
    const { max_snippet_files } = await getSettings(store);
    return {
      repositoryPath: snippetRepositoryPath(snippet.id),
      ctx,
      snippet: { id: snippet.id, branch: snippet.default_branch, maxFiles: max_snippet_files },
    };
  }
  if (!can(user, 'download_code', ctx)) throw hidden();
  if (write && !can(user, 'push_code', ctx)) throw refused(PUSH_DENIED_TEXT);
  ensureProjectRepository(dataDir, ctx.project);
  return { repositoryPath: projectRepositoryPath(ctx.project.id), ctx, snippet: null };
}

/**
 * After git accepted a push: a snippet's database mirror follows its new head; the first push to an
 * empty project repository decides its default branch when the project has none that exists.
 */
export async function afterPush(store: Store, dataDir: string, target: GitTarget): Promise<void> {
  if (target.snippet) {
    const { id } = target.snippet;
    const repo = snippetRepository(dataDir, id);
    await store.transaction(async (tx) => {
      const locked = await tx.snippets.lock(id, store.db.dialect);
      if (locked) await mirrorRepositoryHead(tx, repo, locked);
    });
    return;
  }
  const repo: GitRepository = ensureProjectRepository(dataDir, target.ctx.project);
  const branches = await repo.branches();
  const current = target.ctx.project.default_branch;
  if (branches.size && (!current || !branches.has(current))) {
    const chosen = branches.has('main') ? 'main' : [...branches.keys()].sort()[0];
    repo.setHead(chosen);
    await store.projects.update(target.ctx.project.id, { default_branch: chosen });
  }
}
