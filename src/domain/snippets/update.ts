// Updating a snippet (file actions or the deprecated content/file_name pair) as one commit, computed from one
// read of the snippet and written only if nobody wrote it meanwhile (storage/db/snippet-writes.ts).
import type { Snippet, User, Visibility } from '../../storage/db/schema.ts';
import {
  readSnippetState,
  type SnippetChange,
  type SnippetState,
  writeSnippetChange,
} from '../../storage/db/snippet-writes.ts';
import { MissingObject, RefConflict } from '../../storage/git/repository.ts';
import { conflict, Failure, notFound, serviceError } from '../failure.ts';
import { isVisibilityRestricted } from '../policy.ts';
import { getSettings, indexedFileMaxBytes, type ApplicationSettings } from '../settings.ts';
import { nowIso } from '../tokens.ts';
import { applyActions, FileActionError, isGeneratedName, isValidAction, type FileAction } from './files.ts';
import { checkAttributes } from './limits.ts';
import { byteOrder } from '../../order.ts';
import { type Meta, type SnippetDeps, buildCommit, rejectSpam, repositoryError, restrictedError } from './commits.ts';
import { withContents } from './reads.ts';
import { type Text, Utf8Text, utf8Bytes } from '../utf8.ts';

export const INVALID_ACTIONS = 'Snippet actions have invalid data';
export const MULTIPLE_FILES = 'To update Snippets with multiple files, you must use the `files` parameter';

export interface UpdateInput {
  title?: string;
  description?: string | null;
  visibility?: Visibility;
  files?: FileAction[];
  content?: Text;
  file_name?: string;
  /**
   * The snippet's version (snippetVersion) when the editor read it: a page's edit form sends it, so a save
   * over someone else's change is refused (STALE_EDIT) rather than overwriting it. The API has no such field.
   */
  baseVersion?: string;
}

export const STALE_EDIT = 'This snippet was changed since you opened it.';

/** What changes whenever anything of a snippet changes: its files (head commit) or its fields (updated_at). */
export const snippetVersion = (snippet: Pick<Snippet, 'head_commit' | 'updated_at'>) =>
  `${snippet.head_commit ?? ''}@${snippet.updated_at}`;

/**
 * The deprecated content/file_name pair as one action on the single existing file
 * (docs/gitlab-compatibility.md#snippet-update).
 */
function legacyAction(current: string, input: UpdateInput): FileAction {
  // An empty name is a move as in GitLab: the file becomes snippetfile<N>.txt, unless it is one already.
  const target = input.file_name === '' && isGeneratedName(current) ? current : (input.file_name ?? current);
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
      const change = await changeOf(deps, viewer, state, input, meta, settings).catch(async (error) => {
        // Deleted meanwhile (with its project), the snippet took its objects along: it is gone, not broken.
        if (error instanceof MissingObject && !(await readSnippetState(deps.store, project_id, id)))
          throw notFound('Snippet');
        throw error;
      });
      const written = await writeSnippetChange(deps.store, change);
      if (!written) continue;
      // Once committed, kept in this node's object cache: the next update reads these files back.
      if (change.commit) {
        state.repository!.remember(change.commit.objects);
        deps.committed?.(id, change.commit.id);
      }
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
  if (input.baseVersion !== undefined && input.baseVersion !== snippetVersion(snippet)) throw conflict(STALE_EDIT);
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
    return { from: state, row, commit: null, fromVersion: input.baseVersion !== undefined };
  }
  if (!state.repository) throw new Error(`snippet ${snippet.id} has no repository`);
  const encoded: FileAction[] = [];
  for (const a of actions)
    encoded.push(
      typeof a.content === 'string' || a.content instanceof Utf8Text
        ? { ...a, content: await utf8Bytes(a.content) }
        : a,
    );
  const current = await withContents(state.repository, index);
  const modes = snippet.head_commit ? await state.repository.fileModes(snippet.head_commit) : new Map<string, string>();
  let next: Map<string, Buffer>;
  try {
    next = applyActions(new Map(current.map((f) => [f.path, f.content])), encoded, settings.max_snippet_files, modes);
  } catch (error) {
    throw repositoryError('updating', error, settings);
  }
  checkAttributes({ title, description, firstContent: null, files: next }, settings);
  if (spamRelevant) await rejectSpam(deps, viewer, meta, { title, description, files: next });
  const { commit, indexed, objects } = await buildCommit(snippet.head_commit, next, viewer, 'Update snippet', modes);
  const first = actions[0];
  return {
    from: state,
    row: {
      ...row,
      head_commit: commit,
      // The one file of a one-file update is the one left, whatever name it was given.
      file_name: legacy ? [...next.keys()][0] : first.file_path || first.previous_path || snippet.file_name,
    },
    commit: { id: commit, objects, files: indexed, indexedFileMaxBytes: indexedFileMaxBytes(settings) },
    fromVersion: input.baseVersion !== undefined,
  };
}
