// Instance endpoints: metadata (and its deprecated name, version), and application settings for administrators.
import type { FastifyInstance } from 'fastify';
import { currentUser, storeOf } from '../request.ts';
import { validateRequest } from '../params.ts';
import { updateSettingsSpec } from '../schemas/instance.ts';
import { getSettings, updateSettings } from '../../domain/settings.ts';
import { SNIPPETD_VERSION } from '../../version.ts';
import { authorize } from '../../domain/policy.ts';
import { applicationSettings } from '../presenters/settings.ts';

/** GitLab's metadata entity: no agent server for Kubernetes (kas) and not the enterprise edition. */
const INSTANCE_METADATA = {
  ...SNIPPETD_VERSION,
  kas: { enabled: false, externalUrl: null, version: null },
  enterprise: false,
};

export default async function instanceRoutes(app: FastifyInstance) {
  /** GET /metadata and GET /version — signed-in users (401 anonymous); a read_user token may read them too. */
  for (const path of ['/metadata', '/version']) {
    app.get(path, { config: { scopes: ['read_user'] } }, async (request) => {
      currentUser(request);
      return INSTANCE_METADATA;
    });
  }

  /** GET /application/settings — admins only: 401 anonymous, 403 others. */
  app.get('/application/settings', async (request) => {
    authorize(currentUser(request), 'admin_all_resources', null);
    return applicationSettings(await getSettings(storeOf(request)));
  });

  /** PUT /application/settings — admins only; 400 for invalid values (Grape's types, then the model's rules). */
  app.put('/application/settings', async (request) => {
    authorize(currentUser(request), 'admin_all_resources', null);
    return applicationSettings(await updateSettings(storeOf(request), validateRequest(updateSettingsSpec, request)));
  });
}
