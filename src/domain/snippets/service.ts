// Project snippets: create, update (file actions or deprecated content/file_name), delete. Every
// snippet is a git repository kept as rows; snippet_files indexes the files of its head. A write is one
// transaction: the commit's objects, the branch moved by compare-and-swap, the index and the snippet's row
// commit together or not at all.
import type { Store } from '../../storage/db/store.ts';
import type { Snippet, User, Visibility } from '../../storage/db/schema.ts';
import type { IndexedFile } from '../../storage/db/tables/snippets.ts';
import { ObjectWriter, objectId } from '../../storage/git/objects.ts';
import { snippetRepository } from '../git-repositories.ts';
import {
  insertNewSnippet,
  readSnippetState,
  type SnippetChange,
  type SnippetState,
  writeSnippetChange,
} from '../../storage/db/snippet-writes.ts';
import { type GitRepository, RefConflict } from '../../storage/git/repository.ts';
import { Failure, notFound, serviceError } from '../failure.ts';
import { isForeignKeyViolation } from '../../storage/db/database.ts';
import { can, isVisibilityRestricted, NO_ACCESS, type Viewer } from '../policy.ts';
import { findReadableProject, type ProjectContext } from '../projects.ts';
import { getSettings, type ApplicationSettings } from '../settings.ts';
import { nowIso } from '../tokens.ts';
import { SPAM_DISCARDED, type SpamChecker } from '../spam.ts';
import { applyActions, FileActionError, isValidAction, type FileAction } from './files.ts';
import { checkAttributes, MISSING_CONTENT } from './limits.ts';
import { byteOrder } from '../../order.ts';

export const INVALID_ACTIONS = 'Snippet actions have invalid data';
export const MULTIPLE_FILES = 'To update Snippets with multiple files, you must use the `files` parameter';

export interface SnippetDeps {
  /**
   * Where lookups before the transaction (settings) are made: a request's cached store will do (see
   * http/request.ts, usesReadCache). Writes are in its transaction, which is never cached.
   */
  store: Store;
  spam: SpamChecker;
}

/** A file of a snippet's head with its bytes. */
export interface SnippetFile extends IndexedFile {
  content: Buffer;
}

/** Every file of the snippet's head with its bytes, in git's order. */
export async function snippetFiles(store: Store, snippet: Pick<Snippet, 'id'>): Promise<SnippetFile[]> {
  const index = await store.snippets.fileIndex(snippet.id);
  if (!index.length) return [];
  return withContents(await snippetRepository(store, snippet), index);
}

async function withContents(repo: GitRepository, index: IndexedFile[]): Promise<SnippetFile[]> {
  const blobs = await repo.readBlobs(index.map((f) => f.blob_id));
  return index.map((f) => ({ ...f, content: blobs.get(f.blob_id)! }));
}

/**
 * The same finder for an update: the snippet with the index of its files and its repository, which the
 * update starts from (storage/db/snippet-writes.ts).
 */
export async function findVisibleSnippetState(
  store: Store,
  viewer: Viewer,
  ctx: ProjectContext,
  id: number,
): Promise<SnippetState | undefined> {
  const state = await readSnippetState(store, ctx.project.id, id);
  return state && can(viewer, 'read_snippet', { ...ctx, snippet: state.snippet }) ? state : undefined;
}

/**
 * Any snippet the viewer may see by its id, personal or in a project (GitLab's find_snippet for
 * /snippets/:id), with its project when it has one; undefined when there is none or it is hidden.
 */
export async function findVisibleSnippetById(
  store: Store,
  viewer: Viewer,
  id: number,
): Promise<{ snippet: Snippet; ctx: ProjectContext | null } | undefined> {
  const snippet = await store.snippets.findById(id);
  if (!snippet) return undefined;
  if (snippet.project_id === null)
    return can(viewer, 'read_snippet', { project: null, access: NO_ACCESS, snippet })
      ? { snippet, ctx: null }
      : undefined;
  const ctx = await findReadableProject(store, viewer, String(snippet.project_id)).catch((error) => {
    if (error instanceof Failure) return undefined;
    throw error;
  });
  if (!ctx || !can(viewer, 'read_project_snippets', ctx)) return undefined;
  return can(viewer, 'read_snippet', { ...ctx, snippet }) ? { snippet, ctx } : undefined;
}

/** The snippet with the index of its files and its repository, for an update; undefined when it is gone. */
export const readStateOf = (store: Store, snippet: Snippet) => readSnippetState(store, snippet.project_id, snippet.id);

/** GitLab's finder: a snippet of this project the viewer may see, else undefined. */
export async function findVisibleSnippet(
  store: Store,
  viewer: Viewer,
  ctx: ProjectContext,
  id: number,
): Promise<Snippet | undefined> {
  const snippet = await store.snippets.findInProject(ctx.project.id, id);
  return snippet && can(viewer, 'read_snippet', { ...ctx, snippet }) ? snippet : undefined;
}

function restrictedError(level: Visibility): Failure {
  return new Failure('forbidden_service', `Visibility level ${level} has been restricted by your GitLab administrator`);
}

function repositoryError(verb: 'creating' | 'updating', error: unknown, settings: ApplicationSettings): Failure {
  const base = `Repository Error ${verb} the snippet`;
  if (error instanceof FileActionError && error.kind === 'invalid_name')
    return serviceError(`${base} - Invalid file name`);
  if (error instanceof FileActionError && error.kind === 'too_many_files')
    return serviceError(`${base} - Snippet can't have more than ${settings.max_snippet_files} files`);
  return serviceError(base);
}

interface Meta {
  userAgent: string;
  ip: string;
}

async function rejectSpam(
  deps: SnippetDeps,
  author: User,
  meta: Meta,
  s: { title: string; description: string | null; files: Map<string, Buffer> },
) {
  const content = [...s.files.values()].map((b) => b.toString('utf8')).join('\n');
  const spam = await deps.spam.isSpam({
    title: s.title,
    description: s.description,
    content,
    userAgent: meta.userAgent,
    ip: meta.ip,
    author: { username: author.username, email: author.email },
  });
  if (spam) throw serviceError(SPAM_DISCARDED);
}

/** The objects of one commit with `files` on top of `parent`, and the index of its files. */
function buildCommit(parent: string | null, files: Map<string, Buffer>, author: User, message: string) {
  const writer = new ObjectWriter();
  const indexed: IndexedFile[] = [...files].map(([p, content]) => ({
    path: p,
    size: content.length,
    blob_id: writer.blob(content),
  }));
  const tree = writer.tree(indexed.map((f) => ({ path: f.path, blobId: f.blob_id })));
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
async function commitFiles(
  repo: GitRepository,
  parent: string | null,
  files: Map<string, Buffer>,
  author: User,
  message: string,
) {
  const { commit, indexed, objects } = buildCommit(parent, files, author, message);
  await repo.commitToBranch(repo.head, parent, commit, objects);
  return { commit, indexed, objects };
}

export interface CreateInput {
  title: string;
  description?: string | null;
  visibility?: Visibility;
  files: { file_path: string; content: string }[];
}

/** A new snippet in the project `ctx` names, or a personal one when `ctx` is null; the caller has authorized create_snippet. */
export async function createSnippet(
  deps: SnippetDeps,
  ctx: ProjectContext | null,
  author: User,
  input: CreateInput,
  meta: Meta,
): Promise<Snippet> {
  const { store } = deps;
  const settings = await getSettings(store);
  const visibility = input.visibility ?? settings.default_snippet_visibility;
  if (isVisibilityRestricted(author, visibility, settings.restricted_visibility_levels))
    throw restrictedError(visibility);
  const files = new Map<string, Buffer>();
  let duplicate = false;
  for (const f of input.files) {
    if (files.has(f.file_path)) duplicate = true;
    files.set(f.file_path, Buffer.from(f.content));
  }
  checkAttributes(
    {
      title: input.title,
      description: input.description ?? null,
      // An empty `files` array passes Grape, and leaves GitLab's Snippet model no content: a model error.
      firstContent: input.files.length ? Buffer.from(input.files[0].content) : MISSING_CONTENT,
      files,
    },
    settings,
  );
  let created: Map<string, Buffer>;
  try {
    if (duplicate) throw new FileActionError('conflict');
    created = applyActions(
      new Map(),
      input.files.map((f) => ({ action: 'create', file_path: f.file_path, content: f.content })),
      settings.max_snippet_files,
    );
  } catch (error) {
    throw repositoryError('creating', error, settings);
  }
  if (visibility === 'public')
    await rejectSpam(deps, author, meta, {
      title: input.title,
      description: input.description ?? null,
      files: created,
    });

  const branch = settings.default_branch_name;
  const { commit, indexed, objects } = buildCommit(null, created, author, 'Initial commit');
  const now = nowIso();
  const inserted = insertNewSnippet(store, {
    row: {
      project_id: ctx?.project.id ?? null,
      author_id: author.id,
      title: input.title,
      description: input.description ?? null,
      visibility,
      file_name: input.files[0].file_path,
      content: '',
      head_commit: commit,
      default_branch: branch,
      created_at: now,
      updated_at: now,
    },
    repository: { branch, commit, objects },
    files: indexed,
    userAgent: meta.userAgent.trim() ? { user_agent: meta.userAgent, ip_address: meta.ip, created_at: now } : null,
  });
  // The project deleted while the snippet was being created: as if it had been gone already.
  return inserted.catch((error) => {
    throw isForeignKeyViolation(error) && ctx ? notFound('Project') : error;
  });
}

export interface UpdateInput {
  title?: string;
  description?: string | null;
  visibility?: Visibility;
  files?: FileAction[];
  content?: string;
  file_name?: string;
}

/**
 * The deprecated content/file_name pair as one action on the single existing file
 * (docs/gitlab-compatibility.md#snippet-update).
 */
function legacyAction(current: string, input: UpdateInput): FileAction {
  const target = input.file_name !== undefined && input.file_name !== '' ? input.file_name : current;
  if (target !== current)
    return { action: 'move', previous_path: current, file_path: target, content: input.content ?? null };
  return { action: 'update', file_path: current, content: input.content ?? null };
}

/** A snippet as a write left it, with the paths of its head's files in git's order (what it presents). */
export interface WrittenSnippet {
  snippet: Snippet;
  paths: string[];
}

/**
 * How many times an update is computed anew when another writer changed the snippet first: each lost attempt
 * is another writer's win, so only a snippet written this often at once makes an update fail.
 */
const UPDATE_ATTEMPTS = 50;

/**
 * Applies the changes as one commit to the snippet as `found` (findVisibleSnippetState) has it; the caller has
 * authorized update_snippet.
 */
export async function updateSnippet(
  deps: SnippetDeps,
  viewer: User,
  found: SnippetState,
  input: UpdateInput,
  meta: Meta,
): Promise<WrittenSnippet> {
  const settings = await getSettings(deps.store);
  const { id, project_id } = found.snippet;
  let state: SnippetState | undefined = found;
  try {
    // Optimistic: computed from one read of the snippet and written only if its head is still the one read
    // (snippet-writes.ts), so an update takes no lock while it checks and builds its commit. When another
    // writer was first, it is computed again from the snippet as that writer left it.
    for (let attempt = 1; attempt <= UPDATE_ATTEMPTS; attempt++) {
      if (attempt > 1) state = await readSnippetState(deps.store, project_id, id);
      if (!state) throw notFound('Snippet');
      const change = await changeOf(deps, viewer, state, input, meta, settings);
      const written = await writeSnippetChange(deps.store, change);
      if (!written) continue;
      // Once committed, kept in this node's object cache: the next update reads these files back.
      if (change.commit) state.repository!.remember(change.commit.objects);
      const index = change.commit?.files ?? state.index;
      return { snippet: written, paths: index.map((f) => f.path).sort(byteOrder) };
    }
    throw new RefConflict(`refs/heads/${found.snippet.default_branch}`);
  } catch (error) {
    if (error instanceof FileActionError || error instanceof RefConflict)
      throw repositoryError('updating', error, settings);
    throw error;
  }
}

/** The update as a change of the snippet as `state` has it; throws the first check it fails. */
async function changeOf(
  deps: SnippetDeps,
  viewer: User,
  state: SnippetState,
  input: UpdateInput,
  meta: Meta,
  settings: ApplicationSettings,
): Promise<SnippetChange> {
  const { snippet, index } = state;
  const title = input.title ?? snippet.title;
  const description = input.description !== undefined ? input.description : snippet.description;
  const visibility = input.visibility ?? snippet.visibility;
  const spamRelevant =
    visibility === 'public' &&
    (snippet.visibility !== 'public' || title !== snippet.title || description !== snippet.description);
  const legacy = input.content !== undefined || input.file_name !== undefined;
  if (legacy && index.length > 1) throw serviceError(MULTIPLE_FILES);
  let actions: FileAction[] = input.files ?? [];
  if (legacy && index.length === 1) actions = [legacyAction(index[0].path, input)];
  if (legacy && input.content === undefined && actions[0]?.action === 'update') actions = [];
  if (!actions.every(isValidAction)) throw new Failure('unprocessable_service', INVALID_ACTIONS);
  if (
    input.visibility !== undefined &&
    input.visibility !== snippet.visibility &&
    isVisibilityRestricted(viewer, input.visibility, settings.restricted_visibility_levels)
  ) {
    throw restrictedError(input.visibility);
  }
  checkAttributes({ title, description, firstContent: null, files: null }, settings);

  // Only the fields the request gives, as Rails saves only changed attributes: two updates racing on
  // different fields then both stand.
  const row: SnippetChange['row'] = { updated_at: nowIso() };
  if (input.title !== undefined) row.title = title;
  if (input.description !== undefined) row.description = description;
  if (input.visibility !== undefined) row.visibility = visibility;
  if (!actions.length) {
    if (spamRelevant) await rejectSpam(deps, viewer, meta, { title, description, files: new Map() });
    return { from: state, row, commit: null };
  }
  if (!state.repository) throw new Error(`snippet ${snippet.id} has no repository`);
  const current = await withContents(state.repository, index);
  let next: Map<string, Buffer>;
  try {
    next = applyActions(new Map(current.map((f) => [f.path, f.content])), actions, settings.max_snippet_files);
  } catch (error) {
    throw repositoryError('updating', error, settings);
  }
  checkAttributes({ title, description, firstContent: null, files: next }, settings);
  if (spamRelevant) await rejectSpam(deps, viewer, meta, { title, description, files: next });
  const { commit, indexed, objects } = buildCommit(snippet.head_commit, next, viewer, 'Update snippet');
  const first = actions[0];
  return {
    from: state,
    row: { ...row, head_commit: commit, file_name: first.file_path || first.previous_path || snippet.file_name },
    commit: { id: commit, objects, files: indexed },
  };
}

/**
 * Makes the snippet's row and index of files say what its branch holds; call inside a transaction. For fsck
 * --repair and imports from the repositories of earlier versions, which could disagree after a crash.
 */
export async function reindexSnippet(tx: Store, snippetId: number): Promise<void> {
  const locked = await tx.snippets.lock(snippetId, tx.db.dialect);
  if (!locked) return;
  const repo = await snippetRepository(tx, locked);
  const head = await repo.readBranch(locked.default_branch);
  if (!head) return;
  const files = (await repo.listTree(head)).map((e) => ({ path: e.path, blob_id: e.id, size: e.size }));
  await tx.snippets.syncFiles(snippetId, await tx.snippets.fileIndex(snippetId), files);
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
  await tx.snippets.syncFiles(snippet.id, await tx.snippets.fileIndex(snippet.id), indexed);
  await tx.snippets.update(snippet.id, { head_commit: commit });
}

/** Deletes the snippet with its repository, in one transaction. The caller has authorized admin_snippet. */
export async function deleteSnippet(
  deps: SnippetDeps,
  snippet: Snippet,
  ifUnmodifiedSince: string | undefined,
): Promise<void> {
  await deps.store.transaction(async (tx) => {
    // The row locked first, as every writer of the snippet does (no deadlock with a push or an update),
    // and the precondition checked on it: an update committed since `snippet` was read counts.
    const locked = await tx.snippets.lock(snippet.id, deps.store.db.dialect);
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

/**
 * One file of a snippet at a branch, tag or commit, with its blob id: the head through the index of its
 * files, any other revision through its commit's tree. Answers the failure GitLab gives for a missing ref or file.
 */
export async function readSnippetFile(
  store: Store,
  snippet: Snippet,
  ref: string,
  filePath: string,
): Promise<{ content: Buffer; blobId: string }> {
  if (!snippet.head_commit) throw notFound('Snippet');
  const repo = await snippetRepository(store, snippet);
  if (ref === snippet.head_commit || ref === snippet.default_branch || ref === 'HEAD') {
    const file = (await store.snippets.fileIndex(snippet.id)).find((f) => f.path === filePath);
    const content = file && (await repo.readBlobs([file.blob_id])).get(file.blob_id);
    if (!file || !content) throw notFound('File');
    return { content, blobId: file.blob_id };
  }
  const commit = await repo.resolveCommit(ref);
  if (!commit) throw notFound('Reference');
  const content = await repo.readFile(commit, filePath);
  if (!content) throw notFound('File');
  return { content, blobId: objectId('blob', content) };
}

/** The first file (git order) of the current version, or the legacy content of a snippet without files. */
export async function firstSnippetFile(
  store: Store,
  snippet: Snippet,
): Promise<{ path: string | null; content: Buffer; blobId: string }> {
  const [first] = await store.snippets.fileIndex(snippet.id);
  if (!first) {
    const content = Buffer.from(snippet.content);
    return { path: null, content, blobId: objectId('blob', content) };
  }
  const content = (await (await snippetRepository(store, snippet)).readBlobs([first.blob_id])).get(first.blob_id)!;
  return { path: first.path, content, blobId: first.blob_id };
}

/**
 * A snippet as a page shows it: its project must be readable and its snippets feature open to the viewer,
 * and the snippet visible; anything hidden is "not found", never "forbidden".
 */
export async function findSnippetForPage(store: Store, viewer: Viewer, projectPath: string, id: number) {
  const ctx = await findReadableProject(store, viewer, projectPath);
  if (!can(viewer, 'read_project_snippets', ctx)) throw notFound('Project');
  const snippet = await findVisibleSnippet(store, viewer, ctx, id);
  if (!snippet) throw notFound('Snippet');
  return { ctx, snippet };
}

/**
 * A snippet as its page shows it: in the project at `projectPath` (findSnippetForPage), or a personal one
 * when `projectPath` is null. Hidden is "not found".
 */
export async function findSnippetOrPersonalForPage(
  store: Store,
  viewer: Viewer,
  projectPath: string | null,
  id: number,
): Promise<{ ctx: ProjectContext | null; snippet: Snippet }> {
  if (projectPath !== null) return findSnippetForPage(store, viewer, projectPath, id);
  const snippet = await store.snippets.findInProject(null, id);
  if (!snippet || !can(viewer, 'read_snippet', { project: null, access: NO_ACCESS, snippet }))
    throw notFound('Snippet');
  return { ctx: null, snippet };
}

/** Whether anyone, signed in or not, may read this snippet (public caching, embedding). */
export function isReadableByAnyone(ctx: ProjectContext | null, snippet: Snippet): boolean {
  if (ctx === null) return can(null, 'read_snippet', { project: null, access: NO_ACCESS, snippet });
  // Asked as an anonymous visitor with no membership, whatever the current viewer's access is.
  const anonymous = { project: ctx.project, access: NO_ACCESS };
  return (
    can(null, 'read_project', anonymous) &&
    can(null, 'read_project_snippets', anonymous) &&
    can(null, 'read_snippet', { ...anonymous, snippet })
  );
}
