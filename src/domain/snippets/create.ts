// Creating a snippet, personal or in a project: checks, the spam check, one commit with every file, and the
// snippet's rows with its repository in one write (storage/db/snippet-writes.ts).
import type { Project, Snippet, User, Visibility } from '../../storage/db/schema.ts';
import { VISIBILITIES, VISIBILITY_LEVEL } from '../access.ts';
import { insertNewSnippet } from '../../storage/db/snippet-writes.ts';
import { notFound, unauthorized } from '../failure.ts';
import { isForeignKeyViolation } from '../../storage/db/database.ts';
import { isVisibilityRestricted } from '../policy.ts';
import type { ProjectContext } from '../projects.ts';
import { type ApplicationSettings, getSettings, indexedFileMaxBytes } from '../settings.ts';
import { nowIso } from '../tokens.ts';
import { applyActions, FileActionError } from './files.ts';
import { checkAttributes, MISSING_CONTENT } from './limits.ts';
import { type Text, utf8Bytes } from '../utf8.ts';
import { type Meta, type SnippetDeps, buildCommit, rejectSpam, repositoryError, restrictedError } from './commits.ts';

/**
 * The visibility levels a new or edited snippet may take, as GitLab's forms offer them: none the instance
 * restricts for this user, and in a project none above the project's own.
 */
export function visibilityChoices(
  viewer: User,
  project: Pick<Project, 'visibility'> | null,
  settings: Pick<ApplicationSettings, 'restricted_visibility_levels'>,
): Visibility[] {
  return VISIBILITIES.filter(
    (level) =>
      !isVisibilityRestricted(viewer, level, settings.restricted_visibility_levels) &&
      (project === null || VISIBILITY_LEVEL[level] <= VISIBILITY_LEVEL[project.visibility]),
  );
}

export interface CreateInput {
  title: string;
  description?: string | null;
  visibility?: Visibility;
  files: { file_path: string; content: Text }[];
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
  let firstContent: Buffer | null = null;
  for (const f of input.files) {
    if (files.has(f.file_path)) duplicate = true;
    const bytes = await utf8Bytes(f.content);
    firstContent ??= bytes;
    files.set(f.file_path, bytes);
  }
  checkAttributes(
    {
      title: input.title,
      description: input.description ?? null,
      // An empty `files` array passes Grape, and leaves GitLab's Snippet model no content: a model error.
      firstContent: firstContent ?? MISSING_CONTENT,
      files,
    },
    settings,
  );
  let created: Map<string, Buffer>;
  try {
    if (duplicate) throw new FileActionError('conflict');
    created = applyActions(
      new Map(),
      input.files.map((f) => ({ action: 'create', file_path: f.file_path, content: files.get(f.file_path) })),
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
  const { commit, indexed, objects } = await buildCommit(null, created, author, 'Initial commit');
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
    indexedFileMaxBytes: indexedFileMaxBytes(settings),
    userAgent: meta.userAgent.trim() ? { user_agent: meta.userAgent, ip_address: meta.ip, created_at: now } : null,
  });
  // The project deleted while the snippet was being created: as if it had been gone already. Its author deleted
  // since the request was signed in (a request of theirs, or one made as them with sudo): no one to sign it.
  return inserted.catch(async (error) => {
    if (!isForeignKeyViolation(error)) throw error;
    throw (await store.users.findById(author.id)) ? notFound('Project') : unauthorized();
  });
}
