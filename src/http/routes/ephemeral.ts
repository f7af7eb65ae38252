// The controls of an ephemeral server (ephemeral.ts) over HTTP, for test suites in any language, as
// LocalStack's and moto's reset endpoints: administrators only, and registered only in ephemeral mode, so
// that everywhere else they are the 404 of any unknown path.
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../request.ts';
import { authorize } from '../../domain/policy.ts';
import { parseSeedText } from '../../domain/seed.ts';
import type { EphemeralControls } from '../../ephemeral.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The controls of ephemeral mode; null when the server keeps its data. */
    ephemeral: EphemeralControls | null;
  }
}

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];

export default async function ephemeralRoutes(app: FastifyInstance) {
  const controls = app.ephemeral;
  if (!controls) return;
  // A seed document may be sent as YAML as well as JSON (the JSON parser is the application's).
  app.addContentTypeParser(YAML_TYPES, { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseSeedText(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  /** POST /-/snippetd/reset — back to the state right after start; 204. */
  app.post('/-/snippetd/reset', async (request, reply) => {
    authorize(currentUser(request), 'admin_all_resources', null);
    await controls.reset();
    return reply.code(204).send();
  });

  /** POST /-/snippetd/seed — adds a seed document (the body); 201 with the ids of what it created. */
  app.post('/-/snippetd/seed', async (request, reply) => {
    authorize(currentUser(request), 'admin_all_resources', null);
    return reply.code(201).send(await controls.seed(request.body ?? {}));
  });
}
