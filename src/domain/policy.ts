// Who may see and do what. This is the ONLY place where visibility and roles are decided; routes and
// SQL list filters follow these rules (projects.visibleQuery mirrors canReadProject for lists).
import type { Namespace, Project, User, Visibility } from '../storage/db/schema.ts';
import { ACCESS, VISIBILITY_LEVEL } from './access.ts';

/** The acting user, or null for an anonymous request. */
export type Viewer = Pick<User, 'id' | 'admin' | 'external' | 'state'> | null;

/** The viewer's membership: direct on the project (or group) and inherited from ancestor groups. */
export interface Access {
  direct: number;
  inherited: number;
}

export const maxAccess = (a: Access) => Math.max(a.direct, a.inherited);
export const isAdmin = (viewer: Viewer) => viewer !== null && viewer.admin === 1;

/** Public to everyone, internal to signed-in non-external users, private to members and admins. */
function canSeeLevel(viewer: Viewer, visibility: Visibility, access: Access): boolean {
  if (isAdmin(viewer) || maxAccess(access) >= ACCESS.guest) return true;
  if (visibility === 'public') return true;
  return visibility === 'internal' && viewer !== null && viewer.external === 0;
}

export function canReadProject(viewer: Viewer, project: Project, access: Access): boolean {
  return canSeeLevel(viewer, project.visibility, access);
}

/** A private group is also visible to members of anything inside it (GitLab shows the path to them). */
export function canReadGroup(viewer: Viewer, group: Namespace, access: Access, memberBelow: boolean): boolean {
  return canSeeLevel(viewer, group.visibility, access) || memberBelow;
}

export const canAdminProject = (viewer: Viewer, access: Access) =>
  isAdmin(viewer) || maxAccess(access) >= ACCESS.maintainer;
export const canDeleteProject = (viewer: Viewer, access: Access) =>
  isAdmin(viewer) || maxAccess(access) >= ACCESS.owner;
export const canAdminGroup = (viewer: Viewer, access: Access) => isAdmin(viewer) || maxAccess(access) >= ACCESS.owner;
/** Subgroups may be created by maintainers of the parent (GitLab's default subgroup creation level). */
export const canCreateSubgroup = (viewer: Viewer, access: Access) =>
  isAdmin(viewer) || maxAccess(access) >= ACCESS.maintainer;
export const canCreateProjectInGroup = (viewer: Viewer, access: Access) =>
  isAdmin(viewer) || maxAccess(access) >= ACCESS.developer;

/** A child (subgroup or project) may not be more visible than the group that holds it. */
export function visibilityAllowedUnder(
  parent: Pick<Namespace, 'visibility' | 'kind'> | null,
  visibility: Visibility,
): boolean {
  if (!parent || parent.kind === 'user') return true;
  return VISIBILITY_LEVEL[visibility] <= VISIBILITY_LEVEL[parent.visibility];
}

/** Why a user's token is refused although it is valid (GitLab's UserAccessDeniedReason). */
export function accessDeniedReason(user: Pick<User, 'state'>, externalUrl: string): string | null {
  if (user.state === 'blocked') return 'Your account has been blocked.';
  if (user.state === 'deactivated') {
    return `Your account has been deactivated by your administrator. Please log back in from a web browser to reactivate your account at ${externalUrl}`;
  }
  return null;
}

// ---- Project snippets (gitlab-api.md §4) ----

type SnippetsAccess = Pick<Project, 'snippets_access_level'>;

/** The project's snippets feature: disabled for everyone; "private" for members and admins only. */
export function canUseSnippetsFeature(viewer: Viewer, project: SnippetsAccess, access: Access): boolean {
  if (project.snippets_access_level === 'disabled') return false;
  if (project.snippets_access_level === 'private') return isAdmin(viewer) || maxAccess(access) >= ACCESS.guest;
  return true;
}

/** Which snippet visibilities the viewer sees in a project: members and admins all, others by level. */
export function visibleSnippetLevels(viewer: Viewer, access: Access): Visibility[] {
  if (isAdmin(viewer) || maxAccess(access) >= ACCESS.guest) return ['private', 'internal', 'public'];
  if (viewer === null || viewer.external === 1) return ['public'];
  return ['internal', 'public'];
}

type ArchivedProject = Pick<Project, 'archived'>;

export const canCreateSnippet = (viewer: Viewer, project: ArchivedProject, access: Access) =>
  project.archived === 0 && (isAdmin(viewer) || maxAccess(access) >= ACCESS.reporter);

/** Authors may update their own visible snippet (even as guests or non-members); maintainers any. */
export const canUpdateSnippet = (viewer: Viewer, project: ArchivedProject, access: Access, authorId: number) =>
  project.archived === 0 &&
  viewer !== null &&
  (isAdmin(viewer) || maxAccess(access) >= ACCESS.maintainer || viewer.id === authorId);

/** Deleting needs maintainer, or reporter+ for one's own snippet. */
export const canDeleteSnippet = (viewer: Viewer, project: ArchivedProject, access: Access, authorId: number) =>
  project.archived === 0 &&
  viewer !== null &&
  (isAdmin(viewer) ||
    maxAccess(access) >= ACCESS.maintainer ||
    (viewer.id === authorId && maxAccess(access) >= ACCESS.reporter));

/** Restricted visibility levels bind everyone but admins (D3). */
export const isVisibilityRestricted = (viewer: Viewer, visibility: Visibility, restricted: Visibility[]) =>
  !isAdmin(viewer) && restricted.includes(visibility);

// ---- Repositories (GitLab's download_code / push_code) ----

/** Reading code: admins, reporters+, and anyone who can read a public or internal project. */
export function canReadRepository(viewer: Viewer, project: Project, access: Access): boolean {
  if (isAdmin(viewer) || maxAccess(access) >= ACCESS.reporter) return true;
  if (project.visibility === 'private') return false;
  return canReadProject(viewer, project, access);
}

/** Writing code: developers+ and admins, never into an archived project. */
export const canPushRepository = (viewer: Viewer, project: Project, access: Access) =>
  project.archived === 0 && (isAdmin(viewer) || maxAccess(access) >= ACCESS.developer);
