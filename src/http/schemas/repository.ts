// GitLab's parameter rules for the repository files, tree and commits endpoints (lib/api/files.rb,
// lib/api/repositories.rb, lib/api/commits.rb).
import type { ParamSpec } from '../params.ts';
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
} satisfies ParamSpec;

/** GET …/repository/commits/:sha: a commit id, branch or tag (GitLab's `sha`), and whether to count its lines. */
export const commitSpec = {
  sha: { type: 'string', required: true, allowBlank: false },
  stats: { type: 'boolean', default: true },
} satisfies ParamSpec;

/**
 * GET …/repository/branches: GitLab's `search` (`^` at the start, `$` at the end) and `sort` by name; its
 * `updated_asc`/`updated_desc` and `regex` are not served (docs/gitlab-compatibility.md#repository-files).
 */
export const branchesSpec = {
  search: { type: 'string' },
  sort: { type: 'string', values: ['name_asc'] as const, default: 'name_asc' },
} satisfies ParamSpec;

/** POST …/repository/branches: the new branch's name and where it starts (a branch, tag or commit id). */
export const createBranchSpec = {
  branch: { type: 'string', required: true, allowBlank: false },
  ref: { type: 'string', required: true, allowBlank: false },
} satisfies ParamSpec;
