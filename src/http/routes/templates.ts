// The deprecated instance-wide template endpoints (GitLab's lib/api/templates.rb,
// docs/gitlab-compatibility.md#deprecated-template-endpoints), for the types the template-types table gives one: no authentication and no project; names follow the
// stricter pattern [\w.-]+.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { storeOf } from '../request.ts';
import { validateRequest, type ParamSpec } from '../params.ts';
import { arrayPage, paginateArray, parsePage } from '../pagination.ts';
import { sendAnswer } from '../kept-answers.ts';
import { templateJson } from '../presenters/templates.ts';
import { notFound, routeNotFound } from '../../domain/failure.ts';
import { builtinLicensesByKey } from '../../domain/templates/builtin.ts';
import { findTemplate, listTemplates } from '../../domain/templates/finder.ts';
import { presentLicense } from '../../domain/templates/licenses.ts';
import { TEMPLATE_TYPES, TEMPLATE_TYPE_RULES, type TemplateType } from '../../domain/templates/types.ts';
import { rawLastSegment } from './project-templates.ts';

const NAME = /^[\w.-]+$/;

const licenseSpec = {
  name: { type: 'string', required: true },
  project: { type: 'string' },
  fullname: { type: 'string' },
} satisfies ParamSpec;
const popularSpec = { popular: { type: 'boolean' } } satisfies ParamSpec;

export default async function templateRoutes(app: FastifyInstance) {
  for (const type of TEMPLATE_TYPES) {
    const rule = TEMPLATE_TYPE_RULES[type];
    if (!rule.deprecated) continue;
    if (rule.entity === 'license') {
      /** GET /templates/licenses[?popular=] — full license objects by key, placeholders not filled. */
      app.get(`/templates/${type}`, async (request, reply) => {
        const { popular } = validateRequest(popularSpec, request);
        return paginateArray(request, reply, builtinLicensesByKey(popular)).map((l) => presentLicense(l, l.body));
      });
    } else {
      /** GET /templates/<type> — [{key, name}] in GitLab's category order, paginated. */
      app.get(`/templates/${type}`, async (request, reply) => {
        const page = parsePage(request);
        return sendAnswer(request, reply, { year: null }, async () => {
          const [store, viewer] = [storeOf(request), request.principal.user];
          const list = await listTemplates(store, viewer, 'instance', type);
          const { items, headers } = arrayPage(request, list.templates, page);
          return { json: JSON.stringify(items), headers, source: list.source };
        });
      });
    }
    app.get(`/templates/${type}/:name`, singleTemplate(type, rule.deprecated.notFound));
  }
}

/**
 * GET /templates/<type>/:name — {name, content}, or a license with its placeholders filled (project,
 * fullname); 404 "<name> Not Found".
 */
function singleTemplate(type: TemplateType, notFoundName: string) {
  const isLicense = TEMPLATE_TYPE_RULES[type].entity === 'license';
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (!NAME.test(rawLastSegment(request))) throw routeNotFound();
    const p: { project?: string; fullname?: string } = isLicense ? validateRequest(licenseSpec, request) : {};
    const { name } = request.params as { name: string };
    const year = new Date().getUTCFullYear();
    return sendAnswer(request, reply, { year: isLicense ? year : null }, async () => {
      const [store, viewer] = [storeOf(request), request.principal.user];
      const found = await findTemplate(store, viewer, 'instance', type, name);
      if (!found) throw notFound(notFoundName);
      const values = { fullname: p.fullname || viewer?.name, project: p.project, year };
      return { json: await templateJson(type, found.template, values), source: found.source };
    });
  };
}
