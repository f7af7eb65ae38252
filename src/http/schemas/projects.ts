import type { ParamSpec } from '../params.ts';
import { ACCESS_LEVELS, FEATURE_ACCESS_LEVELS as FEATURE_ACCESS, VISIBILITIES } from '../../domain/access.ts';

export const createProjectSpec = {
  name: { type: 'string', allowBlank: false },
  path: { type: 'string', allowBlank: false },
  namespace_id: { type: 'id' },
  visibility: { type: 'string', values: VISIBILITIES },
  description: { type: 'string', nullable: true },
  snippets_access_level: { type: 'string', values: FEATURE_ACCESS },
  repository_access_level: { type: 'string', values: FEATURE_ACCESS },
  default_branch: { type: 'string', allowBlank: false },
  initialize_with_readme: { type: 'boolean' },
} satisfies ParamSpec;

export const createProjectConstraints = { atLeastOneOf: [['name', 'path']] };

export const createProjectForUserSpec = {
  ...createProjectSpec,
  user_id: { type: 'id', required: true },
} satisfies ParamSpec;

export const updateProjectSpec = {
  name: { type: 'string', allowBlank: false },
  description: { type: 'string', nullable: true },
  visibility: { type: 'string', values: VISIBILITIES },
  snippets_access_level: { type: 'string', values: FEATURE_ACCESS },
  repository_access_level: { type: 'string', values: FEATURE_ACCESS },
  default_branch: { type: 'string', allowBlank: false },
} satisfies ParamSpec;

/**
 * GET /groups/:id/projects: GitLab's parameters. Nothing is shared with groups here, so `with_shared` adds
 * nothing; `simple` answers the whole project; `similarity` orders by name and `star_count` (no stars here) by id.
 */
export const listGroupProjectsSpec = {
  archived: { type: 'boolean' },
  visibility: { type: 'string', values: VISIBILITIES },
  search: { type: 'string' },
  order_by: {
    type: 'string',
    values: ['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at', 'similarity', 'star_count'] as const,
    default: 'created_at',
  },
  sort: { type: 'string', values: ['asc', 'desc'] as const, default: 'desc' },
  owned: { type: 'boolean', default: false },
  include_subgroups: { type: 'boolean', default: false },
  min_access_level: { type: 'integer', values: ACCESS_LEVELS },
} satisfies ParamSpec;

export const listProjectsSpec = {
  membership: { type: 'boolean' },
  owned: { type: 'boolean' },
  search: { type: 'string' },
  search_namespaces: { type: 'boolean' },
  archived: { type: 'boolean' },
  visibility: { type: 'string', values: VISIBILITIES },
  min_access_level: { type: 'integer', values: ACCESS_LEVELS },
  id_after: { type: 'integer' },
  id_before: { type: 'integer' },
  last_activity_after: { type: 'datetime' },
  last_activity_before: { type: 'datetime' },
  order_by: {
    type: 'string',
    values: ['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at'] as const,
    default: 'created_at',
  },
  sort: { type: 'string', values: ['asc', 'desc'] as const, default: 'desc' },
} satisfies ParamSpec;
