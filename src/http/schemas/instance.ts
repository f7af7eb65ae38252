import type { ParamSpec } from '../params.ts';
import { VISIBILITIES } from '../../domain/access.ts';

export const updateSettingsSpec: ParamSpec = {
  default_branch_name: { type: 'string', allowBlank: false },
  default_snippet_visibility: { type: 'string', values: VISIBILITIES },
  default_project_visibility: { type: 'string', values: VISIBILITIES },
  default_group_visibility: { type: 'string', values: VISIBILITIES },
  // Names or GitLab's integers (0, 10, 20); normalised to names by domain/settings.ts.
  restricted_visibility_levels: { type: 'string_array', commaSeparated: true },
  file_template_project_id: { type: 'integer' },
  snippet_size_limit: { type: 'integer' },
  max_snippet_files: { type: 'integer' },
  can_create_group: { type: 'boolean' },
};
