// Project templates (GitLab's lib/api/project_templates.rb). Order of checks: the type and the
// parameters (400, before the project is looked up), the project (401 bad token / 404), the template
// permission (403 with GitLab's sentence), the template (404 Template Not Found).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { storeOf } from '../request.ts';
import { validateRequest, type ParamSpec } from '../params.ts';
import { listPageAnswer, parsePage } from '../pagination.ts';
import { ROUTE_NOT_FOUND } from '../plugins/errors.ts';
import { findReadableProject } from '../../domain/projects.ts';
import { canReadProject, canReadRepository } from '../../domain/policy.ts';
import { forbidden, invalidParams, notFound } from '../../domain/failure.ts';
import { isSafeFilePath } from '../../domain/paths.ts';
import {
  TEMPLATE_HEADER,
  TEMPLATE_TYPES,
  TEMPLATE_TYPE_RULES,
  type TemplateType,
} from '../../domain/templates/types.ts';
import type { TemplateContent } from '../../domain/templates/builtin.ts';
import { findTemplate, listTemplates, type FoundTemplate } from '../../domain/templates/finder.ts';
import { fillLicenseJson, type PlaceholderValues } from '../../domain/templates/licenses.ts';
import { prepareJsonAnswer, sendKeptAnswer, type BuiltAnswer, type PreparedAnswer } from '../prepared-answer.ts';

/** GitLab's route requirement for :name (lib/api/project_templates.rb). */
export const TEMPLATE_NAME = /^[\w()%.+-]+$/;

const typeSpec = { type: { type: 'string', required: true, values: TEMPLATE_TYPES } } satisfies ParamSpec;
const singleSpec = {
  ...typeSpec,
  source_template_project_id: { type: 'integer' },
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

/**
 * A template's answer. Built-in templates are the same objects on every request, so a file template's
 * answer is prepared once and a license's JSON once up to its placeholders (licenseJson).
 */
const fileTemplateAnswers = new WeakMap<TemplateContent, PreparedAnswer>();

export function templateAnswer(type: TemplateType, found: TemplateContent, values: PlaceholderValues): PreparedAnswer {
  if (found.kind === 'license') return prepareJsonAnswer(fillLicenseJson(found.json, values));
  let answer = fileTemplateAnswers.get(found);
  if (answer === undefined) {
    const prefix = TEMPLATE_TYPE_RULES[type].header ? TEMPLATE_HEADER : '';
    answer = prepareJsonAnswer(JSON.stringify({ name: found.name, content: `${prefix}${found.content}` }));
    fileTemplateAnswers.set(found, answer);
  }
  return answer;
}

/** A found template's answer for sendKeptAnswer: kept unless git decided it, weighed once if shared. */
export function builtTemplateAnswer(type: TemplateType, found: FoundTemplate, values: PlaceholderValues): BuiltAnswer {
  const answer = templateAnswer(type, found.template, values);
  return { answer, keep: found.source === 'builtin', shared: found.template.kind === 'file' };
}

async function templateProject(request: FastifyRequest, type: TemplateType) {
  const viewer = request.principal.user;
  const ctx = await findReadableProject(storeOf(request), viewer, (request.params as { id: string }).id);
  const allowed =
    TEMPLATE_TYPE_RULES[type].permission === 'read_project'
      ? canReadProject(viewer, ctx.project, ctx.access)
      : canReadRepository(viewer, ctx.project, ctx.access);
  if (!allowed) {
    throw forbidden(
      `Your current role does not have the required permissions to access the ${type} template. Contact your project administrator for assistance.`,
    );
  }
  return ctx;
}

export default async function projectTemplateRoutes(app: FastifyInstance) {
  /** GET /projects/:id/templates/:type — [{key, name}] in GitLab's order, paginated (20 per page). */
  app.get('/projects/:id/templates/:type', (request, reply) =>
    sendKeptAnswer(request, reply, async () => {
      const { type } = validateRequest(typeSpec, request);
      const page = parsePage(request);
      const ctx = await templateProject(request, type);
      const [store, viewer] = [storeOf(request), request.principal.user];
      const list = await listTemplates(store, request.server.dataDir, viewer, ctx, type);
      const keep = list.source === 'builtin';
      return { answer: listPageAnswer(request, list.templates, page), keep, shared: Object.isFrozen(list.templates) };
    }),
  );

  /** GET /projects/:id/templates/:type/:name — {name, content} or a license; 404 Template Not Found. */
  app.get('/projects/:id/templates/:type/:name', async (request, reply) => {
    if (!TEMPLATE_NAME.test(rawLastSegment(request))) return reply.code(404).send(ROUTE_NOT_FOUND);
    // A license's answer also depends on the year: the kept answers are the year's.
    const year = new Date().getUTCFullYear();
    // An inline function: under tsx (`npm start`) a named one costs a name definition on every request.
    return sendKeptAnswer(
      request,
      reply,
      async () => {
        const p = validateRequest(singleSpec, request);
        const name = templateName(request);
        const ctx = await templateProject(request, p.type);
        const [store, viewer] = [storeOf(request), request.principal.user];
        const found = await findTemplate(
          store,
          request.server.dataDir,
          viewer,
          ctx,
          p.type,
          name,
          p.source_template_project_id,
        );
        if (!found) throw notFound('Template');
        return builtTemplateAnswer(p.type, found, {
          fullname: p.fullname || viewer?.name,
          project: p.project,
          year,
        });
      },
      TEMPLATE_TYPE_RULES[(request.params as { type: TemplateType }).type]?.entity === 'license' ? String(year) : '',
    );
  });
}
