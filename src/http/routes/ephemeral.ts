// The controls of an ephemeral server (ephemeral.ts) over HTTP, for test suites in any language, as
// LocalStack's and moto's reset endpoints: administrators only, and registered only in ephemeral mode, so
// that everywhere else they are the 404 of any unknown path.
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../request.ts';
import { authorize } from '../../domain/policy.ts';
import { seedTextFailure } from '../../domain/seed-text.ts';
import type { EphemeralControls } from '../../ephemeral.ts';
import { Failure } from '../../domain/failure.ts';
import { JSON_TYPE } from '../plugins/body.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The controls of ephemeral mode; null when the server keeps its data. */
    ephemeral: EphemeralControls | null;
  }
}

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];

/** A YAML body as it came, not parsed yet. */
class YamlText {
  constructor(readonly text: string) {}
}

export default async function ephemeralRoutes(app: FastifyInstance) {
  const controls = app.ephemeral;
  if (!controls) return;
  // A seed document may be sent as YAML as well as JSON (the JSON parser is the application's). Its text is
  // parsed once an administrator sent it, in the body parse thread: anyone may send a body, and the YAML
  // parser takes seconds over a large one.
  app.addContentTypeParser(YAML_TYPES, { parseAs: 'string' }, (_request, body, done) =>
    done(null, new YamlText(body as string)),
  );

  /** POST /-/snippetd/reset — back to the state right after start; 204. */
  app.post('/-/snippetd/reset', async (request, reply) => {
    authorize(currentUser(request), 'admin_all_resources', null);
    await controls.reset();
    return reply.code(204).send();
  });

  /** POST /-/snippetd/seed — adds a seed document (the body); 201 with the ids of what it created. */
  app.post('/-/snippetd/seed', async (request, reply) => {
    authorize(currentUser(request), 'admin_all_resources', null);
    // JSON or YAML only: another type's body reached here as nothing (text/plain, a seed of nothing, 201) or as
    // a form's one key.
    const json = JSON_TYPE.test(request.headers['content-type']?.toLowerCase() ?? '');
    if (!json && !(request.body instanceof YamlText)) throw new Failure('unsupported_media_type');
    const document =
      request.body instanceof YamlText
        ? await app.parseYaml(request.body.text).catch((error) => {
            throw error instanceof Failure ? error : seedTextFailure(error);
          })
        : request.body;
    return reply.code(201).send(await controls.seed(document ?? {}));
  });
}
