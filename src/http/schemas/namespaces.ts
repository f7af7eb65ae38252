// GitLab's parameter rules for the namespaces API (lib/api/namespaces.rb).
import type { ParamSpec } from '../params.ts';

export const listNamespacesSpec = {
  search: { type: 'string' },
  owned_only: { type: 'boolean' },
  top_level_only: { type: 'boolean', default: false },
  full_path_search: { type: 'boolean', default: false },
} satisfies ParamSpec;
