// Namespaces, users' own and groups, as GitLab's namespaces API gives them (lib/api/namespaces.rb): what a tool
// reads a namespace's id from, to create a project in it.
import type { Store } from '../storage/db/store.ts';
import type { Namespace, User } from '../storage/db/schema.ts';
import type { PageOf, PageWindow } from '../storage/db/page.ts';
import { notFound } from './failure.ts';
import { groupAccess } from './groups.ts';
import { parseRowId } from './ids.ts';
import { can, type Viewer } from './policy.ts';

/** What GET /namespaces asks for. */
export interface NamespaceListQuery {
  owned_only?: boolean;
  top_level_only: boolean;
  search?: string;
  full_path_search: boolean;
}

/**
 * One page of the namespaces GET /namespaces gives `viewer`, by id: an administrator every one; anyone else their
 * own and the groups they are a member of themselves (with `owned_only`, those they own), as GitLab's
 * User#namespaces.
 */
export function listNamespaces(
  store: Store,
  viewer: User,
  q: NamespaceListQuery,
  window: PageWindow,
): Promise<PageOf<Namespace>> {
  const member = can(viewer, 'admin_all_resources', null)
    ? null
    : { userId: viewer.id, ownedOnly: q.owned_only === true };
  const filter = { member, topLevelOnly: q.top_level_only, search: q.search, fullPathSearch: q.full_path_search };
  return store.namespaces.namespacesPage(filter, window);
}

/** The namespace `id` names (a number or a full path, any case), if the viewer may read it; 404 Namespace Not Found. */
export async function findNamespace(store: Store, viewer: Viewer, id: string): Promise<Namespace> {
  const number = parseRowId(id);
  const namespace =
    number !== null ? await store.namespaces.findById(number) : await store.namespaces.findByFullPath(id);
  const access = namespace && (await groupAccess(store, viewer, namespace));
  if (!namespace || !access || !can(viewer, 'read_namespace_via_membership', { namespace, access }))
    throw notFound('Namespace');
  return namespace;
}

/**
 * GitLab's members_count_with_descendants of each group among `namespaces` the viewer may administer: how many
 * users are members of it or of a group below it. By group id; the others have none.
 */
export async function membersCounts(
  store: Store,
  viewer: Viewer,
  namespaces: Namespace[],
): Promise<Map<number, number>> {
  const admin = can(viewer, 'admin_all_resources', null);
  const administered: Namespace[] = [];
  for (const ns of namespaces) {
    if (ns.kind !== 'group') continue;
    if (admin || can(viewer, 'admin_group', { group: ns, access: await groupAccess(store, viewer, ns) }))
      administered.push(ns);
  }
  return store.namespaces.membersWithDescendants(administered);
}
