// GitLab's parameter rules for the repository files, tree and commits endpoints (lib/api/files.rb,
// lib/api/repositories.rb, lib/api/commits.rb).
import type { Constraints, ParamSpec } from '../params.ts';
import { isSafeFilePath } from '../../domain/paths.ts';

const filePath = {
  type: 'string',
  required: true,
  allowBlank: false,
  check: (v: unknown) => (typeof v === 'string' && !isSafeFilePath(v) ? 'should be a valid file path' : null),
} as const;

export const getFileSpec = {
  file_path: filePath,
  ref: { type: 'string', required: true, allowBlank: false },
} satisfies ParamSpec;
export const rawFileSpec = { file_path: filePath, ref: { type: 'string', allowBlank: false } } satisfies ParamSpec;

const writeCommon = {
  file_path: filePath,
  branch: { type: 'string', required: true, allowBlank: false },
  commit_message: { type: 'string', required: true, allowBlank: false },
  start_branch: { type: 'string', allowBlank: false },
  author_email: { type: 'string' },
  author_name: { type: 'string' },
} satisfies ParamSpec;

export const writeFileSpec = {
  ...writeCommon,
  content: { type: 'text', required: true },
  encoding: { type: 'string', values: ['text', 'base64'] as const, default: 'text' },
  execute_filemode: { type: 'boolean' },
  last_commit_id: { type: 'string' },
} satisfies ParamSpec;

export const deleteFileSpec = writeCommon;

export const treeSpec = {
  path: {
    type: 'string',
    check: (v) => (typeof v === 'string' && !isSafeFilePath(v) ? 'should be a valid file path' : null),
  },
  ref: { type: 'string', allowBlank: false },
  recursive: { type: 'boolean', default: false },
} satisfies ParamSpec;

export const commitsSpec = {
  ref_name: { type: 'string', allowBlank: false },
  path: treeSpec.path,
  since: { type: 'datetime' },
  until: { type: 'datetime' },
  author: { type: 'string' },
  /** GitLab reads each commit's trailers only when asked (Gitaly's ListCommits), else they are `{}`. */
  trailers: { type: 'boolean', default: false },
  with_stats: { type: 'boolean', default: false },
  all: { type: 'boolean', default: false },
  first_parent: { type: 'boolean', default: false },
  order: { type: 'string', values: ['default', 'topo'] as const, default: 'default' },
} satisfies ParamSpec;

/** GET …/repository/blobs/:sha[/raw]: the blob's id. */
export const blobSpec = { sha: { type: 'string', required: true, allowBlank: false } } satisfies ParamSpec;

/** GET …/repository/commits/:sha/diff: a commit id, branch or tag; `unidiff` as GitLab's with_unidiff. */
export const commitDiffSpec = {
  sha: { type: 'string', required: true, allowBlank: false },
  unidiff: { type: 'boolean', default: false },
} satisfies ParamSpec;

/** GET …/repository/archive[.:format] (GitLab's): the commit (`sha`, any ref), a folder, and the format. */
export const archiveSpec = {
  sha: { type: 'string' },
  path: { type: 'string' },
  format: { type: 'string' },
  include_lfs_blobs: { type: 'boolean', default: true },
} satisfies ParamSpec;

/** GitLab's archive formats (Gitlab::PathRegex.archive_formats_regex), as a path's extension may name them. */
export const ARCHIVE_EXTENSIONS = ['zip', 'tar', 'tar.gz', 'tgz', 'gz', 'tar.bz2', 'tbz', 'tbz2', 'tb2', 'bz2'];

/** GET …/repository/contributors (GitLab's): the ref, and the order. */
export const contributorsSpec = {
  ref: { type: 'string' },
  order_by: { type: 'string', values: ['email', 'name', 'commits'] as const, default: 'commits' },
  sort: { type: 'string', values: ['asc', 'desc'] as const, default: 'asc' },
} satisfies ParamSpec;

/** GET …/repository/merge_base: `refs[]=a&refs[]=b`, or `refs=a,b` (GitLab's CommaSeparatedToArray). */
export const mergeBaseSpec = {
  refs: { type: 'string_array', required: true, commaSeparated: true },
} satisfies ParamSpec;

/** GET …/repository/compare (GitLab's lib/api/repositories.rb). */
export const compareSpec = {
  from: { type: 'string', required: true },
  to: { type: 'string', required: true },
  from_project_id: { type: 'integer' },
  straight: { type: 'boolean', default: false },
  unidiff: { type: 'boolean', default: false },
} satisfies ParamSpec;

/** GET …/repository/commits/:sha: a commit id, branch or tag (GitLab's `sha`), and whether to count its lines. */
export const commitSpec = {
  sha: { type: 'string', required: true, allowBlank: false },
  stats: { type: 'boolean', default: true },
} satisfies ParamSpec;

/**
 * GET …/repository/branches: GitLab's `search` (`^` at the start, `$` at the end) and `sort`; its `regex` is not
 * served (docs/gitlab-compatibility.md#repository-files).
 */
export const branchesSpec = {
  search: { type: 'string' },
  sort: { type: 'string', values: ['name_asc', 'updated_asc', 'updated_desc'] as const, default: 'name_asc' },
} satisfies ParamSpec;

/** POST …/repository/branches: the new branch's name and where it starts (a branch, tag or commit id). */
export const createBranchSpec = {
  branch: { type: 'string', required: true, allowBlank: false },
  ref: { type: 'string', required: true, allowBlank: false },
} satisfies ParamSpec;

/**
 * POST …/repository/commits (GitLab's lib/api/commits.rb): the branch, the message and the changes. What Grape's
 * `given` blocks require of one kind of change (a move's previous_path, an update's content, a chmod's
 * execute_filemode) is checked with the changes (commitActionsOf).
 */
export const createCommitSpec = {
  branch: { type: 'string', required: true, allowBlank: false },
  commit_message: { type: 'string', required: true },
  actions: {
    type: 'hash_array',
    required: true,
    items: {
      action: { type: 'string', required: true, values: ['create', 'update', 'move', 'delete', 'chmod'] as const },
      file_path: { type: 'string', required: true },
      previous_path: { type: 'string' },
      content: { type: 'text' },
      encoding: { type: 'string', values: ['text', 'base64'] as const, default: 'text' },
      last_commit_id: { type: 'string' },
      execute_filemode: { type: 'boolean' },
    },
  },
  start_branch: { type: 'string' },
  start_sha: { type: 'string' },
  start_project: { type: 'string' },
  author_email: { type: 'string' },
  author_name: { type: 'string' },
  stats: { type: 'boolean', default: true },
  force: { type: 'boolean', default: false },
} satisfies ParamSpec;

export const createCommitConstraints: Constraints = { mutuallyExclusive: [['start_branch', 'start_sha']] };

/** GET …/repository/tags (GitLab's lib/api/tags.rb): newest commit first unless asked otherwise. */
export const tagsSpec = {
  order_by: { type: 'string', values: ['name', 'updated', 'version'] as const, default: 'updated' },
  sort: { type: 'string', values: ['asc', 'desc'] as const, default: 'desc' },
  search: { type: 'string' },
} satisfies ParamSpec;

/** POST …/repository/tags: the tag's name, the commit it names, and a message for an annotated tag. */
export const createTagSpec = {
  tag_name: { type: 'string', required: true },
  ref: { type: 'string', required: true },
  message: { type: 'string' },
} satisfies ParamSpec;
