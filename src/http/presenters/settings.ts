import type { ApplicationSettings } from '../../domain/settings.ts';

/**
 * GitLab's ApplicationSetting entity: every setting as it is, but the protected paths, which its API answers as
 * `protected_paths_raw`, the list one entry a line (array_to_string).
 */
export function applicationSettings(settings: ApplicationSettings) {
  const { protected_paths, ...others } = settings;
  return { ...others, protected_paths_raw: protected_paths.join('\n') };
}
