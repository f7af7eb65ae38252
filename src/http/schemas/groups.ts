import type { ParamSpec } from '../params.ts';
import { ACCESS_LEVELS, VISIBILITIES } from '../../domain/access.ts';

export const createGroupSpec = {
  name: { type: 'string', required: true, allowBlank: false },
  path: { type: 'string', required: true, allowBlank: false },
  parent_id: { type: 'id' },
  visibility: { type: 'string', values: VISIBILITIES },
  description: { type: 'string' },
} satisfies ParamSpec;

/**
 * GET /groups: GitLab's group_list_params. No statistics are kept here, so `statistics` adds nothing; `similarity`
 * orders by name, as GitLab does without a search (docs/gitlab-compatibility.md#groups).
 */
export const listGroupsSpec = {
  all_available: { type: 'boolean' },
  owned: { type: 'boolean', default: false },
  min_access_level: { type: 'integer', values: ACCESS_LEVELS },
  search: { type: 'string' },
  skip_groups: {
    type: 'string_array',
    commaSeparated: true,
    check: (v) => (v === null || (v as string[]).every((id) => /^\d+$/.test(id)) ? null : 'is invalid'),
  },
  top_level_only: { type: 'boolean', default: false },
  visibility: { type: 'string', values: VISIBILITIES },
  order_by: { type: 'string', values: ['name', 'path', 'id', 'similarity'] as const, default: 'name' },
  sort: { type: 'string', values: ['asc', 'desc'] as const, default: 'asc' },
} satisfies ParamSpec;

export const updateGroupSpec = {
  name: { type: 'string', allowBlank: false },
  visibility: { type: 'string', values: VISIBILITIES },
  description: { type: 'string' },
  file_template_project_id: { type: 'id', nullable: true },
} satisfies ParamSpec;

export const addMemberSpec = {
  user_id: { type: 'id', required: true },
  access_level: { type: 'integer', required: true, values: ACCESS_LEVELS },
  /** Read only to be refused: memberships here do not expire (docs/gitlab-compatibility.md#members). */
  expires_at: { type: 'string' },
} satisfies ParamSpec;

export const updateMemberSpec = {
  user_id: { type: 'id', required: true },
  access_level: { type: 'integer', required: true, values: ACCESS_LEVELS },
  /** Read only to be refused: memberships here do not expire (docs/gitlab-compatibility.md#members). */
  expires_at: { type: 'string' },
} satisfies ParamSpec;

export const memberIdSpec = { user_id: { type: 'id', required: true } } satisfies ParamSpec;

/** GET …/members and …/members/all: GitLab's query and user_ids (a list, or ids apart by commas). */
export const listMembersSpec = {
  query: { type: 'string' },
  user_ids: {
    type: 'string_array',
    commaSeparated: true,
    check: (v) => (v === null || (v as string[]).every((id) => /^\d+$/.test(id)) ? null : 'is invalid'),
  },
} satisfies ParamSpec;
