// GitLab's Repository Files API over a project's repository (rows: storage/git/repository.ts): one commit
// per write, its objects and the branch's compare-and-swap in one transaction.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Store } from '../storage/db/store.ts';
import {
  deflateOffLoop,
  type GitObject,
  ObjectWriter,
  type PreparedBlob,
  prepareBlob,
  prepareBlobs,
  parseTag,
} from '../storage/git/objects.ts';
import { withUploads } from '../storage/git/object-parts.ts';
import { ArchiveFailed, type ArchiveFormat, readAndRemove, writeGitArchive } from '../storage/git/archive.ts';
import { type PathEntry, type PathState, TreePath } from '../storage/git/tree-path.ts';
import { MAX_DIRECTORIES, TooManyDirectories, TreeEdit } from '../storage/git/tree-edit.ts';
import {
  type CommitInfo,
  type GitRepository,
  type LargeBlob,
  MissingObject,
  RefConflict,
  RefNameClash,
  type TreeEntry,
  TreeTooLarge,
} from '../storage/git/repository.ts';
import { checkUnmodifiedSince, conflict, Failure, notFound } from './failure.ts';
import { isValidBranchName, isValidGitPath, MAX_BRANCH_NAME } from './paths.ts';
import type { ProjectContext } from './projects.ts';
import { deletedMeanwhile, ensureProjectRepository, projectRepository } from './git-repositories.ts';
import type { PageOf, PageWindow } from '../storage/db/page.ts';
import type { ServingCaches } from '../storage/git/serving-cache.ts';
import {
  branchesByCommitTime,
  branchesMergedInto,
  commitsBetween,
  EMPTY_TREE,
  topoOrderPage,
  mergeBase,
  type FileChange,
  type FilePatch,
  GitTimeout,
  readCommitDiff,
} from '../storage/git/history.ts';
import { trimOf } from '../text-scan.ts';
import { loopSlice } from '../loop-slice.ts';
import { commitChanges, readingCache } from './commit-changes.ts';
import { renderBudget, sharedRenderBudget } from './rendering.ts';
import { DIFF_LIMITS, diffOf, rangeDiff, type RevisionDiff } from './snippets/history.ts';
import { type MessageBudget, messageBudget } from './commit-messages.ts';

export const FILE_EXISTS = 'A file with this name already exists';
export const FILE_MISSING = "A file with this name doesn't exist";
export const DIRECTORY_EXISTS = 'A directory with this name already exists';
export const NOT_ON_BRANCH = 'You can only create or edit files when you are on a branch';

const badRequest = (message: string) => new Failure('bad_request_message', message);

/**
 * The largest commit (or tag) and tree a repository takes, pushed or written here. Every read of a path parses
 * its commit and trees whole, on the event loop: a commit of 50 MB of header lines took a second to parse and a
 * list of a hundred such messages ran the process out of memory; a flat tree of 50 MB took 1.4 s and 450 MB.
 * A tree of 2 MiB holds 50,000 entries of 20-character names (listings stop there too).
 */
export const MAX_COMMIT_BYTES = 1024 * 1024;
export const MAX_TREE_BYTES = 2 * 1024 * 1024;

export interface FileWrite {
  action: 'create' | 'update' | 'delete';
  filePath: string;
  content?: Buffer;
  branch: string;
  startBranch?: string;
  message: string;
  author: { name: string; email: string };
  executeFilemode?: boolean;
  /** The last commit the writer knew to change the file (GitLab's last_commit_id): an update of a file changed
   * since is refused. */
  lastCommitId?: string;
}

/** A tree over the listing's limit: 400 (GitLab lists it however long that takes). */
function tooLarge(error: unknown): never {
  if (error instanceof TreeTooLarge) throw badRequest(`Tree is too large: more than ${error.limit} entries`);
  throw error;
}

/** Applies one file change as a commit on `branch`; returns the new commit id. */
export async function writeFile(store: Store, ctx: ProjectContext, w: FileWrite): Promise<string> {
  if (!isValidBranchName(w.branch) || (w.startBranch !== undefined && !isValidBranchName(w.startBranch))) {
    throw new Failure('bad_request', 'Invalid branch name');
  }
  if (!isValidGitPath(w.filePath)) throw new Failure('bad_request', 'Invalid file path');
  // The blob worked out, and a large one's body written as parts, before the transaction (object-parts.ts).
  const prepared = w.content ? await prepareBlob(w.content) : null;
  return withUploads(store.kysely, async (upload) => {
    if (prepared) prepared.parts = await upload(prepared.deflated);
    return planAndCommit(store, ctx, w.branch, 'the file was being written', (repo) => planWrite(repo, w, prepared));
  });
}

/** One change of a commit of several (GitLab's `actions[]` of POST /projects/:id/repository/commits). */
export interface CommitAction {
  action: 'create' | 'update' | 'move' | 'delete' | 'chmod';
  filePath: string;
  /** A move's source. */
  previousPath?: string;
  /** A create's or update's bytes; a move without it keeps the file's. */
  content?: Buffer;
  executeFilemode?: boolean;
  lastCommitId?: string;
}

/** POST /projects/:id/repository/commits: several changes as one commit on `branch`. */
export interface CommitWrite {
  branch: string;
  /** Where a new branch starts: a branch (by default `branch` itself) or, instead, a commit id. */
  startBranch?: string;
  startSha?: string;
  /** Make `branch` the new commit even when it exists and the commit starts elsewhere (GitLab's force). */
  force: boolean;
  message: string;
  author: FileWrite['author'];
  actions: CommitAction[];
}

/**
 * Several file changes as one commit (GitLab's Commits::CreateService and Files::MultiService, with Gitaly's
 * messages for a change that does not apply, as the single file writes answer them); returns the commit's id.
 * Each change reads the tree the ones before it made; only the trees on their paths are read and written.
 */
export async function commitFiles(store: Store, ctx: ProjectContext, w: CommitWrite): Promise<string> {
  for (const a of w.actions)
    if (!isValidGitPath(a.filePath) || (a.previousPath !== undefined && !isValidGitPath(a.previousPath)))
      throw new Failure('bad_request', 'Invalid file path');
  // Worked out before the transaction, and off the event loop once together they are large (prepareBlobs).
  const withContent = w.actions.filter((a) => a.content);
  const blobs = await prepareBlobs(withContent.map((a) => a.content!));
  const prepared = new Map<CommitAction, PreparedBlob>();
  for (const [i, a] of withContent.entries()) {
    const blob = blobs[i];
    if (blob) prepared.set(a, blob);
  }
  return withUploads(store.kysely, async (upload) => {
    for (const blob of prepared.values()) blob.parts = await upload(blob.deflated);
    return planAndCommit(store, ctx, w.branch, 'the commit was being made', (repo) => planCommit(repo, w, prepared));
  });
}

/** The commit of `w` on top of where it starts, as `repo` reads now, checked as Commits::CreateService checks it. */
async function planCommit(
  repo: GitRepository,
  w: CommitWrite,
  prepared: Map<CommitAction, PreparedBlob>,
): Promise<WritePlan> {
  if (Buffer.byteLength(w.message) > MAX_COMMIT_BYTES - 64 * 1024)
    throw new Failure(
      'bad_request_param',
      `commit_message is too long (maximum is ${(MAX_COMMIT_BYTES - 64 * 1024) / 1024} KB)`,
    );
  const empty = !(await repo.hasBranches());
  const startBranch = w.startSha === undefined ? (w.startBranch ?? w.branch) : undefined;
  const different = startBranch !== w.branch;
  let parent: string | null = null;
  if (w.startSha !== undefined) {
    if (!/^[0-9a-f]{40}$/.test(w.startSha)) throw badRequest(`Invalid start_sha '${w.startSha}'`);
    parent = await repo.resolveCommit(w.startSha);
    if (!parent) throw badRequest(`Cannot find start_sha '${w.startSha}'`);
  } else if (!empty) {
    parent = isValidBranchName(startBranch!) ? await repo.readBranch(startBranch!) : null;
    if (!parent) throw badRequest(NOT_ON_BRANCH);
  }
  const target = isValidBranchName(w.branch) ? await repo.readBranch(w.branch) : null;
  if (!empty && different && target && !w.force)
    throw badRequest(`A branch called '${w.branch}' already exists. Switch to that branch in order to make changes`);
  if (different && !isValidBranchName(w.branch))
    throw badRequest(`Something went wrong when we tried to create '${w.branch}' for you: Branch name is invalid`);
  if (empty && !isValidBranchName(w.branch)) throw new Failure('bad_request', 'Invalid branch name');
  // The changes resolve without waiting for anything: other requests get their turns between them.
  const slice = loopSlice();
  // Every change's last commit first, as Files::MultiService checks them before any change is made; each file and
  // commit once (a thousand changes of one file walked its history a thousand times).
  const checked = new Set<string>();
  for (const a of w.actions) {
    const path = a.previousPath ?? a.filePath;
    if (!a.lastCommitId || a.action === 'create' || a.action === 'chmod' || !parent) continue;
    const key = `${a.lastCommitId} ${path}`;
    if (checked.has(key)) continue;
    checked.add(key);
    if (await changedSince(repo, parent, a.lastCommitId, path))
      throw badRequest(`The file has changed since you started editing it: ${path}`);
    if (slice.over()) await slice.pass();
  }
  const writer = new ObjectWriter();
  const tree = await TreeEdit.open(repo, parent && (await repo.commit(parent)).tree);
  try {
    for (const a of w.actions) {
      await applyAction(tree, writer, a, prepared.get(a));
      if (slice.over()) await slice.pass();
    }
  } catch (error) {
    if (error instanceof TooManyDirectories)
      throw badRequest(`The commit would change more than ${MAX_DIRECTORIES} directories`);
    throw error;
  }
  const commit = writer.commit({
    tree: await tree.write(writer),
    parent,
    author: { ...w.author, time: Math.floor(Date.now() / 1000) },
    message: w.message,
  });
  const objects = writer.objects();
  const oversized = objects.find((o) => o.type === 'tree' && o.body.length > MAX_TREE_BYTES);
  if (oversized)
    throw badRequest(`The tree would be larger than the allowed size of ${MAX_TREE_BYTES / 1024 / 1024} MB`);
  // With force, the branch becomes the commit wherever it was; else it moves from where it was only.
  return { target, empty, commit, objects: await deflateOffLoop(objects) };
}

const SUBMODULE_MODE = '160000';

/** One change, made on what the changes before it made; 400 with Gitaly's words for one that does not apply. */
async function applyAction(tree: TreeEdit, writer: ObjectWriter, a: CommitAction, prepared: PreparedBlob | undefined) {
  const refuseTaken = (state: PathState) => {
    if (state.kind === 'directory') throw badRequest(DIRECTORY_EXISTS);
    if (state.kind !== 'none') throw badRequest(FILE_EXISTS);
  };
  const blob = () => writer.blob(a.content ?? Buffer.alloc(0), prepared);
  // A submodule's entry (a commit of another repository) is no file to write or move: given a blob's mode or
  // bytes, the tree would name an object this repository does not have.
  const isFile = (state: PathState) => state.kind === 'file' && state.mode !== SUBMODULE_MODE;
  const state = await tree.stat(a.filePath);
  if (a.action === 'create') {
    refuseTaken(state);
    return tree.put(a.filePath, { id: blob(), mode: '100644' });
  }
  if (a.action === 'move') {
    const from = await tree.stat(a.previousPath!);
    if (!isFile(from) || from.kind !== 'file') throw badRequest(FILE_MISSING);
    // Where it goes is looked at once it left: a file may move up into the folder it emptied.
    await tree.put(a.previousPath!, null);
    refuseTaken(await tree.stat(a.filePath));
    return tree.put(a.filePath, { id: a.content ? blob() : from.id, mode: from.mode });
  }
  if (state.kind !== 'file') throw badRequest(FILE_MISSING);
  if (a.action === 'delete') return tree.put(a.filePath, null);
  if (!isFile(state)) throw badRequest(FILE_MISSING);
  if (a.action === 'chmod')
    return tree.put(a.filePath, { id: state.id, mode: a.executeFilemode ? '100755' : '100644' });
  return tree.put(a.filePath, { id: blob(), mode: state.mode });
}

/**
 * A write's commit worked out by `plan` and stored, its branch moved in one transaction; the commit's id. The commit
 * is worked out before the transaction, from the branch as it is then: a tree of 49,000 files took 400-520 ms, which
 * every other write of the instance waited for. The transaction moves the branch only if it is still where it was
 * (compare-and-swap); a write that lost that race twice works it out inside the transaction, as every write did
 * before, so that it cannot lose again. `doing` says what was under way, for the refusal of a third race lost.
 */
async function planAndCommit(
  store: Store,
  ctx: ProjectContext,
  branch: string,
  doing: string,
  plan: (repo: GitRepository) => Promise<WritePlan>,
): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const read = attempt < WRITE_ATTEMPTS ? await projectRepository(store, ctx.project) : null;
    // A project deleted meanwhile leaves the plan objects it cannot read: the transaction then answers 404.
    const planned =
      read &&
      (await plan(read).catch((error) => {
        if (error instanceof MissingObject) return null;
        throw error;
      }));
    try {
      return await store.transaction(async (tx) => {
        // The project first, as its delete locks it: one deleted since it was read is gone, not given a
        // repository again.
        if (!(await tx.projects.lock(ctx.project.id, 'share'))) throw notFound('Project');
        const repo = await ensureProjectRepository(tx, ctx.project);
        // The first write to a repository is worked out here (there is nothing to read), and a last try, with
        // the repository's refs locked (PostgreSQL runs writes at once).
        if (!planned) await repo.lockRefs();
        return commitWrite(tx, repo, ctx, branch, planned && read?.id === repo.id ? planned : await plan(repo));
      });
    } catch (error) {
      if (error instanceof RefConflict && planned) continue;
      if (error instanceof RefConflict) throw badRequest(`The branch ${branch} changed while ${doing}; try again`);
      if (error instanceof RefNameClash) throw badRequest(error.message);
      throw error;
    }
  }
}

/** The try of a file write that works its commit out inside the transaction (its branch moved twice before). */
const WRITE_ATTEMPTS = 3;

interface WritePlan {
  /** Where the branch was (null: it did not exist), and whether the repository had no branch at all. */
  target: string | null;
  empty: boolean;
  commit: string;
  objects: GitObject[];
}

/** The commit a file write makes on top of its branch (or its start branch) as `repo` reads them now. */
async function planWrite(repo: GitRepository, w: FileWrite, prepared: PreparedBlob | null): Promise<WritePlan> {
  // The branches named, each by its key: reading them all took a repository of 50,000 tags 136-354 ms.
  const target = await repo.readBranch(w.branch);
  const empty = !target && !(await repo.hasBranches());
  let parent = target;
  if (!target && !empty) {
    const start = w.startBranch ? await repo.readBranch(w.startBranch) : null;
    if (!start) throw badRequest(NOT_ON_BRANCH);
    parent = start;
  }
  // Only the trees on the file's path are read and written again: a write to a branch of 40,000 files flattened
  // and rebuilt all of them, 0.3-0.5 s of the event loop's time.
  const path = await TreePath.read(repo, parent && (await repo.commit(parent)).tree, w.filePath);
  const { state } = path;
  if (w.action === 'create' && state.kind !== 'none')
    throw badRequest(state.kind === 'directory' ? DIRECTORY_EXISTS : FILE_EXISTS);
  if (w.action !== 'create' && state.kind !== 'file') throw badRequest(FILE_MISSING);
  if (w.lastCommitId && parent && (await changedSince(repo, parent, w.lastCommitId, w.filePath)))
    throw badRequest(CHANGED_SINCE);
  const writer = new ObjectWriter();
  let entry: PathEntry | null = null;
  if (w.action !== 'delete') {
    const previousMode = state.kind === 'file' ? state.mode : '100644';
    const mode = w.executeFilemode === undefined ? previousMode : w.executeFilemode ? '100755' : '100644';
    entry = { id: writer.blob(w.content!, prepared), mode };
  }
  if (Buffer.byteLength(w.message) > MAX_COMMIT_BYTES - 64 * 1024)
    throw new Failure(
      'bad_request_param',
      `commit_message is too long (maximum is ${(MAX_COMMIT_BYTES - 64 * 1024) / 1024} KB)`,
    );
  const tree = path.write(writer, entry);
  const commit = writer.commit({
    tree,
    parent,
    author: { ...w.author, time: Math.floor(Date.now() / 1000) },
    message: w.message,
  });
  const objects = writer.objects();
  const oversized = objects.find((o) =>
    o.type === 'tree' ? o.body.length > MAX_TREE_BYTES : o.type === 'commit' && o.body.length > MAX_COMMIT_BYTES,
  );
  if (oversized) {
    const limit = oversized.type === 'tree' ? MAX_TREE_BYTES : MAX_COMMIT_BYTES;
    throw badRequest(`The ${oversized.type} would be larger than the allowed size of ${limit / 1024 / 1024} MB`);
  }
  return { target, empty, commit, objects: await deflateOffLoop(objects) };
}

const CHANGED_SINCE = 'You are attempting to update a file that has changed since you started editing it.';

/**
 * GitLab's Files::BaseService#file_has_changed?: the last commit to change the file on the branch is not the
 * last to change it as of `known`. A `known` that names no commit, or a file that neither had, is no change.
 */
async function changedSince(repo: GitRepository, branchHead: string, known: string, filePath: string) {
  const knownCommit = await repo.resolveCommit(known).catch(() => null);
  if (!knownCommit) return false;
  const onBranch = await lastChangeOf(repo, branchHead, filePath);
  const asKnown = await lastChangeOf(repo, knownCommit, filePath);
  return onBranch !== undefined && asKnown !== undefined && onBranch !== asKnown;
}

/** Stores a planned commit and moves its branch, in the caller's transaction; RefConflict if it moved since. */
async function commitWrite(
  store: Store,
  repo: GitRepository,
  ctx: ProjectContext,
  branch: string,
  plan: WritePlan,
): Promise<string> {
  // A repository without a branch when planned, given one since: this write is no longer its first.
  if (plan.empty && (await repo.hasBranches())) throw new RefConflict(`refs/heads/${branch}`);
  await repo.commitToBranch(branch, plan.target, plan.commit, plan.objects);
  // The first branch of an empty repository becomes its default branch.
  if (plan.empty) {
    await repo.setHead(branch);
    if (ctx.project.default_branch !== branch) await store.projects.update(ctx.project.id, { default_branch: branch });
  }
  return plan.commit;
}

export interface FileRead {
  file_name: string;
  file_path: string;
  size: number;
  encoding: 'base64';
  content_sha256: string;
  ref: string;
  blob_id: string;
  commit_id: string;
  last_commit_id: string;
  execute_filemode: boolean;
  content: string;
}

/**
 * A read of the project's repository, which takes several statements: an object it finds missing means the
 * project's delete committed meanwhile (404 Project), or else damaged data (deletedMeanwhile).
 */
async function readingRepository<T>(store: Store, ctx: ProjectContext, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    // git that could not work it out within a page's time (a read that shows less on a timeout catches it itself).
    if (error instanceof GitTimeout) throw new Failure('request_timeout');
    // A missing object, or git failing on the node's copy: the project may have been deleted meanwhile (404 then).
    if (error instanceof MissingObject || !(error instanceof Failure))
      await deletedMeanwhile(store, { kind: 'project', id: ctx.project.id }, error as Error);
    throw error;
  }
}

/** A blob the caller found in a tree, whole. */
async function blobOf(repo: GitRepository, id: string): Promise<Buffer> {
  const content = (await repo.readBlobs([id])).get(id);
  if (!content) throw new MissingObject(`repository ${repo.id} has no blob ${id}`);
  return content;
}

/** The tree entry at `filePath` in `ref`: 404 Commit Not Found for an unknown ref, 404 File Not Found for a missing file. */
async function locateFile(store: Store, ctx: ProjectContext, ref: string, filePath: string) {
  const repo = await projectRepository(store, ctx.project);
  const commit = repo && (await repo.resolveCommit(ref));
  if (!repo || !commit) throw notFound('Commit');
  // Looked up along its path, not listed with its directory: a directory may hold more than a listing takes.
  const entry = filePath.split('/').includes('') ? null : await repo.entryAt(commit, filePath);
  if (!entry || entry.mode === '40000' || entry.mode === '160000') throw notFound('File');
  return { repo, commit, entry };
}

/**
 * A file's blob id and bytes at `ref` (the default branch when none; past a MiB a LargeBlob, streamed), without
 * what the files API adds (its last commit, a walk of history, and a hash of its bytes): what pages show and send.
 */
export async function readFileBlob(
  store: Store,
  ctx: ProjectContext,
  ref: string | undefined,
  filePath: string,
): Promise<{ blobId: string; content: Buffer | LargeBlob }> {
  return readingRepository(store, ctx, async () => {
    const { repo, entry } = await locateFile(store, ctx, ref ?? defaultRef(ctx), filePath);
    return { blobId: entry.id, content: await sendableBlobOf(repo, entry.id) };
  });
}

/** The last commit from `commit` back that changed `filePath`, if one did: a walk of history. */
async function lastChangeOf(repo: GitRepository, commit: string, filePath: string): Promise<string | undefined> {
  const [last] = await repo.log(commit, { skip: 0, limit: 1, path: filePath });
  return last?.id;
}

/** GitLab's last_commit_id: the last commit that changed the file, else the commit read. */
async function lastCommitChanging(repo: GitRepository, commit: string, filePath: string): Promise<string> {
  return (await lastChangeOf(repo, commit, filePath)) ?? commit;
}

/** The raw file as the files API sends it: its bytes, and readFile's fields for GitLab's X-Gitlab-* headers. */
export async function rawFile(
  store: Store,
  ctx: ProjectContext,
  ref: string | undefined,
  filePath: string,
): Promise<{ info: FileInfo; content: Buffer | LargeBlob }> {
  return readingRepository(store, ctx, async () => {
    const { repo, commit, entry } = await locateFile(store, ctx, ref ?? defaultRef(ctx), filePath);
    const content = await sendableBlobOf(repo, entry.id);
    // GitLab's blob_data names the ref as it was asked for: none, when the default branch was read.
    return { content, info: await fileInfo(repo, commit, entry, filePath, ref ?? '', content) };
  });
}

/** The file as the files API answers it, with its last commit and the hash of its bytes. */
export async function readFile(
  store: Store,
  ctx: ProjectContext,
  ref: string | undefined,
  filePath: string,
): Promise<{ info: FileInfo; content: Buffer }> {
  const at = ref ?? defaultRef(ctx);
  return readingRepository(store, ctx, async () => {
    const { repo, commit, entry } = await locateFile(store, ctx, at, filePath);
    const content = await blobOf(repo, entry.id);
    return { content, info: await fileInfo(repo, commit, entry, filePath, at, content) };
  });
}

/** Every field of a file but its content (GitLab's blob_data). */
export type FileInfo = Omit<FileRead, 'content'>;

async function fileInfo(
  repo: GitRepository,
  commit: string,
  entry: { id: string; mode: string },
  filePath: string,
  ref: string,
  content: Buffer | LargeBlob,
): Promise<FileInfo> {
  return {
    file_name: filePath.split('/').pop()!,
    file_path: filePath,
    size: Buffer.isBuffer(content) ? content.length : content.size,
    encoding: 'base64',
    content_sha256: await sha256Of(content),
    ref,
    blob_id: entry.id,
    commit_id: commit,
    last_commit_id: await lastCommitChanging(repo, commit, filePath),
    execute_filemode: entry.mode === '100755',
  };
}

/**
 * The SHA-256 of a file's bytes, in hex. A whole one in libuv's threads (Web Crypto's digest: 50 ms of the event
 * loop for a 50 MB file); a large one a piece at a time as it inflates, never held whole.
 */
async function sha256Of(content: Buffer | LargeBlob): Promise<string> {
  if (Buffer.isBuffer(content)) return Buffer.from(await crypto.subtle.digest('SHA-256', content)).toString('hex');
  const hash = crypto.createHash('sha256');
  try {
    for await (const piece of content.open()) hash.update(piece as Buffer);
  } catch (error) {
    throw new MissingObject(`a large blob's parts end early: ${(error as Error).message}`);
  }
  return hash.digest('hex');
}

async function sendableBlobOf(repo: GitRepository, id: string): Promise<Buffer | LargeBlob> {
  const content = await repo.sendableBlob(id);
  if (!content) throw new MissingObject(`repository ${repo.id} has no blob ${id}`);
  return content;
}

/**
 * GET …/repository/blobs/:sha[/raw]: the blob with that id, as the tree lists it (40 hex digits, any case); 404 Blob
 * Not Found for another object or another text. An abbreviated id is not taken: with one, ids could be tried until
 * one named a blob no branch reaches any more.
 */
export async function blobById(store: Store, ctx: ProjectContext, sha: string): Promise<Buffer | LargeBlob> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    const id = sha.toLowerCase();
    const content = repo && /^[0-9a-f]{40}$/.test(id) ? await repo.sendableBlob(id) : null;
    if (!content) throw notFound('Blob');
    return content;
  });
}

/** A ref that is not given means the default branch, or HEAD in a repository without one yet. */
const defaultRef = (ctx: ProjectContext) => ctx.project.default_branch ?? 'HEAD';

/** An entry's own name: the last part of its path. */
export const nameOf = (entry: { path: string }) => entry.path.slice(entry.path.lastIndexOf('/') + 1);

/** The entries inside `path` (or the root) at `ref`, in GitLab's order; 404 Tree Not Found. */
export async function listTree(
  store: Store,
  ctx: ProjectContext,
  opts: { ref?: string; path?: string; recursive: boolean },
): Promise<readonly TreeEntry[]> {
  const entries = await readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    const commit = repo && (await repo.resolveCommit(opts.ref ?? defaultRef(ctx)));
    if (!repo || !commit) throw notFound('Tree');
    const dir = (opts.path && trimOf(opts.path, '/')) || undefined;
    const found = await repo.listTree(commit, { path: dir, recursive: opts.recursive, trees: true }).catch(tooLarge);
    if (dir && found.length === 0) throw notFound('Tree');
    return found;
  });
  let ordered = inGitLabOrder.get(entries);
  if (!ordered) {
    // GitLab's Tree#sorted_entries: directories, then files, then submodules, each in git's order. In one pass,
    // not a sort: 50,000 entries sorted held the event loop over 100 ms.
    const sorted: Record<TreeEntry['type'], TreeEntry[]> = { tree: [], blob: [], commit: [] };
    for (const e of entries) sorted[e.type].push(e);
    ordered = [...sorted.tree, ...sorted.blob, ...sorted.commit];
    inGitLabOrder.set(entries, ordered);
  }
  return ordered;
}

/**
 * A listing the node keeps (storage/git/object-cache.ts) in GitLab's order, for as long as the listing is kept:
 * ordering 49,500 entries again took most of each later page's 13 ms of CPU.
 */
const inGitLabOrder = new WeakMap<readonly TreeEntry[], readonly TreeEntry[]>();

/** One page of the commits reachable from `refName` (touching `path`), newest first; none for an empty repository. */
export async function listCommits(
  store: Store,
  caches: ServingCaches,
  ctx: ProjectContext,
  opts: {
    refName?: string;
    path?: string;
    since?: string;
    until?: string;
    author?: string;
    withStats?: boolean;
    /** Every branch's and tag's commits, whatever `refName` says (git log --all). */
    all?: boolean;
    firstParent?: boolean;
    /** GitLab's `order`: git log's date order (walked here), or --topo-order (git's, in the serving cache). */
    order?: 'default' | 'topo';
  },
  window: PageWindow,
): Promise<{ commits: CommitInfo[]; files: (FileChange[] | null)[]; hasMore: boolean }> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    const from =
      repo && (opts.all ? await refCommits(repo) : await repo.resolveCommit(opts.refName ?? defaultRef(ctx)));
    if (!repo || !from || from.length === 0) return { commits: [], files: [], hasMore: false };
    const match = commitMatcher(opts);
    const page = { skip: window.offset, limit: window.limit + 1 };
    const message = messageBudget();
    const read =
      opts.order === 'topo'
        ? // Every ref's commit as git's --all, not one argument each: a repository may have more than a command line holds.
          await topoOrderCommits(caches, repo, opts.all ? ['--all'] : [from as string], { ...opts, ...page }, message)
        : await repo.log(from, {
            ...page,
            path: opts.path,
            match,
            firstParent: opts.firstParent,
            message: message.commit,
          });
    const commits = read.slice(0, window.limit);
    const files: (FileChange[] | null)[] = [];
    // GitLab's with_stats: each commit's lines against its first parent, worked out as a single commit's are.
    if (opts.withStats)
      for (const c of commits) {
        // Each commit's count is bounded (changes.ts); between them, other requests go first.
        await nextTurn();
        files.push(await commitChanges(caches, repo, c.id));
      }
    return {
      commits,
      files,
      hasMore: read.length > window.limit,
    };
  });
}

/** A page of commits in git's --topo-order; 408 when git cannot order them within a page's time. */
async function topoOrderCommits(
  caches: ServingCaches,
  repo: GitRepository,
  from: string[],
  opts: Parameters<typeof topoOrderPage>[2],
  message: MessageBudget,
): Promise<CommitInfo[]> {
  const ids = await readingCache(caches, repo, (dir) => topoOrderPage(dir, from, opts, renderBudget()));
  const commits: CommitInfo[] = [];
  for (const id of ids) {
    const info = await repo.commitInfo(id);
    commits.push({ ...info, message: message.commit(info.message) });
  }
  return commits;
}

/** The commits the repository's branches and tags point at (a tag at what it names), each once. */
async function refCommits(repo: GitRepository): Promise<string[]> {
  const commits = new Set<string>();
  const slice = loopSlice();
  for (const [name, id] of await repo.refs()) {
    const commit = name.startsWith('refs/heads/') ? id : await repo.resolveCommit(name);
    if (commit) commits.add(commit);
    if (slice.over()) await slice.pass();
  }
  return [...commits];
}

/**
 * The commit `ref` names (an id, a branch or a tag) with the files it changed (`changes`; null when not asked, or
 * when git did not list them in time); null when it names none.
 */
export async function readCommit(
  store: Store,
  caches: ServingCaches,
  ctx: ProjectContext,
  ref: string,
  changes: boolean,
): Promise<{ commit: CommitInfo; files: FileChange[] | null } | null> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    const id = repo && (await repo.resolveCommit(ref));
    if (!repo || !id) return null;
    const [commit] = await repo.log(id, { skip: 0, limit: 1 });
    return { commit, files: changes ? await commitChanges(caches, repo, id) : null };
  });
}

/**
 * A web path's `<ref>/<path>` split as GitLab's ExtractsRef splits it, since a branch or tag may hold `/`
 * (`feature/x/README.md`): the longest leading segments that name a branch or tag are the ref, else the first
 * segment is (a commit id, HEAD, or a ref that is not there). Only names a ref can have are asked for.
 */
export async function splitRefPath(
  store: Store,
  ctx: ProjectContext,
  refAndPath: string,
): Promise<{ ref: string; path: string | undefined }> {
  const segments = refAndPath.split('/');
  const split = (n: number) => ({
    ref: segments.slice(0, n).join('/'),
    path: segments.slice(n).join('/') || undefined,
  });
  const repo = await projectRepository(store, ctx.project);
  if (!repo || segments.length === 1) return split(1);
  const prefixes: string[] = [];
  for (let n = 2, length = segments[0].length; n <= segments.length; n++) {
    length += 1 + segments[n - 1].length;
    if (length > MAX_BRANCH_NAME) break;
    prefixes.push(segments.slice(0, n).join('/'));
  }
  const found = await repo.existingRefs(prefixes.flatMap((p) => [`refs/heads/${p}`, `refs/tags/${p}`]));
  for (let i = prefixes.length - 1; i >= 0; i--)
    if (found.has(`refs/heads/${prefixes[i]}`) || found.has(`refs/tags/${prefixes[i]}`)) return split(i + 2);
  return split(1);
}

/** A commit of the project's repository with its diff against its first parent (its page); null when `ref` names none. */
export async function projectCommitDiff(
  store: Store,
  caches: ServingCaches,
  ctx: ProjectContext,
  ref: string,
): Promise<RevisionDiff | null> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    const id = repo && (await repo.resolveCommit(ref));
    return repo && id ? diffOf(caches, repo, id) : null;
  });
}

/** Archives made at once by this process: git reads and compresses a whole tree for each. Others wait their turn. */
const ARCHIVES_AT_ONCE = 2;
/**
 * Archives that may wait for a turn in this process; one more is GitLab's 429 of the archive's rate limit at once
 * (`project_repositories_archive`). A wait is bounded by the git time budget too (renderBudget): past it, 408.
 * Without either, a flood of archive requests waited in a queue that only grew, each holding its connection.
 */
const ARCHIVES_WAITING = 8;
const archiveTurns = { running: 0, waiting: [] as (() => void)[] };

/**
 * A turn to make an archive, within the git time budget: GitTimeout (408 through readingRepository) when none
 * came within it, GitLab's 429 when ARCHIVES_WAITING already wait.
 */
async function archiveTurn(): Promise<() => void> {
  if (archiveTurns.running >= ARCHIVES_AT_ONCE) {
    if (archiveTurns.waiting.length >= ARCHIVES_WAITING) throw new Failure('too_many_requests', '', {}, 1);
    const budget = renderBudget();
    await new Promise<void>((go, fail) => {
      const turn = () => {
        clearTimeout(late);
        go();
      };
      const late = setTimeout(() => {
        archiveTurns.waiting.splice(archiveTurns.waiting.indexOf(turn), 1);
        fail(new GitTimeout(`no archive turn within ${budget} ms`));
      }, budget);
      archiveTurns.waiting.push(turn);
    });
  } else archiveTurns.running++;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const next = archiveTurns.waiting.shift();
    if (next) next();
    else archiveTurns.running--;
  };
}

/**
 * How long git may take to write one archive. Written into a file and only then sent: a turn is held while git writes,
 * not while a client reads (two that read a trickle held both turns for as long as they kept reading).
 */
const ARCHIVE_WRITE_MS = 10 * 60_000;

/** GitLab's archive formats, as its archive_metadata reads them: the bzip2 names are tar.bz2, and any other tar.gz. */
export function archiveFormatOf(asked: string | undefined): ArchiveFormat {
  if (asked && ['tar.bz2', 'tbz', 'tbz2', 'tb2', 'bz2'].includes(asked)) return 'tar.bz2';
  return asked === 'tar' || asked === 'zip' ? asked : 'tar.gz';
}

/**
 * GET …/repository/archive (GitLab's send_git_archive with append_sha): the files at `ref` (the default branch when
 * none), or below `path`, under `<project>-<ref>-<commit id>[-<path>]/`, as git archive writes them; 404 File Not
 * Found for a ref that names no commit or a path that is not there.
 */
export async function projectArchive(
  store: Store,
  caches: ServingCaches,
  ctx: ProjectContext,
  opts: { ref?: string; path?: string; format: ArchiveFormat },
): Promise<{ fileName: string; body: Readable; size: number }> {
  const ref = opts.ref ?? defaultRef(ctx);
  const { repo, commit } = await readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    return { repo, commit: repo && (await repo.resolveCommit(ref)) };
  });
  const folder = opts.path?.replace(/^\/+|\/+$/g, '') || undefined;
  if (!repo || !commit || (folder !== undefined && !isValidGitPath(folder))) throw notFound('File');
  const prefix = [
    ctx.project.path,
    ref.replaceAll('/', '-'),
    commit,
    ...(folder ? [folder.replaceAll('/', '-')] : []),
  ].join('-');
  const done = await readingRepository(store, ctx, archiveTurn);
  // Everything after the turn is taken is within what gives it back: a temporary directory that could not be made
  // (a full disk) kept the turn, and every archive after it waited for none to come.
  let dir: string | undefined;
  try {
    dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'snippetd-archive-'));
    const file = path.join(dir, 'archive');
    // The project deleted while its turn came: 404, as for any read it overtakes.
    const reading = await readingRepository(store, ctx, () => caches.refreshForReading(repo));
    const out = await fs.promises.open(file, 'w');
    try {
      await writeGitArchive(
        reading.dir,
        { commit, prefix, format: opts.format, path: folder },
        out.fd,
        ARCHIVE_WRITE_MS,
      );
    } finally {
      await out.close();
      reading.release();
    }
    const { body, size } = await readAndRemove(file);
    return { fileName: `${prefix}.${opts.format}`, body, size };
  } catch (error) {
    if (error instanceof ArchiveFailed) throw notFound('File');
    throw error;
  } finally {
    done();
    if (dir !== undefined) await fs.promises.rm(dir, { recursive: true, force: true });
  }
}

/** GitLab's Contributor: an author of the newest commits, by email, with their commits counted. */
export interface Contributor {
  name: string;
  email: string;
  commits: number;
}

/** The commits GitLab's contributors count at most: the newest, merges left out (Repository#contributors). */
const CONTRIBUTOR_COMMITS = 2000;

/**
 * GET …/repository/contributors (GitLab's Repository#contributors): the authors of the newest 2,000 commits at `ref`
 * that are not merges, one per email as written, named by their newest commit with a name; ordered by `commits`,
 * `name` or `email` (bytes), equals in the order their newest commits come. Null when `ref` names no commit; none in
 * an empty repository.
 */
export async function listContributors(
  store: Store,
  ctx: ProjectContext,
  query: { ref?: string; orderBy: 'commits' | 'name' | 'email'; sort: 'asc' | 'desc' },
): Promise<Contributor[] | null> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    if (!repo) return [];
    const from = await repo.resolveCommit(query.ref ?? defaultRef(ctx));
    if (!from) return query.ref === undefined ? [] : null;
    // Who wrote each commit is all that is kept: 2,000 messages of up to 1 MB each were held whole at once.
    const authorOnly = (c: CommitInfo) => {
      c.message = '';
      return c.parents.length < 2;
    };
    const commits = await repo.log(from, { skip: 0, limit: CONTRIBUTOR_COMMITS, match: authorOnly });
    const byEmail = new Map<string, Contributor>();
    for (const c of commits) {
      const known = byEmail.get(c.authorEmail) ?? { name: '', email: c.authorEmail, commits: 0 };
      if (!known.name.trim()) known.name = c.authorName;
      known.commits++;
      byEmail.set(c.authorEmail, known);
    }
    const key = (c: Contributor) =>
      query.orderBy === 'commits' ? c.commits : Buffer.from(c[query.orderBy]).toString('latin1');
    const direction = query.sort === 'asc' ? 1 : -1;
    return [...byEmail.values()].sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      return direction * (typeof x === 'number' ? x - (y as number) : byteCompare(x, y as string));
    });
  });
}

/** Refs a merge base is asked of at most: each is looked up, and all are handed to one git process. */
export const MAX_MERGE_BASE_REFS = 100;

/**
 * GET …/repository/merge_base (GitLab's Gitlab::Git::MergeBase): the best common ancestor of the commits `refs`
 * name (git merge-base: of the first and a merge of the others), or the refs that name none.
 */
export async function mergeBaseOf(
  store: Store,
  caches: ServingCaches,
  ctx: ProjectContext,
  refs: readonly string[],
): Promise<{ unknown: string[]; commit: CommitInfo | null }> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    const ids: string[] = [];
    const unknown: string[] = [];
    for (const ref of refs) {
      const id = repo && (await repo.resolveCommit(ref));
      if (id) ids.push(id);
      else unknown.push(ref);
    }
    if (!repo || unknown.length) return { unknown, commit: null };
    const base = await readingCache(caches, repo, (dir) => mergeBase(dir, ids, renderBudget()));
    return { unknown, commit: base ? await repo.commitInfo(base) : null };
  });
}

/** A comparison's diff, from `base` (null: nothing) to `to`, as a page shows it (rangeDiff). */
export async function projectRangeDiff(
  store: Store,
  caches: ServingCaches,
  ctx: ProjectContext,
  base: string | null,
  to: string,
): Promise<RevisionDiff> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    if (!repo) throw notFound('Ref');
    return rangeDiff(caches, repo, base, to);
  });
}

/**
 * The files the commit `ref` names changed against its first parent, each with its patch from its first hunk on,
 * within the limits a diff page has (GitLab's commit diff API); null when `ref` names no commit. 408 when git
 * cannot work it out within a page's time.
 */
export async function commitPatches(
  store: Store,
  caches: ServingCaches,
  ctx: ProjectContext,
  ref: string,
): Promise<FilePatch[] | null> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    const id = repo && (await repo.resolveCommit(ref));
    if (!repo || !id) return null;
    const parent = (await repo.commit(id)).parents[0] ?? null;
    const read = (dir: string) => readCommitDiff(dir, parent, id, DIFF_LIMITS, renderBudget());
    return (await readingCache(caches, repo, read)).files;
  });
}

/** Commits a comparison lists at most: GitLab lists them all, and two unrelated histories may be millions. */
export const MAX_COMPARED_COMMITS = 10_000;
/**
 * The characters of the messages a comparison lists at most, the newest first: a commit may be 1 MB and 1 MB of one
 * letter packs into a few hundred bytes, so that 10,000 of them (a push of a few MB) were 10 GB to hold and twice
 * that as JSON (each message is its title too). 350 of them answered 500 after a 4.7 s stop of the event loop.
 */
export const MAX_COMPARED_MESSAGE_CHARS = 8 * 1024 * 1024;

/** Two commits compared (GitLab's Compare). */
export interface Comparison {
  from: string;
  to: string;
  /** Where the diff starts: `from` itself with straight, else the merge base (null: the histories share none). */
  base: string | null;
  /** What `to` reaches and `from` does not, oldest first. */
  commits: CommitInfo[];
  files: FilePatch[];
  /** Commits or files left out, over the limits. */
  cut: boolean;
}

/**
 * GET …/repository/compare (GitLab's CompareService and Gitlab::Git::Compare): the commits `to` reaches and `from`
 * does not, and the diff from their merge base (`from` itself with `straight`) to `to`; null when either names no
 * commit. 408 when git cannot work it out within a page's time.
 */
export async function compareCommits(
  store: Store,
  caches: ServingCaches,
  ctx: ProjectContext,
  refs: { from: string; to: string; straight: boolean },
  opts: { patches: boolean } = { patches: true },
): Promise<Comparison | null> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    const to = repo && (await repo.resolveCommit(refs.to));
    const from = repo && (await repo.resolveCommit(refs.from));
    if (!repo || !to || !from) return null;
    if (from === to) return { from, to, base: from, commits: [], files: [], cut: false };
    const { base, between, diff } = await readingCache(caches, repo, async (dir) => {
      // The three git processes share one budget: a compare answers 408 within one, not within three.
      const left = sharedRenderBudget();
      const base = refs.straight ? from : await mergeBase(dir, [from, to], left());
      const between = await commitsBetween(dir, from, to, MAX_COMPARED_COMMITS, left());
      const diff = opts.patches
        ? await readCommitDiff(dir, base ?? EMPTY_TREE, to, DIFF_LIMITS, left())
        : { files: [], cut: false };
      return { base, between, diff };
    });
    // Newest first, as far as the messages' budget goes (at least one); then oldest first, as GitLab lists them.
    const commits: CommitInfo[] = [];
    let chars = 0;
    let cut = between.cut;
    const slice = loopSlice();
    for (let i = between.ids.length - 1; i >= 0; i--) {
      const info = await repo.commitInfo(between.ids[i]!);
      chars += info.message.length;
      if (chars > MAX_COMPARED_MESSAGE_CHARS && commits.length) {
        cut = true;
        break;
      }
      commits.push(info);
      if (slice.over()) await slice.pass();
    }
    commits.reverse();
    return { from, to, base, commits, files: diff.files, cut: cut || diff.cut };
  });
}

/** A tag of a project's repository, as GitLab's Tag entity needs it. */
export interface TagInfo {
  name: string;
  /** The tag object's id for an annotated tag, else the commit's. */
  target: string;
  /** An annotated tag's message; '' for a lightweight one (Gitaly's). */
  message: string;
  /** When an annotated tag was made, in UTC (GitLab's Tag#date); null for a lightweight one. */
  createdAt: string | null;
  commit: CommitInfo;
}

export type TagOrder = 'name' | 'updated' | 'version';

/**
 * One page of the project's tags (GitLab's TagsFinder): `search` as for branches, ordered by name, by version (git's
 * version:refname, digits compared as numbers) or by the time their commits were committed (GitLab's default,
 * newest first), which reads every tag's commit. A tag that names no commit is left out.
 */
export async function listTags(
  store: Store,
  ctx: ProjectContext,
  query: { orderBy: TagOrder; sort: 'asc' | 'desc'; search?: string },
  window: PageWindow,
): Promise<PageOf<TagInfo>> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    if (!repo) return { rows: [], total: 0, hasMore: false };
    const matches = nameMatcher(query.search);
    const named = [...(await repo.refs())]
      .filter(([ref]) => ref.startsWith('refs/tags/'))
      .map(([ref, id]) => ({ name: ref.slice('refs/tags/'.length), id }))
      // Each name's bytes as a string, compared with < (byte order), worked out once for the sort.
      .map((tag) => ({ ...tag, key: Buffer.from(tag.name).toString('latin1') }))
      .filter(({ name }) => matches(name));
    const direction = query.sort === 'asc' ? 1 : -1;
    let ordered: typeof named;
    if (query.orderBy === 'updated') {
      // Only each commit's time is read and kept for the sort, once a commit: every tag's messages, held whole,
      // came to gigabytes. Every tag's commit is read, so within the git reads' time budget (408 past it).
      const times = new Map<(typeof named)[number], number>();
      const commitTimes = new Map<string, number>();
      const deadline = performance.now() + renderBudget();
      const slice = loopSlice();
      for (const tag of named) {
        const commitId = await repo.resolveCommit(tag.id);
        if (commitId) {
          let time = commitTimes.get(commitId);
          if (time === undefined) {
            time = await repo.committedAt(commitId);
            commitTimes.set(commitId, time);
          }
          times.set(tag, time);
        }
        if (performance.now() > deadline) throw new GitTimeout(`tags not read within ${renderBudget()} ms`);
        if (slice.over()) await slice.pass();
      }
      ordered = [...times.keys()].sort((a, b) => direction * (times.get(a)! - times.get(b)!));
    } else {
      if (query.orderBy === 'version') {
        const runs = new Map(named.map((tag) => [tag, versionRuns(tag.key)]));
        named.sort((a, b) => direction * (versionCompare(runs.get(a)!, runs.get(b)!) || byteCompare(a.key, b.key)));
      } else named.sort((a, b) => direction * byteCompare(a.key, b.key));
      ordered = named;
    }
    const tags: TagInfo[] = [];
    const message = messageBudget();
    for (const tag of ordered.slice(window.offset, window.offset + window.limit + 1)) {
      const info = await tagInfo(repo, tag.name, tag.id, message);
      if (info) tags.push(info);
    }
    return { rows: tags.slice(0, window.limit), total: named.length, hasMore: tags.length > window.limit };
  });
}

/** The project's tag `name`; null when there is none. */
export async function findTag(store: Store, ctx: ProjectContext, name: string): Promise<TagInfo | null> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    const id = repo && (await repo.readRef(`refs/tags/${name}`));
    return repo && id ? tagInfo(repo, name, id) : null;
  });
}

/**
 * POST /projects/:id/repository/tags (GitLab's Tags::CreateService): `name` at the commit `ref` names, annotated
 * (by `tagger`, now) when there is a message, else lightweight.
 */
export async function createTag(
  store: Store,
  ctx: ProjectContext,
  input: { name: string; ref: string; message?: string; tagger: FileWrite['author'] },
): Promise<TagInfo> {
  const { name, ref } = input;
  if (!ref.trim()) throw badRequest('Target is empty');
  if (!isValidBranchName(name)) throw badRequest('Tag name invalid');
  const message = input.message?.trim();
  const repo = await projectRepository(store, ctx.project);
  if (repo && (await repo.readRef(`refs/tags/${name}`))) throw conflict(`Tag ${name} already exists`);
  const commit = repo && (await repo.resolveCommit(ref));
  if (!repo || !commit) throw badRequest(`Target ${ref} is invalid`);
  const writer = new ObjectWriter();
  const tagger = { ...input.tagger, time: Math.floor(Date.now() / 1000) };
  const target = message ? writer.tag({ object: commit, name, tagger, message }) : commit;
  try {
    await store.transaction(async (tx) => {
      if (!(await tx.projects.lock(ctx.project.id, 'share'))) throw notFound('Project');
      const bound = await projectRepository(tx, ctx.project);
      if (!bound) throw notFound('Project');
      await bound.store(writer.objects());
      await bound.moveRef(`refs/tags/${name}`, null, target);
    });
  } catch (error) {
    if (error instanceof RefConflict) throw conflict(`Tag ${name} already exists`);
    if (error instanceof RefNameClash) throw badRequest(`Failed to create a tag: ${name}`);
    throw error;
  }
  return (await tagInfo(repo, name, target))!;
}

/** DELETE /projects/:id/repository/tags/:tag_name: 404 Tag Not Found; 412 when its commit is newer than the date. */
export async function deleteTag(
  store: Store,
  ctx: ProjectContext,
  name: string,
  ifUnmodifiedSince: string | undefined,
): Promise<void> {
  const found = await findTag(store, ctx, name);
  if (!found) throw notFound('Tag');
  checkUnmodifiedSince(Date.parse(found.commit.authoredAt), ifUnmodifiedSince);
  await store.transaction(async (tx) => {
    if (!(await tx.projects.lock(ctx.project.id, 'share'))) throw notFound('Project');
    const repo = await projectRepository(tx, ctx.project);
    await repo?.moveRef(`refs/tags/${name}`, found.target, null).catch((error) => {
      // Moved or deleted since it was read: as the tag it names is no longer there, 404.
      if (error instanceof RefConflict) throw notFound('Tag');
      throw error;
    });
  });
}

/**
 * A tag's target, message, date and commit; null when it names no commit. With a list's `budget`, its messages are
 * shown within it; else whole.
 */
async function tagInfo(repo: GitRepository, name: string, id: string, budget?: MessageBudget): Promise<TagInfo | null> {
  const object = await repo.object(id);
  let message = '';
  let createdAt: string | null = null;
  let commitId: string | null = id;
  if (object?.type === 'tag') {
    const tag = parseTag(object.body);
    message = budget ? budget.tag(tag.message) : tag.message;
    createdAt = tag.tagger ? new Date(tag.tagger.time * 1000).toISOString() : null;
    commitId = await repo.resolveCommit(id);
  } else if (object?.type !== 'commit') return null;
  const [commit] = commitId ? await repo.log(commitId, { skip: 0, limit: 1, message: budget?.commit }) : [];
  return commit ? { name, target: id, message, createdAt, commit } : null;
}

/** Names as git orders refs, by their bytes, each given as its bytes in a latin1 string. */
const byteCompare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A name cut into runs of digits and of the rest, for versionCompare. */
const versionRuns = (key: string) => key.match(/\d+|\D+/g) ?? [];

/** git's version:refname order, roughly: runs of digits compare as numbers, the rest as bytes (latin1 strings). */
function versionCompare(x: string[], y: string[]): number {
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const numeric = /^\d/.test(x[i]) && /^\d/.test(y[i]);
    const order = numeric ? Number(x[i]) - Number(y[i]) || x[i].length - y[i].length : byteCompare(x[i], y[i]);
    if (order) return Math.sign(order);
  }
  return x.length - y.length;
}

/** A branch of a project's repository, as GitLab's Branch entity needs it. */
export interface BranchInfo {
  name: string;
  commit: CommitInfo;
  /** The default branch reaches its head, which is not the default branch's own (GitLab's merged_to_root_ref?). */
  merged: boolean;
  default: boolean;
}

/** Branches' names searched as GitLab's BranchesFinder does: `^text` at the start, `text$` at the end, else anywhere. */
function branchMatch(search: string | undefined) {
  if (!search) return null;
  if (search.startsWith('^')) return { text: search.slice(1), where: 'prefix' as const };
  if (search.endsWith('$')) return { text: search.slice(0, -1), where: 'suffix' as const };
  return { text: search, where: 'anywhere' as const };
}

/** Whether a branch's or tag's name matches `search` as GitLab's finders match it (any case). */
function nameMatcher(search: string | undefined): (name: string) => boolean {
  const match = branchMatch(search);
  if (!match) return () => true;
  const needle = match.text.toLowerCase();
  return (name) => {
    const lower = name.toLowerCase();
    if (match.where === 'prefix') return lower.startsWith(needle);
    return match.where === 'suffix' ? lower.endsWith(needle) : lower.includes(needle);
  };
}

/** How GitLab's BranchesFinder orders branches: by name, or by their commits' committer time (Gitaly's). */
export type BranchOrder = 'name_asc' | 'updated_asc' | 'updated_desc';

/**
 * One page of the project's branches, with `search` as GitLab's; none in an empty repository. By name, a page of
 * rows; by time, every branch's commit is read (git for-each-ref --sort=committerdate, ties by name as git's).
 */
export async function listBranches(
  store: Store,
  caches: ServingCaches,
  ctx: ProjectContext,
  query: { search?: string; sort: BranchOrder },
  window: PageWindow,
): Promise<PageOf<BranchInfo>> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    if (!repo) return { rows: [], total: 0, hasMore: false };
    if (query.sort === 'name_asc') {
      const page = await repo.branchesPage(branchMatch(query.search), window);
      const heads = page.rows.map((r) => ({ name: r.name, id: Buffer.from(r.oid).toString('hex') }));
      return { ...page, rows: await branchInfos(caches, repo, heads) };
    }
    const matches = nameMatcher(query.search);
    // git orders them on the node's copy: reading every branch's commit here held the event loop for 300-400 ms
    // (2,000 branches whose commits had messages of 500 KB).
    const sorted = await readingCache(caches, repo, (dir) =>
      branchesByCommitTime(dir, query.sort === 'updated_desc', renderBudget()),
    );
    const heads = sorted.filter((head) => matches(head.name));
    const page = heads.slice(window.offset, window.offset + window.limit + 1);
    const rows = await branchInfos(caches, repo, page.slice(0, window.limit));
    return { rows, total: heads.length, hasMore: page.length > window.limit };
  });
}

/** The project's branch `name`; null when there is none. */
export async function findBranch(
  store: Store,
  caches: ServingCaches,
  ctx: ProjectContext,
  name: string,
): Promise<BranchInfo | null> {
  return readingRepository(store, ctx, async () => {
    const repo = await projectRepository(store, ctx.project);
    const id = repo && isValidBranchName(name) ? await repo.readBranch(name) : null;
    if (!repo || !id) return null;
    const [info] = await branchInfos(caches, repo, [{ name, id }]);
    return info;
  });
}

/** Whether the project has the branch `name` (HEAD asks no more). */
export async function branchExists(store: Store, ctx: ProjectContext, name: string): Promise<boolean> {
  const repo = await projectRepository(store, ctx.project);
  if (!repo || !isValidBranchName(name)) return false;
  return (await repo.readBranch(name)) !== null;
}

/**
 * POST /projects/:id/repository/branches (GitLab's Branches::CreateService): `name` made at the commit `ref` names.
 * As GitLab's, a repository without a branch is first given its default branch, holding an empty README.md.
 */
export async function createBranch(
  store: Store,
  caches: ServingCaches,
  ctx: ProjectContext,
  name: string,
  ref: string,
  author: FileWrite['author'],
): Promise<BranchInfo> {
  const existing = await projectRepository(store, ctx.project);
  if (!existing || !(await existing.hasBranches())) {
    const branch = ctx.project.default_branch ?? 'main';
    const write = { action: 'create', filePath: 'README.md', content: Buffer.alloc(0), branch, author } as const;
    await writeFile(store, ctx, { ...write, message: 'Add README.md' }).catch((error) => {
      // Another request made the first branch meanwhile: there is one now, which is what this wanted.
      if (!(error instanceof Failure && error.reason === 'bad_request_message')) throw error;
    });
  }
  if (!isValidBranchName(name)) throw badRequest('Branch name is invalid');
  const repo = await projectRepository(store, ctx.project);
  if (repo && (await repo.readBranch(name))) throw badRequest(BRANCH_EXISTS);
  const commit = repo && (await repo.resolveCommit(ref));
  if (!repo || !commit) throw badRequest(`Failed to create branch '${name}': invalid reference name '${ref}'`);
  try {
    await store.transaction(async (tx) => {
      // The project first, as its delete locks it: one deleted since it was read is gone, not given a branch.
      if (!(await tx.projects.lock(ctx.project.id, 'share'))) throw notFound('Project');
      const bound = await projectRepository(tx, ctx.project);
      if (!bound) throw notFound('Project');
      await bound.moveRef(`refs/heads/${name}`, null, commit);
    });
  } catch (error) {
    if (error instanceof RefConflict) throw badRequest(BRANCH_EXISTS);
    if (error instanceof RefNameClash)
      throw badRequest(`Failed to create branch '${name}': Branch name conflicts with existing branch hierarchy.`);
    throw error;
  }
  const [info] = await branchInfos(caches, repo, [{ name, id: commit }]);
  return info;
}

const BRANCH_EXISTS = 'Branch already exists';

/**
 * A branch name a request's path gives (GitLab's find_branch!): 400 when git's rules refuse it. One past the
 * length no branch here reaches is left to be not found, as GitLab, which sets no length, answers it.
 */
export function requireBranchName(name: string): string {
  if (name.length <= MAX_BRANCH_NAME && !isValidBranchName(name)) throw badRequest('The branch refname is invalid');
  return name;
}

/**
 * DELETE /projects/:id/repository/branches/:branch (GitLab's Branches::DeleteService): 404 Branch Not Found, 412
 * when its commit was authored after `ifUnmodifiedSince`, and the default branch refused as GitLab's hooks refuse it.
 */
export async function deleteBranch(
  store: Store,
  caches: ServingCaches,
  ctx: ProjectContext,
  name: string,
  ifUnmodifiedSince: string | undefined,
): Promise<void> {
  const found = await findBranch(store, caches, ctx, name);
  if (!found) throw notFound('Branch');
  checkUnmodifiedSince(Date.parse(found.commit.authoredAt), ifUnmodifiedSince);
  if (found.default) throw badRequest('The default branch of a project cannot be deleted.');
  try {
    await store.transaction(async (tx) => {
      if (!(await tx.projects.lock(ctx.project.id, 'share'))) throw notFound('Project');
      const repo = await projectRepository(tx, ctx.project);
      if (!repo) throw notFound('Branch');
      await repo.moveRef(`refs/heads/${name}`, found.commit.id, null);
    });
  } catch (error) {
    // Moved or deleted since it was read: GitLab's rm_branch at the target it read fails the same way.
    if (error instanceof RefConflict) throw badRequest('Failed to remove branch');
    throw error;
  }
}

/** Each branch with its commit, and whether it is merged: git tells that, for the branches not at the default's head. */
async function branchInfos(caches: ServingCaches, repo: GitRepository, heads: { name: string; id: string }[]) {
  const root = await repo.readBranch(repo.head);
  const others = heads.filter((h) => root !== null && h.id !== root).map((h) => h.name);
  // Past the time budget (a history git cannot walk in time), no branch is said to be merged rather than none listed.
  const merged =
    root && others.length
      ? await readingCache(caches, repo, (dir) => branchesMergedInto(dir, root, others, renderBudget())).catch(
          (error) => {
            if (error instanceof GitTimeout) return new Set<string>();
            throw error;
          },
        )
      : new Set<string>();
  const infos: BranchInfo[] = [];
  const { commit: message } = messageBudget();
  for (const head of heads) {
    const [commit] = await repo.log(head.id, { skip: 0, limit: 1, message });
    infos.push({ name: head.name, commit, merged: merged.has(head.name), default: head.name === repo.head });
  }
  return infos;
}

/**
 * `git log --since --until --author`, as GitLab's commits list asks Gitaly: the committer's time within the
 * bounds, the author's `name <email>` holding the text. None when nothing is asked.
 */
function commitMatcher(opts: { since?: string; until?: string; author?: string }) {
  const since = opts.since ? Date.parse(opts.since) : null;
  const until = opts.until ? Date.parse(opts.until) : null;
  const { author } = opts;
  if (since === null && until === null && !author) return undefined;
  return (c: CommitInfo) => {
    const at = Date.parse(c.committedAt);
    return (
      (since === null || at >= since) &&
      (until === null || at <= until) &&
      (!author || `${c.authorName} <${c.authorEmail}>`.includes(author))
    );
  };
}
