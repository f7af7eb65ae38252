// Row types of every table. Booleans are stored as 0/1 integers and timestamps as ISO 8601 text in
// both dialects, so that one code path reads and writes them the same way on SQLite and PostgreSQL.
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export type Visibility = 'private' | 'internal' | 'public';
export type Flag = 0 | 1;
/** A project feature's level (GitLab's ProjectFeature): nobody, members and administrators, or everyone who sees the project. */
export type FeatureAccessLevel = 'disabled' | 'private' | 'enabled';

export interface UsersTable {
  id: Generated<number>;
  username: string;
  email: string;
  name: string;
  public_email: string | null;
  state: 'active' | 'blocked' | 'deactivated';
  admin: Flag;
  external: Flag;
  bot: Flag;
  /** GitLab's ghost user, the author of a deleted user's project snippets (domain/user-removal.ts). */
  ghost: Generated<Flag>;
  password_digest: string | null;
  namespace_id: number | null;
  created_at: string;
}

export interface PersonalAccessTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  token_digest: string;
  /** Space-separated scope names. */
  scopes: string;
  /** YYYY-MM-DD or null. */
  expires_at: string | null;
  revoked: Flag;
  created_at: string;
  last_used_at: string | null;
}

export interface NamespacesTable {
  id: Generated<number>;
  kind: 'user' | 'group';
  name: string;
  path: string;
  full_path: string;
  full_name: string;
  parent_id: number | null;
  /** Ids from the root to this namespace joined by '/', e.g. "1/5/9": ancestor and subtree queries use it. */
  traversal_ids: string;
  owner_id: number | null;
  visibility: Visibility;
  description: string;
  file_template_project_id: number | null;
  created_at: string;
}

export interface ProjectsTable {
  id: Generated<number>;
  namespace_id: number;
  name: string;
  path: string;
  full_path: string;
  description: string | null;
  visibility: Visibility;
  default_branch: string | null;
  snippets_access_level: FeatureAccessLevel;
  /** GitLab's repository_access_level: who may read and write the repository (domain/policy.ts); 'enabled' unless set. */
  repository_access_level: Generated<FeatureAccessLevel>;
  archived: Flag;
  creator_id: number;
  created_at: string;
  last_activity_at: string;
}

export interface MembersTable {
  id: Generated<number>;
  source_type: 'Project' | 'Namespace';
  source_id: number;
  user_id: number;
  access_level: number;
  created_at: string;
}

export interface ApplicationSettingsTable {
  key: string;
  /** JSON-encoded value. */
  value: string;
}

export interface SnippetsTable {
  id: Generated<number>;
  project_id: number | null;
  author_id: number;
  title: string;
  description: string | null;
  visibility: Visibility;
  /** Mirror of the first file (GitLab's legacy columns). */
  file_name: string;
  content: string;
  /** Commit id the mirrored files below were read from; null until the repository has a commit. */
  head_commit: string | null;
  default_branch: string;
  created_at: string;
  updated_at: string;
}

/** The search index of a snippet's files (tables/snippet-text.ts): '' as content for binary and large files. */
export interface SnippetFileTextTable {
  id: Generated<number>;
  snippet_id: number;
  path: string;
  content: string;
}

export interface SnippetFilesTable {
  snippet_id: number;
  path: string;
  blob_id: string;
  size: number;
}

export interface GitRepositoriesTable {
  id: Generated<number>;
  kind: 'project' | 'snippet';
  owner_id: number;
  head: string;
  writes: Generated<number>;
  /** Counts the writes that moved a ref (serving-cache.ts reads the refs again only when it moved). */
  refs_moved: Generated<number>;
}

export interface GitObjectsTable {
  repository_id: number;
  /** The 20 bytes of the object id. */
  oid: Buffer;
  /** Pack type number: 1 commit, 2 tree, 3 blob, 4 tag. */
  type: number;
  /** Size of the body inflated. */
  size: number;
  /** The repository's write count when the object was added (git_repositories.writes). */
  write: number;
  /** The body deflated, as a pack entry carries it; empty when `parts` holds it. */
  data: Buffer;
  /** A large body's upload: its parts (git_object_parts), joined in order, are the body deflated. */
  parts: number | null;
}

export interface GitUploadsTable {
  id: Generated<number>;
  /** The node writing it (os.hostname() and its pid): a start of that node removes what it left. */
  host: string;
  pid: number;
  started_at: string;
}

export interface GitObjectPartsTable {
  upload_id: number;
  /** 0, 1, 2, ... in the order the parts are joined. */
  seq: number;
  data: Buffer;
}

export interface GitRefsTable {
  repository_id: number;
  name: string;
  oid: Buffer;
}

export interface UserAgentDetailsTable {
  snippet_id: number;
  user_agent: string;
  ip_address: string;
  submitted: Flag;
  created_at: string;
}

export interface SessionsTable {
  token_digest: string;
  user_id: number;
  created_at: string;
  last_seen_at: string;
}

export interface SignInFailuresTable {
  user_id: number;
  attempts: number;
  locked_until: string | null;
}

export interface IdentitiesTable {
  id: Generated<number>;
  user_id: number;
  /** GitLab's provider name: `openid_connect`. */
  provider: string;
  issuer: string;
  /** The provider's subject (`sub`). */
  extern_uid: string;
  created_at: string;
}

export interface Database {
  users: UsersTable;
  personal_access_tokens: PersonalAccessTokensTable;
  namespaces: NamespacesTable;
  projects: ProjectsTable;
  members: MembersTable;
  application_settings: ApplicationSettingsTable;
  change_epoch: { id: number; value: number };
  snippets: SnippetsTable;
  snippet_files: SnippetFilesTable;
  snippet_file_text: SnippetFileTextTable;
  git_repositories: GitRepositoriesTable;
  git_objects: GitObjectsTable;
  git_refs: GitRefsTable;
  git_uploads: GitUploadsTable;
  git_object_parts: GitObjectPartsTable;
  user_agent_details: UserAgentDetailsTable;
  sessions: SessionsTable;
  sign_in_failures: SignInFailuresTable;
  identities: IdentitiesTable;
}

export type User = Selectable<UsersTable>;
export type Identity = Selectable<IdentitiesTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type Token = Selectable<PersonalAccessTokensTable>;
export type Namespace = Selectable<NamespacesTable>;
export type Project = Selectable<ProjectsTable>;
export type Member = Selectable<MembersTable>;
export type Snippet = Selectable<SnippetsTable>;
/** Without its count of ref moves, which is read when needed (GitRepository#refsMoved), never from a row kept. */
export type GitRepositoryRow = Omit<Selectable<GitRepositoriesTable>, 'refs_moved'>;
