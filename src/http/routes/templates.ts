// The deprecated instance-wide template endpoints (GitLab's lib/api/templates.rb, gitlab-api.md §8), for
// the types the template-types table gives one: no authentication and no project; names follow the
// stricter pattern [\w.-]+.
import type { FastifyInstance } from 'fastify';
import { storeOf } from '../request.ts';
import { validateRequest, type ParamSpec } from '../params.ts';
import { listPageAnswer, paginateArray, parsePage } from '../pagination.ts';
import { ROUTE_NOT_FOUND } from '../plugins/errors.ts';
import { notFound } from '../../domain/failure.ts';
import { builtinLicensesByKey } from '../../domain/templates/builtin.ts';
import { findTemplate, listTemplates } from '../../domain/templates/finder.ts';
import { presentLicense } from '../../domain/templates/licenses.ts';
import { TEMPLATE_TYPES, TEMPLATE_TYPE_RULES } from '../../domain/templates/types.ts';
import { builtTemplateAnswer, rawLastSegment } from './project-templates.ts';
import { sendKeptAnswer, sendPrepared } from '../prepared-answer.ts';

const NAME = /^[\w.-]+$/;

const licenseSpec = {
  name: { type: 'string', required: true },
  project: { type: 'string' },
  fullname: { type: 'string' },
} satisfies ParamSpec;
const popularSpec = { popular: { type: 'boolean' } } satisfies ParamSpec;

export default async function templateRoutes(app: FastifyInstance) {
  /** GET /templates/licenses[?popular=] — full license objects by key, placeholders not filled. */
  app.get('/templates/licenses', async (request, reply) => {
    const { popular } = validateRequest(popularSpec, request);
    return paginateArray(request, reply, builtinLicensesByKey(popular)).map((l) => presentLicense(l, l.body));
  });

  /** GET /templates/licenses/:name — one license with its placeholders filled; 404 License Not Found. */
  app.get('/templates/licenses/:name', async (request, reply) => {
    if (!NAME.test(rawLastSegment(request))) return reply.code(404).send(ROUTE_NOT_FOUND);
    const year = new Date().getUTCFullYear();
    return sendKeptAnswer(
      request,
      reply,
      async () => {
        const p = validateRequest(licenseSpec, request);
        const [store, viewer] = [storeOf(request), request.principal.user];
        const found = await findTemplate(store, request.server.dataDir, viewer, 'instance', 'licenses', p.name);
        if (!found) throw notFound('License');
        return builtTemplateAnswer('licenses', found, {
          fullname: p.fullname || viewer?.name,
          project: p.project,
          year,
        });
      },
      String(year),
    );
  });

  for (const type of TEMPLATE_TYPES) {
    const { deprecated, entity } = TEMPLATE_TYPE_RULES[type];
    if (!deprecated || entity === 'license') continue;

    /** GET /templates/<type> — [{key, name}] in GitLab's category order, paginated. */
    app.get(`/templates/${type}`, async (request, reply) => {
      const page = parsePage(request);
      const [store, viewer] = [storeOf(request), request.principal.user];
      const list = await listTemplates(store, request.server.dataDir, viewer, 'instance', type);
      return sendPrepared(reply, listPageAnswer(request, list.templates, page));
    });

    /** GET /templates/<type>/:name — {name, content}; 404 "<singular> Not Found". */
    app.get(`/templates/${type}/:name`, async (request, reply) => {
      if (!NAME.test(rawLastSegment(request))) return reply.code(404).send(ROUTE_NOT_FOUND);
      const { name } = request.params as { name: string };
      return sendKeptAnswer(request, reply, async () => {
        const [store, viewer] = [storeOf(request), request.principal.user];
        const found = await findTemplate(store, request.server.dataDir, viewer, 'instance', type, name);
        if (!found) throw notFound(deprecated.notFound);
        return builtTemplateAnswer(type, found, {});
      });
    });
  }
}
