import type { ParamSpec } from '../params.ts';
import { VISIBILITIES } from '../../domain/access.ts';

const SNIPPETS_ACCESS = ['disabled', 'private', 'enabled'];

export const createProjectSpec: ParamSpec = {
  name: { type: 'string', allowBlank: false },
  path: { type: 'string', allowBlank: false },
  namespace_id: { type: 'integer' },
  visibility: { type: 'string', values: VISIBILITIES },
  description: { type: 'string' },
  snippets_access_level: { type: 'string', values: SNIPPETS_ACCESS },
  default_branch: { type: 'string', allowBlank: false },
  initialize_with_readme: { type: 'boolean' },
};

export const createProjectConstraints = { atLeastOneOf: [['name', 'path']] };

export const createProjectForUserSpec: ParamSpec = { ...createProjectSpec, user_id: { type: 'integer', required: true } };

export const updateProjectSpec: ParamSpec = {
  name: { type: 'string', allowBlank: false },
  description: { type: 'string' },
  visibility: { type: 'string', values: VISIBILITIES },
  snippets_access_level: { type: 'string', values: SNIPPETS_ACCESS },
  default_branch: { type: 'string', allowBlank: false },
};

export const listProjectsSpec: ParamSpec = {
  membership: { type: 'boolean' },
  owned: { type: 'boolean' },
  search: { type: 'string' },
  order_by: { type: 'string', values: ['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at'], default: 'created_at' },
  sort: { type: 'string', values: ['asc', 'desc'], default: 'desc' },
};
