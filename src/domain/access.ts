// GitLab's numeric access levels and visibility names.
import type { FeatureAccessLevel, Visibility } from '../storage/db/schema.ts';

export const ACCESS = { none: 0, guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
export const ACCESS_LEVELS = [10, 20, 30, 40, 50];
export const VISIBILITIES: Visibility[] = ['private', 'internal', 'public'];
/** GitLab's values of a project feature's level (projects_helpers.rb): snippets and repository alike. */
export const FEATURE_ACCESS_LEVELS: readonly FeatureAccessLevel[] = ['disabled', 'private', 'enabled'];
/** GitLab's visibility_level integers; restricted levels are stored by name but may be given as numbers. */
export const VISIBILITY_LEVEL: Record<Visibility, number> = { private: 0, internal: 10, public: 20 };
export const SCOPES = ['api', 'read_api', 'sudo', 'read_user', 'read_repository', 'write_repository'] as const;
export type Scope = (typeof SCOPES)[number];
