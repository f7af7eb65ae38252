// Reading snippets: one by id or in its project as a viewer may see it, its files with their bytes, one file
// at any revision, and whether anyone may read it. Lists are the finder's (finder.ts).
import type { Store } from '../../storage/db/store.ts';
import type { Snippet } from '../../storage/db/schema.ts';
import type { IndexedFile } from '../../storage/db/tables/snippets.ts';
import { objectId } from '../../storage/git/objects.ts';
import { deletedMeanwhile, snippetRepository } from '../git-repositories.ts';
import { readSnippetState, type SnippetState } from '../../storage/db/snippet-writes.ts';
import { type GitRepository, type LargeBlob, MissingObject } from '../../storage/git/repository.ts';
import { Failure, notFound } from '../failure.ts';
import { can, NO_ACCESS, type Viewer } from '../policy.ts';
import { findReadableProject, type ProjectContext } from '../projects.ts';

export interface SnippetFile extends IndexedFile {
  content: Buffer;
}

/** Every file of the snippet's head with its bytes, in git's order. */
export const snippetFiles = (store: Store, snippet: Pick<Snippet, 'id'>): Promise<SnippetFile[]> =>
  headFiles(store, snippet, withContents);

/** Every file of the snippet's head as a page shows it (rendering.ts#Viewable), in git's order. */
export const snippetFilesToView = (store: Store, snippet: Pick<Snippet, 'id'>) =>
  headFiles(store, snippet, async (repo, index) =>
    Promise.all(
      index.map(async (f) => {
        const content = await repo.sendableBlob(f.blob_id);
        if (!content) throw new MissingObject(`repository ${repo.id} has no blob ${f.blob_id} (${f.path})`);
        return { ...f, content };
      }),
    ),
  );

/** The snippet's head files as `read` reads them from its repository: 404 if the snippet went meanwhile. */
async function headFiles<T>(
  store: Store,
  snippet: Pick<Snippet, 'id'>,
  read: (repo: GitRepository, index: IndexedFile[]) => Promise<T[]>,
): Promise<T[]> {
  const index = await store.snippets.fileIndex(snippet.id);
  if (!index.length) return [];
  return read(await snippetRepository(store, snippet), index).catch((error) =>
    error instanceof MissingObject
      ? deletedMeanwhile(store, { kind: 'snippet', id: snippet.id }, error)
      : Promise.reject(error),
  );
}

export async function withContents(repo: GitRepository, index: IndexedFile[]): Promise<SnippetFile[]> {
  const blobs = await repo.readBlobs(index.map((f) => f.blob_id));
  return index.map((f) => {
    const content = blobs.get(f.blob_id);
    if (!content) throw new MissingObject(`repository ${repo.id} has no blob ${f.blob_id} (${f.path})`);
    return { ...f, content };
  });
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
  return snippet && visibleWithProject(store, viewer, snippet);
}

/** The same with the paths of its files (git's order), read in the same statement, for presenting it. */
export async function findVisibleSnippetWithPaths(store: Store, viewer: Viewer, id: number) {
  const found = await store.snippets.findWithPaths(id);
  const visible = found && (await visibleWithProject(store, viewer, found.snippet));
  return visible && { ...visible, paths: found.paths };
}

/** The snippet with its project, if the viewer may see it. */
async function visibleWithProject(
  store: Store,
  viewer: Viewer,
  snippet: Snippet,
): Promise<{ snippet: Snippet; ctx: ProjectContext | null } | undefined> {
  if (snippet.project_id === null) return mayReadPersonal(viewer, snippet) ? { snippet, ctx: null } : undefined;
  const ctx = await findReadableProject(store, viewer, String(snippet.project_id)).catch((error) => {
    if (error instanceof Failure) return undefined;
    throw error;
  });
  if (!ctx || !can(viewer, 'read_project_snippets', ctx)) return undefined;
  return can(viewer, 'read_snippet', { ...ctx, snippet }) ? { snippet, ctx } : undefined;
}

/** The policy's read_snippet for a personal snippet. */
const mayReadPersonal = (viewer: Viewer, snippet: Snippet) =>
  can(viewer, 'read_snippet', { project: null, access: NO_ACCESS, snippet });

/** The personal snippet `id` if the viewer may see it (not a project snippet of that id). */
export async function findVisiblePersonalSnippet(store: Store, viewer: Viewer, id: number) {
  const snippet = await store.snippets.findInProject(null, id);
  return snippet && mayReadPersonal(viewer, snippet) ? snippet : undefined;
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

/**
 * One file of a snippet at a branch, tag or commit, with its blob id: the head through the index of its
 * files, any other revision through its commit's tree. Answers the failure GitLab gives for a missing ref or file.
 */
export async function readSnippetFile(
  store: Store,
  snippet: Snippet,
  ref: string,
  filePath: string,
): Promise<{ content: Buffer | LargeBlob; blobId: string }> {
  if (!snippet.head_commit) throw notFound('Snippet');
  const repo = await snippetRepository(store, snippet);
  try {
    if (ref === snippet.head_commit || ref === snippet.default_branch || ref === 'HEAD') {
      const file = (await store.snippets.fileIndex(snippet.id)).find((f) => f.path === filePath);
      const content = file && (await repo.sendableBlob(file.blob_id));
      if (!file || !content) throw notFound('File');
      return { content, blobId: file.blob_id };
    }
    const commit = await repo.resolveCommit(ref);
    if (!commit) throw notFound('Reference');
    const file = await repo.sendableFile(commit, filePath);
    if (!file) throw notFound('File');
    return { content: file.content, blobId: file.id };
  } catch (error) {
    // A commit, tree or large blob's part gone midway.
    if (error instanceof MissingObject) await deletedMeanwhile(store, { kind: 'snippet', id: snippet.id }, error);
    throw error;
  }
}

/** The first file (git order) of the current version, or the legacy content of a snippet without files. */
export async function firstSnippetFile(
  store: Store,
  snippet: Snippet,
): Promise<{ path: string | null; content: Buffer | LargeBlob; blobId: string }> {
  const [first] = await store.snippets.fileIndex(snippet.id);
  if (!first) {
    // Its files are deleted with it: none may also mean it is gone since it was found. Its repository tells:
    // none while its row is there is damage (snippetRepository), and so are no files in one that is there.
    if (snippet.head_commit) {
      await snippetRepository(store, snippet);
      await deletedMeanwhile(
        store,
        { kind: 'snippet', id: snippet.id },
        new MissingObject(`snippet ${snippet.id} has no files`),
      );
    }
    const content = Buffer.from(snippet.content);
    return { path: null, content, blobId: objectId('blob', content) };
  }
  const content = await (await snippetRepository(store, snippet))
    .sendableBlob(first.blob_id)
    .catch((error) =>
      error instanceof MissingObject
        ? deletedMeanwhile(store, { kind: 'snippet', id: snippet.id }, error)
        : Promise.reject(error),
    );
  if (!content)
    await deletedMeanwhile(
      store,
      { kind: 'snippet', id: snippet.id },
      new MissingObject(`snippet ${snippet.id} has no blob ${first.blob_id}`),
    );
  return { path: first.path, content: content!, blobId: first.blob_id };
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
  const snippet = await findVisiblePersonalSnippet(store, viewer, id);
  if (!snippet) throw notFound('Snippet');
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
