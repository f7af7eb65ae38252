import type { ParamSpec } from '../params.ts';
import { ACCESS_LEVELS, VISIBILITIES } from '../../domain/access.ts';

export const createGroupSpec: ParamSpec = {
  name: { type: 'string', required: true, allowBlank: false },
  path: { type: 'string', required: true, allowBlank: false },
  parent_id: { type: 'integer' },
  visibility: { type: 'string', values: VISIBILITIES },
  description: { type: 'string' },
};

export const updateGroupSpec: ParamSpec = {
  name: { type: 'string', allowBlank: false },
  visibility: { type: 'string', values: VISIBILITIES },
  description: { type: 'string' },
  file_template_project_id: { type: 'integer' },
};

export const addMemberSpec: ParamSpec = {
  user_id: { type: 'integer', required: true },
  access_level: { type: 'integer', required: true, values: ACCESS_LEVELS },
};

export const updateMemberSpec: ParamSpec = {
  user_id: { type: 'integer', required: true },
  access_level: { type: 'integer', required: true, values: ACCESS_LEVELS },
};

export const memberIdSpec: ParamSpec = { user_id: { type: 'integer', required: true } };
