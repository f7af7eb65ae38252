// Instance endpoints: version, and application settings for administrators.
import type { FastifyInstance } from 'fastify';
import { currentUser, requireAdmin, storeOf } from '../request.ts';
import { validateRequest } from '../params.ts';
import { updateSettingsSpec } from '../schemas/instance.ts';
import { getSettings, updateSettings, type ApplicationSettings } from '../../domain/settings.ts';
import { VISIBILITIES, VISIBILITY_LEVEL } from '../../domain/access.ts';
import { invalidParams, invalidRecord } from '../../domain/failure.ts';
import type { Visibility } from '../../storage/db/schema.ts';
import { SNIPPETD_VERSION } from '../../version.ts';

function visibilityName(value: string): Visibility | null {
  if ((VISIBILITIES as string[]).includes(value)) return value as Visibility;
  const byLevel = VISIBILITIES.find((v) => String(VISIBILITY_LEVEL[v]) === value);
  return byLevel ?? null;
}

export default async function instanceRoutes(app: FastifyInstance) {
  /** GET /version — signed-in users (401 anonymous). */
  app.get('/version', async (request) => {
    currentUser(request);
    return SNIPPETD_VERSION;
  });

  /** GET /application/settings — admins only: 401 anonymous, 403 others. */
  app.get('/application/settings', async (request) => {
    requireAdmin(request);
    return getSettings(storeOf(request));
  });

  /** PUT /application/settings — admins only; 400 for invalid values. */
  app.put('/application/settings', async (request) => {
    requireAdmin(request);
    const p = validateRequest<Partial<ApplicationSettings> & { restricted_visibility_levels?: string[] }>(updateSettingsSpec, request);
    const store = storeOf(request);
    if (p.restricted_visibility_levels) {
      const names = (p.restricted_visibility_levels as string[]).filter((v) => v !== '').map(visibilityName);
      if (names.includes(null)) throw invalidParams('restricted_visibility_levels does not have a valid value');
      p.restricted_visibility_levels = [...new Set(names as Visibility[])];
    }
    if (p.snippet_size_limit !== undefined && p.snippet_size_limit < 1) throw invalidRecord({ snippet_size_limit: ['must be greater than 0'] });
    if (p.max_snippet_files !== undefined && p.max_snippet_files < 0) throw invalidRecord({ max_snippet_files: ['must be greater than or equal to 0'] });
    if (p.file_template_project_id !== undefined && p.file_template_project_id !== null && !(await store.projects.findById(p.file_template_project_id))) {
      throw invalidRecord({ file_template_project_id: ['is invalid'] });
    }
    return updateSettings(store, p);
  });
}
