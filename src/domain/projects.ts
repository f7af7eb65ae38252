// Projects: lookup by id or path with visibility (404, never 403), creation in a user's or a group's
// namespace, changes, archiving and deletion.
import type { Store } from '../storage/db/store.ts';
import type { PageOf, PageWindow } from '../storage/db/page.ts';
import type { ProjectListFilter, ProjectOrderColumn } from '../storage/db/tables/projects.ts';
import type { FeatureAccessLevel, Namespace, Project, ProjectsTable, User, Visibility } from '../storage/db/schema.ts';
import { writeFile } from './project-files.ts';
import { ancestorIds } from '../storage/db/tables/namespaces.ts';
import { isUniqueViolation } from '../storage/db/database.ts';
import { apiError, badRequest, forbidden, invalidFields, limitReached, notFound, tooLongError } from './failure.ts';
import { ACCESS } from './access.ts';
import { isValidBranchName, pathError, pathFromName } from './paths.ts';
import { getSettings } from './settings.ts';
import { nowIso } from './tokens.ts';
import {
  can,
  isVisibilityRestricted,
  mayCreatePersonalProjects,
  NO_ACCESS,
  restrictedLevelErrors,
  visibilityAllowedUnder,
  type Access,
  type Viewer,
} from './policy.ts';
import { groupAccess } from './groups.ts';
import type { Updateable } from 'kysely';
import { parseRowId } from './ids.ts';
import { removeProject } from './project-removal.ts';
import { findReadableUser } from './users.ts';

export interface ProjectContext {
  project: Project;
  namespace: Namespace;
  /** direct = project membership, inherited = highest membership of the ancestor groups. */
  access: Access;
}

export async function projectAccess(
  store: Store,
  viewer: Viewer,
  project: Project,
  namespace: Namespace,
): Promise<Access> {
  if (!viewer) return { direct: 0, inherited: 0 };
  const levels = await store.members.accessLevels(
    viewer.id,
    project.id,
    namespace.kind === 'group' ? ancestorIds(namespace) : [],
  );
  return { direct: levels.project, inherited: levels.group };
}

/** projectAccess for each project of a page, read in one query rather than one per row. */
async function projectAccesses(
  store: Store,
  viewer: Viewer,
  rows: { project: Project; namespace: Namespace }[],
): Promise<Access[]> {
  if (!viewer) return rows.map(() => NO_ACCESS);
  const levels = await store.members.accessLevelsOfMany(
    viewer.id,
    rows.map(({ project, namespace }) => ({
      id: project.id,
      namespaceIds: namespace.kind === 'group' ? ancestorIds(namespace) : [],
    })),
  );
  return rows.map(({ project }) => {
    const level = levels.get(project.id)!;
    return { direct: level.project, inherited: level.group };
  });
}

/**
 * GitLab's find_project!: digits are an id, anything with a '/' a full path (case-insensitive), a bare
 * word is not found. A project the viewer cannot read is 404 Project Not Found.
 */
export function findReadableProject(store: Store, viewer: Viewer, id: string): Promise<ProjectContext> {
  return store.memo(`readable-project:${viewer?.id ?? 'anonymous'}:${id}`, () => readableProject(store, viewer, id));
}

async function readableProject(store: Store, viewer: Viewer, id: string): Promise<ProjectContext> {
  let found: { project: Project; namespace: Namespace } | undefined;
  const number = parseRowId(id);
  if (number !== null) found = await store.projects.withNamespace({ id: number });
  else if (id.includes('/')) found = await store.projects.withNamespace({ fullPath: id });
  if (!found) throw notFound('Project');
  const { project, namespace } = found;
  const access = await projectAccess(store, viewer, project, namespace);
  if (!can(viewer, 'read_project', { project, access })) throw notFound('Project');
  return { project, namespace, access };
}

export interface NewProjectInput {
  name?: string;
  path?: string;
  namespace_id?: number;
  visibility?: Visibility;
  description?: string | null;
  snippets_access_level?: FeatureAccessLevel;
  repository_access_level?: FeatureAccessLevel;
  default_branch?: string;
  initialize_with_readme?: boolean;
}

function namespaceVisibilityError(level: Visibility, ns: Namespace) {
  return { visibility_level: [`${level} is not allowed since the namespace has a ${ns.visibility} visibility.`] };
}

/** Creates a project for `creator` in `namespace_id` (a group where they are developer+) or their own namespace. */
export async function createProject(
  store: Store,
  creator: NonNullable<Viewer> & Pick<User, 'namespace_id' | 'name' | 'email'>,
  input: NewProjectInput,
  /** Whose instance-wide limits apply (restricted levels, personal projects): the creator, or root for a seed. */
  actor: NonNullable<Viewer> = creator,
): Promise<ProjectContext> {
  const settings = await getSettings(store);
  // A namespace the creator may not use is a validation error in GitLab (Projects::CreateService#deny_namespace).
  const invalidNamespace = () => invalidFields({ namespace: ['is not valid'] });
  let namespace: Namespace | undefined;
  if (input.namespace_id !== undefined) {
    namespace = await store.namespaces.findById(input.namespace_id);
    if (!namespace) throw invalidNamespace();
    const access = namespace.kind === 'group' ? await groupAccess(store, creator, namespace) : NO_ACCESS;
    if (!can(creator, 'create_projects', { namespace, access })) throw invalidNamespace();
  } else {
    namespace = creator.namespace_id !== null ? await store.namespaces.findById(creator.namespace_id) : undefined;
    if (!namespace) throw invalidNamespace();
  }
  const name = input.name ?? input.path!;
  const path = input.path ?? pathFromName(input.name!);
  const visibility = input.visibility ?? settings.default_project_visibility;
  // Alone, before any other check, as GitLab's Projects::CreateService returns at once.
  if (isVisibilityRestricted(actor, visibility, settings.restricted_visibility_levels))
    throw invalidFields(restrictedLevelErrors(visibility));
  if (namespace.kind === 'user' && !mayCreatePersonalProjects(actor))
    throw limitReached('You cannot create projects in your personal namespace. Contact your GitLab administrator.');
  // GitLab fails to make the repository's HEAD of a name no branch can have.
  if (input.default_branch !== undefined && !isValidBranchName(input.default_branch))
    throw badRequest('Invalid branch name');
  const errors: Record<string, string[]> = {};
  const bad = pathError(path, false);
  if (bad) errors.path = [bad];
  const nameTooLong = tooLongError(name, MAX_NAME);
  if (nameTooLong) errors.name = [nameTooLong];
  const description = tooLongError(input.description, MAX_PROJECT_DESCRIPTION);
  if (description) errors.description = [description];
  if (!visibilityAllowedUnder(namespace, visibility))
    Object.assign(errors, namespaceVisibilityError(visibility, namespace));
  if (Object.keys(errors).length) throw invalidFields(errors);
  const fullPath = `${namespace.full_path}/${path}`;
  const taken: Record<string, string[]> = {};
  if (await store.projects.findByNameInNamespace(namespace.id, name)) taken.name = ['has already been taken'];
  if ((await store.projects.findByFullPath(fullPath)) || (await store.namespaces.findByFullPath(fullPath)))
    taken.path = ['has already been taken'];
  if (Object.keys(taken).length) throw invalidFields(taken);
  const ns = namespace;
  try {
    const created = await store.transaction(async (tx) => {
      // The namespace as committed now, kept from becoming less visible until this project is in it.
      const current = await tx.namespaces.lock(ns.id, 'share');
      if (!current) throw invalidNamespace();
      if (!visibilityAllowedUnder(current, visibility))
        throw invalidFields(namespaceVisibilityError(visibility, current));
      const now = nowIso();
      const project = await tx.projects.insert({
        namespace_id: ns.id,
        name,
        path,
        full_path: fullPath,
        description: input.description ?? null,
        visibility,
        default_branch: input.default_branch ?? settings.default_branch_name,
        snippets_access_level: input.snippets_access_level ?? 'enabled',
        repository_access_level: input.repository_access_level ?? 'enabled',
        archived: 0,
        creator_id: creator.id,
        created_at: now,
        last_activity_at: now,
      });
      // A personal project is owned by its namespace's owner, not by an admin who placed it there
      // (GitLab's Projects::CreateService#setup_authorizations); the creator maintains one in a group.
      const personal = ns.kind === 'user';
      await tx.members.insert({
        source_type: 'Project',
        source_id: project.id,
        user_id: personal ? (ns.owner_id ?? creator.id) : creator.id,
        access_level: personal ? ACCESS.owner : ACCESS.maintainer,
        created_at: now,
      });
      const access = await projectAccess(tx, creator, project, ns);
      return { project, namespace: ns, access };
    });
    if (input.initialize_with_readme) {
      await writeFile(store, created, {
        action: 'create',
        filePath: 'README.md',
        content: Buffer.from(
          `# ${created.project.name}\n${created.project.description ? `\n${created.project.description}\n` : ''}`,
        ),
        branch: created.project.default_branch ?? settings.default_branch_name,
        message: 'Initial commit',
        author: { name: creator.name, email: creator.email },
      });
    }
    return created;
  } catch (error) {
    if (isUniqueViolation(error)) throw invalidFields({ path: ['has already been taken'] });
    throw error;
  }
}

/** GitLab's Project model: `validates :description, length: { maximum: 2000 }`, and a name of at most 255. */
const MAX_PROJECT_DESCRIPTION = 2000;
const MAX_NAME = 255;

export interface ProjectChanges {
  name?: string;
  description?: string | null;
  visibility?: Visibility;
  snippets_access_level?: FeatureAccessLevel;
  repository_access_level?: FeatureAccessLevel;
  default_branch?: string;
  archived?: boolean;
}

export async function updateProject(
  store: Store,
  viewer: Viewer,
  ctx: ProjectContext,
  changes: ProjectChanges,
): Promise<ProjectContext> {
  if (changes.visibility !== undefined && changes.visibility !== ctx.project.visibility) {
    const { restricted_visibility_levels } = await getSettings(store);
    if (isVisibilityRestricted(viewer, changes.visibility, restricted_visibility_levels))
      throw invalidFields(restrictedLevelErrors(changes.visibility));
  }
  // GitLab's change_head fails for a name no branch can have (and for a branch not there, which snippetd lets
  // be: a first push may make it, as for a new project's).
  if (changes.default_branch !== undefined && !isValidBranchName(changes.default_branch))
    throw apiError('Could not set the default branch');
  const errors: Record<string, string[]> = {};
  const description = tooLongError(changes.description, MAX_PROJECT_DESCRIPTION);
  if (description) errors.description = [description];
  const nameTooLong = tooLongError(changes.name, MAX_NAME);
  if (nameTooLong) errors.name = [nameTooLong];
  if (changes.visibility !== undefined && !visibilityAllowedUnder(ctx.namespace, changes.visibility)) {
    Object.assign(errors, namespaceVisibilityError(changes.visibility, ctx.namespace));
  }
  if (changes.name !== undefined && changes.name.toLowerCase() !== ctx.project.name.toLowerCase()) {
    if (await store.projects.findByNameInNamespace(ctx.namespace.id, changes.name))
      errors.name = ['has already been taken'];
  }
  if (Object.keys(errors).length) throw invalidFields(errors);
  const set: Updateable<ProjectsTable> = {
    ...(changes.name !== undefined && { name: changes.name }),
    ...(changes.description !== undefined && { description: changes.description }),
    ...(changes.visibility !== undefined && { visibility: changes.visibility }),
    ...(changes.snippets_access_level !== undefined && { snippets_access_level: changes.snippets_access_level }),
    ...(changes.repository_access_level !== undefined && {
      repository_access_level: changes.repository_access_level,
    }),
    ...(changes.default_branch !== undefined && { default_branch: changes.default_branch }),
    ...(changes.archived !== undefined && { archived: changes.archived ? 1 : 0 }),
  };
  if (Object.keys(set).length === 0) return ctx;
  const { visibility } = changes;
  const project = await store.transaction(async (tx) => {
    if (visibility !== undefined && visibility !== ctx.project.visibility) {
      // The namespace as committed now, kept from becoming less visible until this change is made.
      const current = await tx.namespaces.lock(ctx.namespace.id, 'share');
      if (current && !visibilityAllowedUnder(current, visibility))
        throw invalidFields(namespaceVisibilityError(visibility, current));
    }
    // Deleted since it was read (a delete answers 202 and goes on after it; the read may be a cached copy):
    // 404, as a read would answer now, not the update's missing row.
    if (!(await tx.projects.lock(ctx.project.id, 'share'))) throw notFound('Project');
    return tx.projects.update(ctx.project.id, { ...set, last_activity_at: nowIso() });
  });
  return { ...ctx, project };
}

/**
 * A commit's `start_project`, which GitLab takes only from the project's fork network: no project here is a fork,
 * so one the viewer can see is 403 with GitLab's message, and one they cannot 404.
 */
export async function refuseStartProject(store: Store, viewer: Viewer, id: string): Promise<never> {
  const start = await findReadableProject(store, viewer, id);
  throw forbidden(
    `Project is not included in the fork network for ${start.namespace.full_name} / ${start.project.name}`,
  );
}

/** Removes the project with its members, its snippets and every repository of theirs, in one transaction. */
export async function deleteProject(store: Store, ctx: ProjectContext): Promise<void> {
  await store.transaction(async (tx) => {
    if (!(await removeProject(tx, ctx.project.id))) throw notFound('Project');
  });
}

/** Who lists projects, as the lists' visibility rule (storage's ProjectListFilter) reads them; null: a visitor. */
export const listViewer = (viewer: Viewer) =>
  viewer && { id: viewer.id, admin: viewer.admin === 1, external: viewer.external === 1 };

/**
 * What a list of projects asks for (GET /projects's parameters as the domain reads them): the list's filters but
 * whose they are, which the viewer and the scope say, and the viewer's own `owned`.
 */
export type ProjectListQuery = Omit<ProjectListFilter, 'viewer' | 'namespaceId' | 'underNamespace'> & {
  owned?: boolean;
  order: { column: ProjectOrderColumn; direction: 'asc' | 'desc' };
};

/** Whose projects: those in a namespace (`below`: and in the groups below it); null: every one the viewer sees. */
export type ProjectListScope = { namespace: Namespace; below: boolean } | null;

/**
 * GET /users/:user_id/projects's scope: the user's own namespace (by id or username); 404 User Not Found for one
 * the viewer may not read.
 */
export async function userProjectsScope(store: Store, viewer: Viewer, idOrUsername: string): Promise<ProjectListScope> {
  const user = await findReadableUser(store, viewer, parseRowId(idOrUsername) ?? idOrUsername);
  const namespace = user.namespace_id === null ? undefined : await store.namespaces.findById(user.namespace_id);
  if (!namespace) throw notFound('User');
  return { namespace, below: false };
}

/**
 * One page of the projects the viewer may see (GitLab's ProjectsFinder), in `scope`, each with its namespace and
 * the viewer's access to it (what the entity's abilities ask).
 * `owned` and `minAccessLevel` are the viewer's own access, which a visitor has none of (ignored for them).
 */
export async function listProjects(
  store: Store,
  viewer: Viewer,
  q: ProjectListQuery,
  scope: ProjectListScope,
  window: PageWindow,
): Promise<PageOf<ProjectContext>> {
  const { owned, order, ...filters } = q;
  // A user's own projects (GitLab's PersonalProjectsFinder) are whoever's they are: owned and membership say nothing.
  const personal = scope?.namespace.kind === 'user';
  const filter: ProjectListFilter = {
    ...filters,
    viewer: listViewer(viewer),
    membership: q.membership && viewer !== null && !personal,
    minAccessLevel: viewer ? (owned && !personal ? ACCESS.owner : q.minAccessLevel) : undefined,
    ...(scope &&
      (scope.below ? { underNamespace: scope.namespace.traversal_ids } : { namespaceId: scope.namespace.id })),
  };
  const page = await store.projects.visiblePage(filter, order, window);
  const ids = [...new Set(page.rows.map((r) => r.namespace_id))];
  const namespaces = new Map((await store.namespaces.findManyByIds(ids)).map((n) => [n.id, n]));
  const rows = page.rows.map((project) => ({ project, namespace: namespaces.get(project.namespace_id)! }));
  const accesses = await projectAccesses(store, viewer, rows);
  return { ...page, rows: rows.map((row, i) => ({ ...row, access: accesses[i] })) };
}

/** One page of the projects directly in a namespace that the viewer may see, by name. */
export function visibleProjectsIn(store: Store, viewer: Viewer, namespaceId: number, window: PageWindow) {
  const filter = {
    viewer: listViewer(viewer),
    namespaceId,
  };
  return store.projects.visiblePage(filter, { column: 'name', direction: 'asc' }, window);
}
