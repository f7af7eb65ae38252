// Project templates (GitLab's lib/api/project_templates.rb). Order of checks: the type and the
// parameters (400, before the project is looked up), the project (401 bad token / 404), the template
// permission (403 with GitLab's sentence), the template (404 Template Not Found).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { storeOf } from '../request.ts';
import { validateRequest, type ParamSpec } from '../params.ts';
import { arrayPage, parsePage } from '../pagination.ts';
import { sendAnswer } from '../kept-answers.ts';
import { templateJson } from '../presenters/templates.ts';
import { findReadableProject, type ProjectContext } from '../../domain/projects.ts';
import { authorize } from '../../domain/policy.ts';
import { invalidParams, notFound, routeNotFound } from '../../domain/failure.ts';
import { isSafeFilePath } from '../../domain/paths.ts';
import { TEMPLATE_TYPES, TEMPLATE_TYPE_RULES, type TemplateType } from '../../domain/templates/types.ts';
import { findTemplate, listTemplates } from '../../domain/templates/finder.ts';

/** GitLab's route requirement for :name (lib/api/project_templates.rb). */
export const TEMPLATE_NAME = /^[\w()%.+-]+$/;

const typeSpec = { type: { type: 'string', required: true, values: TEMPLATE_TYPES } } satisfies ParamSpec;
const singleSpec = {
  ...typeSpec,
  source_template_project_id: { type: 'id' },
  project: { type: 'string' },
  fullname: { type: 'string' },
} satisfies ParamSpec;

/** The raw (still URL-encoded) last path segment: the :name route requirement applies to it. */
export function rawLastSegment(request: FastifyRequest): string {
  const url = request.url;
  const query = url.indexOf('?');
  const end = query === -1 ? url.length : query;
  return url.slice(url.lastIndexOf('/', end - 1) + 1, end);
}

/** Decodes :name and refuses traversal (D6: 400, never a 500 or file contents). */
export function templateName(request: FastifyRequest): string {
  const name = (request.params as { name: string }).name;
  if (!isSafeFilePath(name) || name.split('/').includes('..')) throw invalidParams('name should be a valid file path');
  return name;
}

/** The project (404 when unreadable), if the caller may read its templates of this type (else 403). */
async function templateProject(request: FastifyRequest, type: TemplateType): Promise<ProjectContext> {
  const viewer = request.principal.user;
  const ctx = await findReadableProject(storeOf(request), viewer, (request.params as { id: string }).id);
  const denied = `Your current role does not have the required permissions to access the ${type} template. Contact your project administrator for assistance.`;
  authorize(viewer, TEMPLATE_TYPE_RULES[type].permission, ctx, denied);
  return ctx;
}

export default async function projectTemplateRoutes(app: FastifyInstance) {
  /** GET /projects/:id/templates/:type — [{key, name}] in GitLab's order, paginated (20 per page). */
  app.get('/projects/:id/templates/:type', async (request, reply) => {
    const { type } = validateRequest(typeSpec, request);
    const page = parsePage(request);
    return sendAnswer(request, reply, { year: null }, async () => {
      const ctx = await templateProject(request, type);
      const list = await listTemplates(storeOf(request), request.principal.user, ctx, type);
      const { items, headers } = arrayPage(request, list.templates, page);
      return { json: JSON.stringify(items), headers, source: list.source };
    });
  });

  /** GET /projects/:id/templates/:type/:name — {name, content} or a license; 404 Template Not Found. */
  app.get('/projects/:id/templates/:type/:name', async (request, reply) => {
    if (!TEMPLATE_NAME.test(rawLastSegment(request))) throw routeNotFound();
    const p = validateRequest(singleSpec, request);
    const name = templateName(request);
    const year = new Date().getUTCFullYear();
    const isLicense = TEMPLATE_TYPE_RULES[p.type].entity === 'license';
    return sendAnswer(request, reply, { year: isLicense ? year : null }, async () => {
      const ctx = await templateProject(request, p.type);
      const [store, viewer] = [storeOf(request), request.principal.user];
      const found = await findTemplate(store, viewer, ctx, p.type, name, p.source_template_project_id);
      if (!found) throw notFound('Template');
      const values = { fullname: p.fullname || viewer?.name, project: p.project, year };
      return { json: await templateJson(p.type, found.template, values), source: found.source };
    });
  });
}
