// Namespaces, users' own and groups, as GitLab's namespaces API gives them (lib/api/namespaces.rb): what a tool
// reads a namespace's id from, to create a project in it.
import type { Store } from '../storage/db/store.ts';
import type { Namespace, User } from '../storage/db/schema.ts';
import type { PageOf, PageWindow } from '../storage/db/page.ts';
import { notFound } from './failure.ts';
import { ACCESS } from './access.ts';
import { accessFrom, groupAccess } from './groups.ts';
import { ancestorIds } from '../storage/db/tables/namespaces.ts';
import { parseRowId } from './ids.ts';
import { can, type Viewer } from './policy.ts';

/** What GET /namespaces asks for. */
export interface NamespaceListQuery {
  owned_only?: boolean;
  top_level_only: boolean;
  search?: string;
  full_path_search: boolean;
}

/** A namespace as the namespaces API answers it: with its members' count when the viewer administers the group. */
export interface NamespaceView {
  namespace: Namespace;
  membersCountWithDescendants?: number;
}

/**
 * One page of the namespaces GET /namespaces gives `viewer`, by id: an administrator every one; anyone else their
 * own and the groups they are a member of themselves (with `owned_only`, those they own), as GitLab's
 * User#namespaces.
 */
export async function listNamespaces(
  store: Store,
  viewer: User,
  q: NamespaceListQuery,
  window: PageWindow,
): Promise<PageOf<NamespaceView>> {
  const member = can(viewer, 'admin_all_resources', null)
    ? null
    : { userId: viewer.id, minAccess: q.owned_only ? ACCESS.owner : ACCESS.guest };
  const filter = { member, topLevelOnly: q.top_level_only, search: q.search, fullPathSearch: q.full_path_search };
  const page = await store.namespaces.namespacesPage(filter, window);
  return { ...page, rows: await withMembersCounts(store, viewer, page.rows) };
}

/** The namespace `id` names (a number or a full path, any case), if the viewer may read it; 404 Namespace Not Found. */
export async function findNamespace(store: Store, viewer: Viewer, id: string): Promise<NamespaceView> {
  const number = parseRowId(id);
  const namespace =
    number !== null ? await store.namespaces.findById(number) : await store.namespaces.findByFullPath(id);
  const access = namespace && (await groupAccess(store, viewer, namespace));
  if (!namespace || !access || !can(viewer, 'read_namespace_via_membership', { namespace, access }))
    throw notFound('Namespace');
  const [view] = await withMembersCounts(store, viewer, [namespace]);
  return view;
}

/**
 * Each namespace with GitLab's members_count_with_descendants when it is a group the viewer may administer: its
 * active members and those of the groups below it. The viewer's levels are read once for the whole page.
 */
async function withMembersCounts(store: Store, viewer: Viewer, namespaces: Namespace[]): Promise<NamespaceView[]> {
  const groups = namespaces.filter((ns) => ns.kind === 'group');
  const levels =
    viewer && groups.length
      ? await store.members.groupLevels(viewer.id, [...new Set(groups.flatMap((g) => ancestorIds(g)))])
      : new Map<number, number>();
  const administered = groups.filter((group) =>
    can(viewer, 'admin_group', { group, access: accessFrom(levels, group) }),
  );
  const counts = await store.namespaces.membersWithDescendants(administered.map((g) => g.id));
  return namespaces.map((namespace) => ({ namespace, membersCountWithDescendants: counts.get(namespace.id) }));
}
