import type { ParamSpec } from '../params.ts';
import { VISIBILITIES } from '../../domain/access.ts';

// Every setting takes null: domain/settings.ts decides what it means (a default, or a 400).
export const updateSettingsSpec = {
  default_branch_name: { type: 'string', allowBlank: false, nullable: true },
  default_snippet_visibility: { type: 'string', values: VISIBILITIES, nullable: true },
  default_project_visibility: { type: 'string', values: VISIBILITIES, nullable: true },
  default_group_visibility: { type: 'string', values: VISIBILITIES, nullable: true },
  // Names or GitLab's integers (0, 10, 20); normalised to names by domain/settings.ts.
  restricted_visibility_levels: { type: 'string_array', commaSeparated: true, nullable: true },
  file_template_project_id: { type: 'id', nullable: true },
  snippet_size_limit: { type: 'integer', nullable: true },
  max_snippet_files: { type: 'integer', nullable: true },
  can_create_group: { type: 'boolean', nullable: true },
  raw_blob_request_limit: { type: 'integer', nullable: true },
  raw_blob_request_limit_unauthenticated: { type: 'integer', nullable: true },
  global_search_snippet_titles_enabled: { type: 'boolean', nullable: true },
  search_rate_limit: { type: 'integer', nullable: true },
  search_rate_limit_unauthenticated: { type: 'integer', nullable: true },
  throttle_authenticated_api_enabled: { type: 'boolean', nullable: true },
  throttle_authenticated_api_requests_per_period: { type: 'integer', nullable: true },
  throttle_authenticated_api_period_in_seconds: { type: 'integer', nullable: true },
  throttle_unauthenticated_api_enabled: { type: 'boolean', nullable: true },
  throttle_unauthenticated_api_requests_per_period: { type: 'integer', nullable: true },
  throttle_unauthenticated_api_period_in_seconds: { type: 'integer', nullable: true },
  throttle_protected_paths_enabled: { type: 'boolean', nullable: true },
  throttle_protected_paths_requests_per_period: { type: 'integer', nullable: true },
  throttle_protected_paths_period_in_seconds: { type: 'integer', nullable: true },
  // GitLab's API takes the list as text (entries apart by line breaks, commas, semicolons or spaces).
  protected_paths_raw: { type: 'string', nullable: true },
  rate_limiting_response_text: { type: 'string', nullable: true },
  receive_max_input_size: { type: 'integer', nullable: true },
  max_file_size: { type: 'integer', nullable: true },
  search_indexed_file_size_limit_kb: { type: 'integer', nullable: true },
  password_authentication_enabled_for_web: { type: 'boolean', nullable: true },
} satisfies ParamSpec;
