// Groups (nested namespaces): lookup with visibility, creation, and changes by owners.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Store } from '../storage/db/store.ts';
import type { Namespace, Visibility } from '../storage/db/schema.ts';
import { ancestorIds, type GroupListFilter, type GroupOrderColumn } from '../storage/db/tables/namespaces.ts';
import type { PageOf, PageWindow } from '../storage/db/page.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../storage/db/database.ts';
import { MAX_ROW_ID } from './ids.ts';
import { apiError, Failure, invalidFields, notFound, tooLongError, unauthorized } from './failure.ts';

import { ACCESS, VISIBILITY_LEVEL } from './access.ts';
import { pathError } from './paths.ts';
import { getSettings } from './settings.ts';
import { nowIso } from './tokens.ts';
import {
  authorize,
  can,
  isVisibilityRestricted,
  restrictedLevelErrors,
  visibilityAllowedUnder,
  type Access,
  type Viewer,
} from './policy.ts';
import { parseRowId } from './ids.ts';
import { removeProject } from './project-removal.ts';
import { loopSlice } from '../loop-slice.ts';

/** GitLab's Namespace::Detail: `validates :description, length: { maximum: 255 }`; Namespace: a name of 255. */
const MAX_GROUP_DESCRIPTION = 255;
const MAX_GROUP_NAME = 255;
/** GitLab's Group::NUMBER_OF_ANCESTORS_ALLOWED: a group may be 21 levels deep. */
const MAX_GROUP_ANCESTORS = 20;
const CHILDREN_A_TURN = 100;

export interface GroupContext {
  group: Namespace;
  access: Access;
}

export async function groupAccess(store: Store, viewer: Viewer, group: Namespace): Promise<Access> {
  if (!viewer) return { direct: 0, inherited: 0 };
  return accessFrom(await store.members.groupLevels(viewer.id, ancestorIds(group)), group);
}

/** A group's access, from the viewer's levels in it and the groups above it (by namespace id). */
export function accessFrom(levels: Map<number, number>, group: Namespace): Access {
  const inherited = Math.max(0, ...ancestorIds(group).map((id) => levels.get(id) ?? 0));
  return { direct: levels.get(group.id) ?? 0, inherited };
}

/** `:id` is a number or a (URL-decoded) full path; groups the viewer cannot read are 404. */
export async function findReadableGroup(store: Store, viewer: Viewer, id: string): Promise<GroupContext> {
  const number = parseRowId(id);
  const group = number !== null ? await store.namespaces.findById(number) : await store.namespaces.findByFullPath(id);
  if (group?.kind !== 'group') throw notFound('Group');
  const access = await groupAccess(store, viewer, group);
  // Membership below is asked only when it could make the difference (a query per group).
  const memberBelow =
    viewer !== null &&
    !can(viewer, 'read_group', { group, access, memberBelow: false }) &&
    (await store.members.hasMembershipBelow(viewer.id, group.traversal_ids));
  if (!can(viewer, 'read_group', { group, access, memberBelow })) throw notFound('Group');
  return { group, access };
}

function visibilityError(level: Visibility, parent: Namespace): Record<string, string[]> {
  return {
    visibility_level: [`${level} is not allowed since the parent group has a ${parent.visibility} visibility.`],
  };
}

export interface NewGroupInput {
  name: string;
  path: string;
  parent_id?: number;
  visibility?: Visibility;
  description?: string;
}

/** Whether the viewer may create a top-level group (an instance setting) or a subgroup of `parent`. */
export async function authorizeNewGroup(store: Store, viewer: Viewer, parent: GroupContext | null): Promise<void> {
  if (parent) authorize(viewer, 'create_subgroup', parent);
  else authorize(viewer, 'create_group', { canCreateGroup: (await getSettings(store)).can_create_group });
}

/** Creates a group owned by `creator`, at the top or under `parentCtx` (found and authorized by the caller). */
export async function createGroup(
  store: Store,
  creator: NonNullable<Viewer>,
  parentCtx: GroupContext | null,
  input: NewGroupInput,
): Promise<Namespace> {
  const settings = await getSettings(store);
  const parent = parentCtx?.group ?? null;
  const visibility =
    input.visibility ??
    (parent && !visibilityAllowedUnder(parent, settings.default_group_visibility)
      ? parent.visibility
      : settings.default_group_visibility);
  // GitLab's Groups API answers this one as a sentence with Ruby's inspect of the errors (Failed to save group).
  if (isVisibilityRestricted(creator, visibility, settings.restricted_visibility_levels)) {
    const [message] = restrictedLevelErrors(visibility).visibility_level;
    throw apiError(`Failed to save group {:visibility_level=>[${JSON.stringify(message)}]}`);
  }
  const errors: Record<string, string[]> = {};
  const bad = pathError(input.path, parent === null);
  if (bad) errors.path = [bad];
  if (parent && !visibilityAllowedUnder(parent, visibility)) Object.assign(errors, visibilityError(visibility, parent));
  const description = tooLongError(input.description, MAX_GROUP_DESCRIPTION);
  if (description) errors.description = [description];
  const name = tooLongError(input.name, MAX_GROUP_NAME);
  if (name) errors.name = [name];
  if (parent && parent.traversal_ids.split('/').length > MAX_GROUP_ANCESTORS)
    errors.parent_id = ['has too deep level of nesting'];
  if (Object.keys(errors).length) throw invalidFields(errors);
  const fullPath = parent ? `${parent.full_path}/${input.path}` : input.path;
  // A path names one thing: a group, a user or a project (GitLab's routes), as a project's create checks too.
  if (
    (await store.namespaces.findByFullPath(fullPath)) ||
    (!parent && (await store.users.findByUsername(fullPath))) ||
    (parent && (await store.projects.findByFullPath(fullPath)))
  ) {
    throw invalidFields({ path: ['has already been taken'] });
  }
  try {
    return await store.transaction(async (tx) => {
      if (parent) {
        // The parent as committed now, kept from becoming less visible until this subgroup is in it.
        const current = await tx.namespaces.lock(parent.id, 'share');
        if (!current) throw notFound('Parent group');
        if (!visibilityAllowedUnder(current, visibility)) throw invalidFields(visibilityError(visibility, current));
      }
      const now = nowIso();
      const group = await tx.namespaces.insert(
        {
          kind: 'group',
          name: input.name,
          path: input.path,
          full_path: fullPath,
          full_name: parent ? `${parent.full_name} / ${input.name}` : input.name,
          parent_id: parent?.id ?? null,
          owner_id: null,
          visibility,
          description: input.description ?? '',
          file_template_project_id: null,
          created_at: now,
        },
        parent,
        tx.kysely,
      );
      await tx.members.insert({
        source_type: 'Namespace',
        source_id: group.id,
        user_id: creator.id,
        access_level: ACCESS.owner,
        created_at: now,
      });
      return group;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw invalidFields({ path: ['has already been taken'] });
    // Its creator deleted since the request was signed in (a request of theirs, or one made as them with sudo):
    // no one is there to own it (the parent is locked above).
    if (isForeignKeyViolation(error)) throw unauthorized();
    throw error;
  }
}

export interface GroupChanges {
  name?: string;
  visibility?: Visibility;
  description?: string;
  file_template_project_id?: number | null;
}

/** The most visible project or subgroup inside the group: a group may not become less visible than it. */
async function highestVisibilityBelow(store: Store, group: Namespace): Promise<number> {
  const rows = await store.kysely
    .selectFrom('namespaces')
    .select('visibility')
    .where('traversal_ids', 'like', `${group.traversal_ids}/%`)
    .union(
      store.kysely
        .selectFrom('projects')
        .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
        .select('projects.visibility')
        .where((eb) =>
          eb.or([
            eb('namespaces.traversal_ids', '=', group.traversal_ids),
            eb('namespaces.traversal_ids', 'like', `${group.traversal_ids}/%`),
          ]),
        ),
    )
    .execute();
  return Math.max(-1, ...rows.map((r) => VISIBILITY_LEVEL[r.visibility]));
}

export async function updateGroup(
  store: Store,
  viewer: Viewer,
  group: Namespace,
  changes: GroupChanges,
): Promise<Namespace> {
  if (changes.visibility !== undefined && changes.visibility !== group.visibility) {
    const { restricted_visibility_levels } = await getSettings(store);
    if (isVisibilityRestricted(viewer, changes.visibility, restricted_visibility_levels))
      throw invalidFields(restrictedLevelErrors(changes.visibility));
  }
  const description = tooLongError(changes.description, MAX_GROUP_DESCRIPTION);
  if (description) throw invalidFields({ description: [description] });
  const name = tooLongError(changes.name, MAX_GROUP_NAME);
  if (name) throw invalidFields({ name: [name] });
  if (changes.file_template_project_id !== undefined && changes.file_template_project_id !== null) {
    await requireProjectInHierarchy(store, group, changes.file_template_project_id);
  }
  return store.transaction(async (tx) => {
    if (changes.visibility !== undefined && changes.visibility !== group.visibility) {
      // Checked as committed now, the parent locked before the group (ancestors first): no project or subgroup
      // is added or made more visible inside the group meanwhile, and the parent stays as it is.
      const parent = group.parent_id ? await tx.namespaces.lock(group.parent_id, 'share') : null;
      if (parent && !visibilityAllowedUnder(parent, changes.visibility))
        throw invalidFields(visibilityError(changes.visibility, parent));
      await tx.namespaces.lock(group.id, 'update');
      if (VISIBILITY_LEVEL[changes.visibility] < (await highestVisibilityBelow(tx, group))) {
        throw invalidFields({
          visibility_level: [
            `${changes.visibility} is not allowed since there are sub-groups or projects with higher visibility.`,
          ],
        });
      }
    }
    const updated = await tx.namespaces.update(group.id, {
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.visibility !== undefined && { visibility: changes.visibility }),
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.file_template_project_id !== undefined && {
        file_template_project_id: changes.file_template_project_id,
      }),
    });
    if (changes.name !== undefined && changes.name !== group.name) await refreshFullNames(tx, updated);
    return tx.namespaces.findById(group.id) as Promise<Namespace>;
  });
}

/** A group's file template project must live inside the group's own hierarchy. */
async function requireProjectInHierarchy(store: Store, group: Namespace, projectId: number): Promise<void> {
  const project = await store.projects.findById(projectId);
  const ns = project ? await store.namespaces.findById(project.namespace_id) : undefined;
  const root = group.traversal_ids.split('/')[0];
  if (!ns || !(ns.traversal_ids === root || ns.traversal_ids.startsWith(`${root}/`))) {
    throw invalidFields({ file_template_project_id: ['is invalid'] });
  }
}

/**
 * Full names ("Parent / Child") are stored; a rename rewrites the group's, and its descendants' in one statement:
 * one by one, a group's thousands of subgroups were as many statements in the transaction that holds every
 * other write. `group` is its row as the transaction reads it, its full name not yet rewritten.
 */
async function refreshFullNames(store: Store, group: Namespace): Promise<void> {
  const parent = group.parent_id ? await store.namespaces.findById(group.parent_id) : null;
  const fullName = parent ? `${parent.full_name} / ${group.name}` : group.name;
  await store.namespaces.update(group.id, { full_name: fullName });
  // Where the rest of a descendant's full name begins, in characters as substr counts them.
  const rest = [...group.full_name].length + 1;
  await store.kysely
    .updateTable('namespaces')
    .set({ full_name: sql<string>`${fullName} || substr(full_name, ${rest})` })
    .where('traversal_ids', 'like', `${group.traversal_ids}/%`)
    .execute();
}

/** The group with that id if the viewer may see it, else null. */
const readableGroup = (store: Store, viewer: Viewer, id: number) =>
  findReadableGroup(store, viewer, String(id)).catch((error) => {
    if (error instanceof Failure) return null;
    throw error;
  });

/**
 * A page of the groups directly inside `group` that the viewer may see, by name, after the child `after` (an
 * id; null: from the first), and whether more follow. Children are read CHILDREN_A_TURN at a time, others'
 * requests taking their turns between: each is looked up as any group (one to four queries, which SQLite
 * answers without a turn between). All of 20,000 subgroups, read and shown at once, held the event loop
 * 76-126 ms and took 1.2-1.4 s a request.
 */
/**
 * DELETE /groups/:id: the group with every group and project below it, their members, snippets and repositories
 * (GitLab's Groups::DestroyService). Each project goes in a transaction of its own, so a large group holds other
 * writes for no longer than one project does; then, the groups locked from the top so that nothing more can be
 * added inside them, whatever was added meanwhile and the groups themselves.
 */
export async function deleteGroup(store: Store, group: Namespace): Promise<void> {
  // SQLite's statements resolve without waiting: other requests go first now and then.
  const slice = loopSlice();
  for (const id of await store.projects.idsBelow(group)) {
    await store.transaction((tx) => removeProject(tx, id));
    if (slice.over()) await slice.pass();
  }
  await store.transaction(async (tx) => {
    if (!(await tx.namespaces.lock(group.id, 'update'))) throw notFound('Group');
    // A subgroup made inside one not locked yet shows up on the next read; once all are locked, none can be.
    const locked = new Set([group.id]);
    for (;;) {
      const fresh = (await tx.namespaces.subtree(group)).filter((ns) => !locked.has(ns.id));
      if (!fresh.length) break;
      for (const ns of fresh) {
        await tx.namespaces.lock(ns.id, 'update');
        locked.add(ns.id);
        if (slice.over()) await slice.pass();
      }
    }
    for (const id of await tx.projects.idsBelow(group)) await removeProject(tx, id);
    await tx.namespaces.deleteSubtree(group);
  });
}

export async function visibleChildGroups(
  store: Store,
  viewer: Viewer,
  group: Namespace,
  after: number | null,
  limit: number,
): Promise<{ groups: GroupContext[]; more: boolean }> {
  const visible: GroupContext[] = [];
  // Only a child the viewer may see is a place to go on from: any other id starts from the first, so that
  // trying ids tells nothing of the hidden ones.
  const shown = after === null || after > MAX_ROW_ID ? null : await readableGroup(store, viewer, after);
  let cursor: Namespace | null = shown && shown.group.parent_id === group.id ? shown.group : null;
  for (;;) {
    const children = await store.namespaces.childGroups(group.id, cursor, CHILDREN_A_TURN);
    for (const child of children) {
      const found = await readableGroup(store, viewer, child.id);
      if (found && visible.push(found) > limit) return { groups: visible.slice(0, limit), more: true };
    }
    if (children.length < CHILDREN_A_TURN) return { groups: visible, more: false };
    cursor = children[children.length - 1];
    await nextTurn();
  }
}

/** What GET /groups asks for (lib/api/groups.rb's group_list_params). */
export interface GroupListQuery {
  all_available?: boolean;
  owned: boolean;
  min_access_level?: number;
  search?: string;
  skip_groups?: number[];
  top_level_only: boolean;
  visibility?: Visibility;
  order_by: GroupOrderColumn;
  sort: 'asc' | 'desc';
}

/** GET /groups/:id/subgroups and /descendant_groups: the group whose subgroups are listed (a readable one). */
export interface GroupListParent {
  group: Namespace;
  /** Every group below it, not only those directly inside. */
  descendants: boolean;
}

/**
 * One page of the groups GitLab's GroupsFinder gives GET /groups. A visitor: the public groups. `owned`: the
 * groups the viewer owns as a member; `min_access_level`: those where the viewer is a member at that level or
 * more, and the groups below them. An administrator: every group, unless `all_available=false`. Anyone else:
 * the groups they are a member of, with the groups above and below them, and with `all_available` also every
 * group their visibility lets them see. Each listed group is one `findReadableGroup` would give them. With a
 * `parent`, only the groups inside it (GET /groups/:id/subgroups and /descendant_groups), by the same rules.
 */
export function listGroups(
  store: Store,
  viewer: Viewer,
  q: GroupListQuery,
  window: PageWindow,
  parent?: GroupListParent,
): Promise<PageOf<Namespace>> {
  const filter: GroupListFilter = {
    all: false,
    visibleLevels: [],
    search: q.search,
    // An id past any row's matches none (PostgreSQL refuses one past its integer type), and one given twice is one.
    skip: q.skip_groups && [...new Set(q.skip_groups.filter((id) => id <= MAX_ROW_ID))],
    topLevelOnly: q.top_level_only,
    visibility: q.visibility,
    // GitLab's finder takes top_level_only in place of the parent.
    parent:
      parent && !q.top_level_only
        ? { id: parent.group.id, traversalIds: parent.group.traversal_ids, descendants: parent.descendants }
        : undefined,
  };
  if (!viewer) {
    // GitLab's "anonymous users will never return any owned groups".
    if (!q.owned) filter.visibleLevels = ['public'];
  } else if (q.owned) {
    filter.member = { userId: viewer.id, minAccess: ACCESS.owner, related: 'none' };
  } else if (q.min_access_level !== undefined) {
    filter.member = { userId: viewer.id, minAccess: q.min_access_level, related: 'descendants' };
  } else if (can(viewer, 'admin_all_resources', null) && q.all_available !== false) {
    filter.all = true;
  } else {
    filter.member = { userId: viewer.id, minAccess: ACCESS.guest, related: 'both' };
    if (q.all_available) filter.visibleLevels = viewer.external ? ['public'] : ['public', 'internal'];
  }
  return store.namespaces.groupsPage(filter, { column: q.order_by, direction: q.sort }, window);
}
