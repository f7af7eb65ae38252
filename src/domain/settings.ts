// Instance-wide application settings (GET/PUT /application/settings) with GitLab's defaults.
import type { Store } from '../storage/db/store.ts';
import type { Visibility } from '../storage/db/schema.ts';

export interface ApplicationSettings {
  default_branch_name: string;
  default_snippet_visibility: Visibility;
  default_project_visibility: Visibility;
  default_group_visibility: Visibility;
  restricted_visibility_levels: Visibility[];
  file_template_project_id: number | null;
  snippet_size_limit: number;
  max_snippet_files: number;
  can_create_group: boolean;
}

export const DEFAULT_SETTINGS: ApplicationSettings = {
  default_branch_name: 'main',
  default_snippet_visibility: 'private',
  default_project_visibility: 'private',
  default_group_visibility: 'private',
  restricted_visibility_levels: [],
  file_template_project_id: null,
  snippet_size_limit: 52_428_800,
  max_snippet_files: 10,
  can_create_group: true,
};

/** Settings resolved from a stored record; read requests get the same cached record back, so resolve it once. */
const resolved = new WeakMap<Record<string, unknown>, ApplicationSettings>();

export async function getSettings(store: Store): Promise<ApplicationSettings> {
  const stored = await store.settings.all();
  let settings = resolved.get(stored);
  if (settings) return settings;
  settings = { ...DEFAULT_SETTINGS };
  for (const key of Object.keys(DEFAULT_SETTINGS) as (keyof ApplicationSettings)[]) {
    if (key in stored) (settings as unknown as Record<string, unknown>)[key] = stored[key];
  }
  Object.freeze(settings);
  resolved.set(stored, settings);
  return settings;
}

export async function updateSettings(store: Store, changes: Partial<ApplicationSettings>): Promise<ApplicationSettings> {
  const known = Object.fromEntries(Object.entries(changes).filter(([k, v]) => k in DEFAULT_SETTINGS && v !== undefined));
  if (Object.keys(known).length) await store.settings.put(known);
  return getSettings(store);
}
