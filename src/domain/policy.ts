// Who may see and do what. This is the ONLY place where visibility and roles are decided: routes call
// authorize(viewer, ability, subject) (at the end of this file), finders ask can(), and the SQL list
// filters follow the same rules (projects.visibleQuery mirrors canReadProject; visibleSnippetLevels).
import type { FeatureAccessLevel, Namespace, Project, Snippet, User, Visibility } from '../storage/db/schema.ts';
import { ACCESS, VISIBILITY_LEVEL } from './access.ts';
import { forbidden } from './failure.ts';

/** The acting user, or null for an anonymous request. */
export type Viewer = Pick<User, 'id' | 'admin' | 'external' | 'state'> | null;

/** The viewer's membership: direct on the project (or group) and inherited from ancestor groups. */
export interface Access {
  direct: number;
  inherited: number;
}

/** No membership anywhere. */
export const NO_ACCESS: Access = { direct: 0, inherited: 0 };

const maxAccess = (a: Access) => Math.max(a.direct, a.inherited);
const isAdmin = (viewer: Viewer) => viewer !== null && viewer.admin === 1;

/** Public to everyone, internal to signed-in non-external users, private to members and admins. */
function canSeeLevel(viewer: Viewer, visibility: Visibility, access: Access): boolean {
  if (isAdmin(viewer) || maxAccess(access) >= ACCESS.guest) return true;
  if (visibility === 'public') return true;
  return visibility === 'internal' && viewer !== null && viewer.external === 0;
}

function canReadProject(viewer: Viewer, project: Project, access: Access): boolean {
  return canSeeLevel(viewer, project.visibility, access);
}

/** A private group is also visible to members of anything inside it (GitLab shows the path to them). */
function canReadGroup(viewer: Viewer, group: Namespace, access: Access, memberBelow: boolean): boolean {
  return canSeeLevel(viewer, group.visibility, access) || memberBelow;
}

const canAdminProject = (viewer: Viewer, access: Access) => isAdmin(viewer) || maxAccess(access) >= ACCESS.maintainer;
/**
 * Owners' own: deleting or archiving a project, changing its visibility, granting or taking the Owner
 * level, and administering a group.
 */
const isOwnerOrAdmin = (viewer: Viewer, access: Access) => isAdmin(viewer) || maxAccess(access) >= ACCESS.owner;
/** Subgroups may be created by maintainers of the parent (GitLab's default subgroup creation level). */
const canCreateSubgroup = (viewer: Viewer, access: Access) => isAdmin(viewer) || maxAccess(access) >= ACCESS.maintainer;
const canCreateProjectInGroup = (viewer: Viewer, access: Access) =>
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
export function accessDeniedReason(user: Pick<User, 'state' | 'ghost'>, externalUrl: string): string | null {
  // GitLab's ghost user is an internal user: no API, no git, no sign-in (GlobalPolicy's `internal`).
  if (user.ghost) return 'This action cannot be performed by internal users';
  if (user.state === 'blocked') return 'Your account has been blocked.';
  if (user.state === 'deactivated') {
    return `Your account has been deactivated by your administrator. Please log back in from a web browser to reactivate your account at ${externalUrl}`;
  }
  return null;
}

// ---- Project features (GitLab's ProjectFeature and ProjectPolicy#access_allowed_to?) ----

/**
 * A project feature at its level: disabled for everyone, administrators included; "private" for members (guest
 * and up) and administrators; enabled for whoever sees the project. The feature's own abilities add their rules.
 */
function canUseFeature(viewer: Viewer, level: FeatureAccessLevel, access: Access): boolean {
  if (level === 'disabled') return false;
  if (level === 'private') return isAdmin(viewer) || maxAccess(access) >= ACCESS.guest;
  return true;
}

// ---- Project snippets (docs/gitlab-compatibility.md#snippet-permissions) ----

type SnippetsAccess = Pick<Project, 'snippets_access_level'>;

/** The project's snippets feature: disabled for everyone; "private" for members and admins only. */
const canUseSnippetsFeature = (viewer: Viewer, project: SnippetsAccess, access: Access) =>
  canUseFeature(viewer, project.snippets_access_level, access);

/** Which snippet visibilities the viewer sees in a project: members and admins all, others by level. */
export function visibleSnippetLevels(viewer: Viewer, access: Access): Visibility[] {
  if (isAdmin(viewer) || maxAccess(access) >= ACCESS.guest) return ['private', 'internal', 'public'];
  if (viewer === null || viewer.external === 1) return ['public'];
  return ['internal', 'public'];
}

type WritableProject = Pick<Project, 'archived' | 'snippets_access_level'>;

/**
 * A project's snippets are written only while it is not archived and its snippets feature is open to the
 * viewer (GitLab's snippets_disabled prevents every snippet ability, a page's form included).
 */
const isWritable = (viewer: Viewer, project: WritableProject, access: Access) =>
  project.archived === 0 && canUseSnippetsFeature(viewer, project, access);

const canCreateSnippet = (viewer: Viewer, project: WritableProject, access: Access) =>
  isWritable(viewer, project, access) && (isAdmin(viewer) || maxAccess(access) >= ACCESS.reporter);

/** Authors may update their own visible snippet (even as guests or non-members); maintainers any. */
const canUpdateSnippet = (viewer: Viewer, project: WritableProject, access: Access, authorId: number) =>
  isWritable(viewer, project, access) &&
  viewer !== null &&
  (isAdmin(viewer) || maxAccess(access) >= ACCESS.maintainer || viewer.id === authorId);

/** Deleting needs maintainer, or reporter+ for one's own snippet. */
const canDeleteSnippet = (viewer: Viewer, project: WritableProject, access: Access, authorId: number) =>
  isWritable(viewer, project, access) &&
  viewer !== null &&
  (isAdmin(viewer) ||
    maxAccess(access) >= ACCESS.maintainer ||
    (viewer.id === authorId && maxAccess(access) >= ACCESS.reporter));

/** Projects in one's own namespace: not for external users (GitLab's projects_limit 0 for them). */
export const mayCreatePersonalProjects = (user: NonNullable<Viewer>) => isAdmin(user) || user.external === 0;

/** Restricted visibility levels bind everyone but admins (D3), for snippets, projects and groups. */
export const isVisibilityRestricted = (viewer: Viewer, visibility: Visibility, restricted: Visibility[]) =>
  !isAdmin(viewer) && restricted.includes(visibility);

/** GitLab's model error for a project or group at a restricted level (BaseService#deny_visibility_level). */
export const restrictedLevelErrors = (level: Visibility) => ({
  visibility_level: [`${level} has been restricted by your GitLab administrator`],
});

// ---- Personal snippets (GitLab's PersonalSnippetPolicy; docs/gitlab-compatibility.md#personal-snippets) ----

const isAuthor = (viewer: Viewer, snippet: Pick<Snippet, 'author_id'>) =>
  viewer !== null && viewer.id === snippet.author_id;

/** Public to everyone, internal to signed-in non-external users, private to its author; admins all. */
const canReadPersonalSnippet = (viewer: Viewer, snippet: Pick<Snippet, 'author_id' | 'visibility'>) =>
  isAdmin(viewer) || isAuthor(viewer, snippet) || visibleSnippetLevels(viewer, NO_ACCESS).includes(snippet.visibility);

/** Its author and admins change and delete it. */
const canWritePersonalSnippet = (viewer: Viewer, snippet: Pick<Snippet, 'author_id'>) =>
  isAdmin(viewer) || isAuthor(viewer, snippet);

/** Any signed-in user but an external one (GitLab's global create_snippet). */
const canCreatePersonalSnippet = (viewer: Viewer) => viewer !== null && (isAdmin(viewer) || viewer.external === 0);

// ---- Repositories (GitLab's download_code / push_code; docs/gitlab-compatibility.md#repository-access-level) ----

/**
 * The project's repository feature (GitLab's feature_available?(:repository, user)): its repository_access_level
 * for this viewer. The branches and commits APIs answer 404 Repository without it, before asking download_code.
 */
export const repositoryFeatureAvailable = (viewer: Viewer, s: ProjectSubject) =>
  canUseFeature(viewer, s.project.repository_access_level, s.access);

/**
 * Reading code: where the repository feature is open to the viewer, admins, reporters+, anyone of a public
 * project, and signed-in users who are not external of an internal one (GitLab's public_access and
 * internal_access). A guest's role gives none: an external guest of an internal project sees the project, not its
 * code. A repository for members only is closed to the public and to non-members; a disabled one to everyone,
 * administrators included (GitLab's repository_disabled prevents download_code and push_code).
 */
function canReadRepository(viewer: Viewer, project: Project, access: Access): boolean {
  if (!canUseFeature(viewer, project.repository_access_level, access)) return false;
  if (isAdmin(viewer) || maxAccess(access) >= ACCESS.reporter) return true;
  if (project.visibility === 'public') return true;
  return project.visibility === 'internal' && viewer !== null && viewer.external === 0;
}

/** Writing code: developers+ and admins, never into an archived project nor one whose repository is disabled. */
const canPushRepository = (viewer: Viewer, project: Project, access: Access) =>
  project.archived === 0 &&
  canUseFeature(viewer, project.repository_access_level, access) &&
  (isAdmin(viewer) || maxAccess(access) >= ACCESS.developer);

// ---- The one entry point: can(viewer, ability, subject) and authorize(...) ----

/** What an ability is asked about: a project or group as the viewer sees it, a snippet in its project. */
export interface ProjectSubject {
  project: Project;
  access: Access;
}
export interface GroupSubject {
  group: Namespace;
  access: Access;
}
/** A group as a viewer may find it: a private group is also visible to members of anything inside it. */
export interface GroupLookup extends GroupSubject {
  memberBelow: boolean;
}
/** A snippet in its project, or a personal snippet (no project: `project` null, no membership). */
export type SnippetSubject = (ProjectSubject | PersonalSubject) & {
  snippet: Pick<Snippet, 'author_id' | 'visibility'>;
};
/** Where a personal snippet lives: in no project. */
export interface PersonalSubject {
  project: null;
  access: Access;
}

/** Abilities by GitLab's names (its `authorize! :ability, subject`), each with the subject it needs. */
interface Subjects {
  admin_all_resources: null;
  create_group: { canCreateGroup: boolean };
  read_project: ProjectSubject;
  admin_project: ProjectSubject;
  remove_project: ProjectSubject;
  archive_project: ProjectSubject;
  change_visibility_level: ProjectSubject;
  /** Adding an Owner, raising a member to Owner, changing or removing an Owner (project or group). */
  manage_owners: { access: Access };
  download_code: ProjectSubject;
  push_code: ProjectSubject;
  read_group: GroupLookup;
  /**
   * Of a group the viewer may read (findReadableGroup): a private group's members are its members' (and
   * admins') to list, not those of something inside it.
   */
  read_group_member: GroupSubject;
  admin_group: GroupSubject;
  create_subgroup: GroupSubject;
  create_projects: { namespace: Namespace; access: Access };
  /** A namespace through the namespaces API: one's own, or a group one is a member of (or of a group above it). */
  read_namespace_via_membership: { namespace: Namespace; access: Access };
  read_project_snippets: ProjectSubject;
  /** In a project, or a personal snippet (project null). */
  create_snippet: ProjectSubject | PersonalSubject;
  read_snippet: SnippetSubject;
  update_snippet: SnippetSubject;
  admin_snippet: SnippetSubject;
  admin_token: { user_id: number };
  /** A user's profile and snippet lists (GitLab's UserPolicy): visitors lose it when the Public level is restricted. */
  read_user: { publicRestricted: boolean };
  /** Listing users (GitLab's GlobalPolicy): the same. */
  read_users_list: { publicRestricted: boolean };
  read_user_private: { user_id: number };
}
export type Ability = keyof Subjects;

const RULES: { [A in Ability]: (viewer: Viewer, subject: Subjects[A]) => boolean } = {
  admin_all_resources: (viewer) => isAdmin(viewer),
  // External users may create neither groups nor personal projects (GitLab gives them can_create_group
  // false and projects_limit 0); a group's projects are the group's to allow.
  create_group: (viewer, s) => viewer !== null && (isAdmin(viewer) || (s.canCreateGroup && viewer.external === 0)),
  read_project: (viewer, s) => canReadProject(viewer, s.project, s.access),
  admin_project: (viewer, s) => canAdminProject(viewer, s.access),
  remove_project: (viewer, s) => isOwnerOrAdmin(viewer, s.access),
  archive_project: (viewer, s) => isOwnerOrAdmin(viewer, s.access),
  change_visibility_level: (viewer, s) => isOwnerOrAdmin(viewer, s.access),
  manage_owners: (viewer, s) => isOwnerOrAdmin(viewer, s.access),
  download_code: (viewer, s) => canReadRepository(viewer, s.project, s.access),
  push_code: (viewer, s) => canPushRepository(viewer, s.project, s.access),
  read_group: (viewer, s) => canReadGroup(viewer, s.group, s.access, s.memberBelow),
  // GitLab's can_read_group_member, on top of read_group: a private group needs a membership of its own (or above).
  read_group_member: (viewer, s) =>
    s.group.visibility !== 'private' || isAdmin(viewer) || maxAccess(s.access) >= ACCESS.guest,
  admin_group: (viewer, s) => isOwnerOrAdmin(viewer, s.access),
  create_subgroup: (viewer, s) => canCreateSubgroup(viewer, s.access),
  create_projects: (viewer, s) =>
    s.namespace.kind === 'group'
      ? canCreateProjectInGroup(viewer, s.access)
      : viewer !== null && (isAdmin(viewer) || s.namespace.owner_id === viewer.id),
  read_namespace_via_membership: (viewer, s) =>
    viewer !== null &&
    (isAdmin(viewer) ||
      (s.namespace.kind === 'user' ? s.namespace.owner_id === viewer.id : maxAccess(s.access) >= ACCESS.guest)),
  read_project_snippets: (viewer, s) => canUseSnippetsFeature(viewer, s.project, s.access),
  create_snippet: (viewer, s) =>
    s.project === null ? canCreatePersonalSnippet(viewer) : canCreateSnippet(viewer, s.project, s.access),
  read_snippet: (viewer, s) =>
    s.project === null
      ? canReadPersonalSnippet(viewer, s.snippet)
      : visibleSnippetLevels(viewer, s.access).includes(s.snippet.visibility),
  update_snippet: (viewer, s) =>
    s.project === null
      ? canWritePersonalSnippet(viewer, s.snippet)
      : canUpdateSnippet(viewer, s.project, s.access, s.snippet.author_id),
  admin_snippet: (viewer, s) =>
    s.project === null
      ? canWritePersonalSnippet(viewer, s.snippet)
      : canDeleteSnippet(viewer, s.project, s.access, s.snippet.author_id),
  admin_token: (viewer, s) => viewer !== null && (isAdmin(viewer) || viewer.id === s.user_id),
  read_user: (viewer, s) => viewer !== null || !s.publicRestricted,
  read_users_list: (viewer, s) => viewer !== null || !s.publicRestricted,
  read_user_private: (viewer, s) => viewer !== null && (isAdmin(viewer) || viewer.id === s.user_id),
};

export function can<A extends Ability>(viewer: Viewer, ability: A, subject: Subjects[A]): boolean {
  return RULES[ability](viewer, subject);
}

/** GitLab's authorize!: a 403 (with GitLab's sentence when it has one) unless the viewer can. */
export function authorize<A extends Ability>(viewer: Viewer, ability: A, subject: Subjects[A], reason = ''): void {
  if (!RULES[ability](viewer, subject)) throw forbidden(reason);
}
