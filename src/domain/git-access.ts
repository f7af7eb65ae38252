// Who may clone and push which repository over HTTP, with the answers git clients get: anonymous callers
// are challenged for credentials (so git asks for them), signed-in callers get GitLab's sentences. And
// whether a push is taken: its objects, its ref moves and what they change (a snippet's files, a project's
// default branch) commit in one transaction before git moves anything; a large push's objects a batch at a
// time before it.
import type { Store } from '../storage/db/store.ts';
import type { User } from '../storage/db/schema.ts';
import type { Scope } from './access.ts';
import { type GitRepository, RefConflict, RefNameClash, unlessTooLarge } from '../storage/git/repository.ts';
import { MAX_COMMIT_BYTES, MAX_TREE_BYTES } from './project-files.ts';
import { discardUploads } from '../storage/git/object-parts.ts';
import { nameNotUtf8 } from '../storage/git/objects.ts';
import type { ReceivedObject, ReceivedPush, RefUpdate } from '../storage/git/push-hooks.ts';
import { Failure } from './failure.ts';
import { findReadableProject, type ProjectContext } from './projects.ts';
import { ensureProjectRepository, snippetRepository } from './git-repositories.ts';
import { isValidGitPath, isValidRefName } from './paths.ts';
import { accessDeniedReason, can, NO_ACCESS } from './policy.ts';
import { findVisiblePersonalSnippet, findVisibleSnippet } from './snippets/reads.ts';
import { humanSize } from './snippets/limits.ts';
import { type ApplicationSettings, getSettings, indexedFileMaxBytes, MiB } from './settings.ts';
import { nowIso } from './tokens.ts';
import { parseRowId } from './ids.ts';

const NOT_FOUND_TEXT = "The project you were looking for could not be found or you don't have permission to view it.";
const PUSH_DENIED_TEXT = 'You are not allowed to push code to this project.';
const DOWNLOAD_DENIED_TEXT = 'You are not allowed to download code from this project.';
const SNIPPET_PUSH_DENIED_TEXT = 'You are not allowed to update this snippet.';
// GitLab's abilities_for_scopes: read_api is read-only access, download_code included (Gitlab::Auth).
const READ_SCOPES: Scope[] = ['api', 'read_api', 'read_repository', 'write_repository'];
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

/** A project's repository, or a snippet's (with its project; none for a personal snippet). */
export type GitTarget =
  | { repository: GitRepository; ctx: ProjectContext; snippetId: null }
  | { repository: GitRepository; ctx: ProjectContext | null; snippetId: number };

/**
 * The repository at `repoPath` (`group/project`, `group/project/snippets/7`, or `snippets/7` for a personal
 * snippet), if the caller may use it.
 */
export async function resolveGitTarget(
  store: Store,
  user: User | null,
  repoPath: string,
  write: boolean,
): Promise<GitTarget> {
  // Hidden things are "not found" to a signed-in caller and a credentials challenge to an anonymous one.
  const hidden = () => (user ? new Failure('not_found_git', NOT_FOUND_TEXT) : challenge());
  const refused = (text: string) => (user ? new Failure('forbidden_git', text) : challenge());
  const personal = /^snippets\/(\d+)$/.exec(repoPath);
  if (personal) {
    const snippet = await findVisiblePersonalSnippet(store, user, parseRowId(personal[1])!);
    if (!snippet) throw hidden();
    if (write && !can(user, 'update_snippet', { project: null, access: NO_ACCESS, snippet }))
      throw refused(SNIPPET_PUSH_DENIED_TEXT);
    return { repository: await snippetRepository(store, snippet), ctx: null, snippetId: snippet.id };
  }
  const snippetMatch = /^(.+)\/snippets\/(\d+)$/.exec(repoPath);
  const ctx = await findReadableProject(store, user, snippetMatch ? snippetMatch[1] : repoPath).catch((error) => {
    throw error instanceof Failure ? hidden() : error;
  });
  if (snippetMatch) {
    if (!can(user, 'read_project_snippets', ctx)) throw hidden();
    const snippet = await findVisibleSnippet(store, user, ctx, parseRowId(snippetMatch[2])!);
    if (!snippet) throw hidden();
    if (write && !can(user, 'update_snippet', { ...ctx, snippet })) throw refused(SNIPPET_PUSH_DENIED_TEXT);
    return { repository: await snippetRepository(store, snippet), ctx, snippetId: snippet.id };
  }
  // GitLab's GitAccess: a project the caller sees, then download_code for a fetch or push_code for a push, each
  // refused with its sentence (a guest of a private project, a repository closed to the caller, a reporter's push).
  if (write ? !can(user, 'push_code', ctx) : !can(user, 'download_code', ctx))
    throw refused(write ? PUSH_DENIED_TEXT : DOWNLOAD_DENIED_TEXT);
  return { repository: await ensureProjectRepository(store, ctx.project), ctx, snippetId: null };
}

/**
 * The largest pack a push may send, for git's receive.maxInputSize: `receive_max_input_size` MiB, as GitLab
 * hands it to git; null when there is no limit (null or 0).
 */
export async function maxPushPackBytes(store: Store): Promise<number | null> {
  const limit = (await getSettings(store)).receive_max_input_size;
  return limit ? limit * MiB : null;
}

/**
 * Takes a push or refuses it: null when its objects and ref moves are committed, else the sentence for the
 * client. A ref that moved since the push began (another node, another push) refuses it whole.
 */
export async function acceptPush(
  store: Store,
  target: GitTarget,
  updates: RefUpdate[],
  received: ReceivedPush,
): Promise<string | null> {
  const settings = await getSettings(store);
  // Sizes first, as git listed them: no body of an object over a limit is ever read.
  const oversized = oversizedObjectProblem(target, received.objects, settings);
  if (oversized) return `snippetd: ${oversized}`;
  const proposed = target.repository.withPending(received);
  const problem =
    (target.snippetId === null
      ? await projectPushProblem(proposed, target, updates)
      : await snippetPushProblem(proposed, updates, settings.max_snippet_files, settings.snippet_size_limit)) ??
    (await namesProblem(received));
  if (problem) return `snippetd: ${problem}`;
  const files =
    target.snippetId === null
      ? []
      : (await proposed.listTree(updates[0].new!)).map((e) => ({ path: e.path, blob_id: e.id, size: e.size }));
  try {
    // Large bodies first, a part a statement (storage/git/object-parts.ts). Then a push of a few objects stores
    // them in the transaction that moves its refs, so that refused it leaves nothing; a larger one a batch a
    // transaction before it (in that one, 200,000 objects held every other write 9 s), and refused by a ref that
    // moved meanwhile it leaves them dangling (docs/architecture.md).
    await target.repository.checkRefMoves(updates);
    await received.uploadLargeBodies(store.kysely);
    const storedBefore = received.objects.length > OBJECTS_STORED_WITH_REFS;
    if (storedBefore)
      await received.forEachBatch((batch) =>
        store.transaction((tx) => target.repository.on(tx.kysely).storeDeflatedBatch(batch)),
      );
    await store.transaction(async (tx) => {
      const locked = target.snippetId === null ? null : await tx.snippets.lock(target.snippetId);
      if (target.snippetId !== null && !locked) throw new RefConflict('the snippet');
      // A project's push takes the project first, as its delete does: one deleted meanwhile refuses it.
      if (target.snippetId === null && !(await tx.projects.lock(target.ctx.project.id, 'share')))
        throw new RefConflict('the project');
      const repo = target.repository.on(tx.kysely);
      if (!storedBefore) await received.forEachBatch((batch) => repo.storeDeflatedBatch(batch));
      await repo.moveRefs(updates);
      if (locked) {
        await tx.snippets.syncFiles(
          locked.id,
          await tx.snippets.fileIndex(locked.id),
          files,
          indexedFileMaxBytes(settings),
        );
        await tx.snippets.update(locked.id, {
          head_commit: updates[0].new,
          updated_at: nowIso(),
          file_name: files[0].path,
        });
      } else if (target.snippetId === null) await chooseDefaultBranch(tx, repo, target.ctx);
    });
  } catch (error) {
    if (error instanceof RefConflict) return 'snippetd: the repository changed during the push; fetch and push again';
    if (error instanceof RefNameClash) return `snippetd: ${error.message}`;
    throw error;
  } finally {
    // Those no stored object claimed (a refused or failed push); what cannot go now goes at the next start.
    await discardUploads(store.kysely, received.uploadIds).catch(() => {});
  }
  return null;
}

/**
 * An object over the limits: in a snippet, a file over `snippet_size_limit` (what the API allows all its
 * content); anywhere, an object over `max_file_size` MiB (GitLab's push rule of that name, here for the
 * instance; it bounds what the server holds of one object), and a commit, tag or tree over what every read
 * parses whole (MAX_COMMIT_BYTES, MAX_TREE_BYTES).
 */
function oversizedObjectProblem(
  target: GitTarget,
  objects: readonly ReceivedObject[],
  settings: ApplicationSettings,
): string | null {
  const snippetLimit = settings.snippet_size_limit;
  const tooLong =
    target.snippetId === null ? undefined : objects.find((o) => o.type === 'blob' && o.size > snippetLimit);
  if (tooLong)
    return `Content is too long (${humanSize(tooLong.size)}). The maximum size is ${humanSize(snippetLimit)}.`;
  const structure = objects.find((o) =>
    o.type === 'tree' ? o.size > MAX_TREE_BYTES : o.type !== 'blob' && o.size > MAX_COMMIT_BYTES,
  );
  if (structure) {
    const what =
      structure.type === 'tree'
        ? `Tree ${JSON.stringify(structure.path || structure.id)}`
        : `The ${structure.type} ${structure.id}`;
    const limit = structure.type === 'tree' ? MAX_TREE_BYTES : MAX_COMMIT_BYTES;
    return `${what} is larger than the allowed size of ${humanSize(limit)}.`;
  }
  const fileLimit = settings.max_file_size;
  const tooLarge = fileLimit > 0 ? objects.find((o) => o.size > fileLimit * MiB) : undefined;
  if (tooLarge)
    return `File ${JSON.stringify(tooLarge.path || tooLarge.id)} is larger than the allowed size of ${fileLimit} MB. Use Git LFS to manage this file.`;
  return null;
}

async function projectPushProblem(
  proposed: GitRepository,
  target: GitTarget & { snippetId: null },
  updates: RefUpdate[],
): Promise<string | null> {
  for (const u of updates) {
    if (!/^refs\/(heads|tags)\//.test(u.ref)) return `only branches and tags can be pushed, not ${u.ref}`;
    // git refuses such a name only after this hook: refused here, the rows never hold a ref git has not.
    if (!isValidRefName(u.ref)) return `not a valid ref name: ${JSON.stringify(u.ref)}`;
    if (u.new === null && u.ref === `refs/heads/${target.ctx.project.default_branch}`)
      return 'The default branch of a project cannot be deleted.';
    // git refuses a branch on anything but a commit only after this hook: refused here, the rows never move.
    if (u.new !== null && u.ref.startsWith('refs/heads/') && (await proposed.resolveCommit(u.new)) !== u.new)
      return `a branch must point at a commit: ${u.ref}`;
  }
  return null;
}

/** Ref moves of one push between two turns of the event loop. */

/** The most objects a push stores in the transaction that moves its refs (a few tens of milliseconds of it). */
const OBJECTS_STORED_WITH_REFS = 1_000;

/** Trees whose bodies are held at once while a push's names are checked. */
const TREES_READ_AT_ONCE = 500;

/**
 * Every name a push brings is in one of its new trees. One that is not UTF-8 could not be named through the
 * API, which reads it with U+FFFD: its next write would store the file renamed, and two such names can read
 * alike.
 */
async function namesProblem(received: ReceivedPush): Promise<string | null> {
  const trees = received.objects.filter((o) => o.type === 'tree').map((o) => o.id);
  for (let at = 0; at < trees.length; at += TREES_READ_AT_ONCE) {
    for (const tree of (await received.read(trees.slice(at, at + TREES_READ_AT_ONCE))).values()) {
      const name = nameNotUtf8(tree.body);
      if (name !== null) return `file names must be valid UTF-8: ${JSON.stringify(name)}`;
    }
  }
  return null;
}

/** A push must keep the snippet what the API keeps it: one branch, 1 to max files, plain files, safe paths. */
async function snippetPushProblem(
  proposed: GitRepository,
  updates: RefUpdate[],
  maxFiles: number,
  sizeLimit: number,
): Promise<string | null> {
  for (const u of updates) {
    if (u.ref !== `refs/heads/${proposed.head}`)
      return `snippets have one branch: only refs/heads/${proposed.head} can be pushed`;
    if (u.new === null) return 'the branch of a snippet cannot be deleted';
    if ((await proposed.resolveCommit(u.new)) !== u.new) return 'snippets hold commits only';
    const entries = await proposed.listTree(u.new, { trees: false }).catch(unlessTooLarge(null));
    if (!entries) return `Snippet can't have more than ${maxFiles} files`;
    if (entries.length === 0) return 'a snippet needs at least one file';
    if (entries.length > maxFiles) return `Snippet can't have more than ${maxFiles} files`;
    if (entries.some((e) => e.type !== 'blob' || !/^100(644|755)$/.test(e.mode) || /[\n\r\\]/.test(e.path)))
      return 'snippet files must be plain files with paths without newlines';
    if (entries.some((e) => !isValidGitPath(e.path))) return 'Invalid file name';
    const total = entries.reduce((sum, e) => sum + e.size, 0);
    if (total > sizeLimit)
      return `Content is too long (${humanSize(total)}). The maximum size is ${humanSize(sizeLimit)}.`;
  }
  return null;
}

/** The first push to a project without a branch that exists decides its default branch (main if pushed). */
async function chooseDefaultBranch(store: Store, repo: GitRepository, ctx: ProjectContext): Promise<void> {
  const current = ctx.project.default_branch;
  // Every ref is read only when the default branch is not there (a push of thousands of tags moves refs often).
  const branches = current && (await repo.readBranch(current)) ? new Map([[current, '']]) : await repo.branches();
  if (branches.size && (!current || !branches.has(current))) {
    const chosen = branches.has('main') ? 'main' : [...branches.keys()].sort()[0];
    await repo.setHead(chosen);
    await store.projects.update(ctx.project.id, { default_branch: chosen });
  } else if (current && repo.head !== current) await repo.setHead(current);
}
