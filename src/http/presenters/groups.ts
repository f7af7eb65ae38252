import type { Namespace } from '../../storage/db/schema.ts';

export const group = (g: Namespace, base: string) => ({
  id: g.id,
  web_url: `${base}/groups/${g.full_path}`,
  name: g.name,
  path: g.path,
  description: g.description,
  visibility: g.visibility,
  full_name: g.full_name,
  full_path: g.full_path,
  created_at: g.created_at,
  parent_id: g.parent_id,
  avatar_url: null,
  file_template_project_id: g.file_template_project_id,
});

export const namespaceBasic = (ns: Namespace, base: string) => ({
  id: ns.id,
  name: ns.name,
  path: ns.path,
  kind: ns.kind,
  full_path: ns.full_path,
  parent_id: ns.parent_id,
  avatar_url: null,
  web_url: ns.kind === 'group' ? `${base}/groups/${ns.full_path}` : `${base}/${ns.full_path}`,
});

/** GitLab's Namespace entity: the basic one, and for a group its administrator may see, its members with those below. */
export const namespace = (ns: Namespace, base: string, membersCountWithDescendants?: number) =>
  membersCountWithDescendants === undefined
    ? namespaceBasic(ns, base)
    : Object.assign(namespaceBasic(ns, base), { members_count_with_descendants: membersCountWithDescendants });
