import type { Namespace, Project } from '../../storage/db/schema.ts';
import { can, type Access, type Viewer } from '../../domain/policy.ts';
import { namespaceBasic } from './groups.ts';

export interface ProjectUrls {
  base: string;
  sshHost: string;
}

/** A project as the viewer sees it: its row, its namespace and the viewer's access to it. */
export interface SeenProject {
  project: Project;
  namespace: Namespace;
  access: Access;
}

/**
 * GitLab's project entity (the fields clients read), in GitLab's key order, for `viewer`: `default_branch` only for
 * whoever may read the code (GitLab's BasicProjectDetails exposes it `if` read_code), left out, not null, otherwise;
 * `snippets_enabled` whether the viewer may use the snippets feature (GitLab's feature_available?(:snippets, user)).
 */
export function project(seen: SeenProject, viewer: Viewer, urls: ProjectUrls) {
  const { project: p, namespace: ns } = seen;
  return {
    id: p.id,
    description: p.description,
    name: p.name,
    name_with_namespace: `${ns.full_name} / ${p.name}`,
    path: p.path,
    path_with_namespace: p.full_path,
    created_at: p.created_at,
    ...(can(viewer, 'download_code', seen) && { default_branch: p.default_branch }),
    tag_list: [],
    topics: [],
    ssh_url_to_repo: `git@${urls.sshHost}:${p.full_path}.git`,
    http_url_to_repo: `${urls.base}/${p.full_path}.git`,
    web_url: `${urls.base}/${p.full_path}`,
    avatar_url: null,
    star_count: 0,
    last_activity_at: p.last_activity_at,
    namespace: namespaceBasic(ns, urls.base),
    visibility: p.visibility,
    archived: p.archived === 1,
    snippets_enabled: can(viewer, 'read_project_snippets', seen),
    repository_access_level: p.repository_access_level,
    snippets_access_level: p.snippets_access_level,
    creator_id: p.creator_id,
  };
}

const accessEntry = (level: number) => (level > 0 ? { access_level: level, notification_level: 3 } : null);

/** The single-project view adds the caller's permissions. */
export function projectWithPermissions(seen: SeenProject, viewer: Viewer, urls: ProjectUrls) {
  const { access } = seen;
  return Object.assign(project(seen, viewer, urls), {
    permissions: { project_access: accessEntry(access.direct), group_access: accessEntry(access.inherited) },
  });
}
