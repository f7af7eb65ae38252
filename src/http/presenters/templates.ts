// GitLab's template entities as JSON: a file template ({name, content}, with GitLab's one-line template
// comment for the types that carry it) or a license with its placeholders filled.
import type { TemplateContent } from '../../domain/templates/builtin.ts';
import { fillLicenseJson, type PlaceholderValues } from '../../domain/templates/licenses.ts';
import { TEMPLATE_HEADER, TEMPLATE_TYPE_RULES, type TemplateType } from '../../domain/templates/types.ts';

export function templateJson(type: TemplateType, template: TemplateContent, values: PlaceholderValues): string {
  if (template.kind === 'license') return fillLicenseJson(template.json, values);
  const header = TEMPLATE_TYPE_RULES[type].header ? TEMPLATE_HEADER : '';
  return JSON.stringify({ name: template.name, content: `${header}${template.content}` });
}
