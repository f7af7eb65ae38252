// GitLab's template entities as JSON: a file template ({name, content}, with GitLab's one-line template
// comment for the types that carry it) or a license with its placeholders filled.
import type { TemplateContent } from '../../domain/templates/builtin.ts';
import { fillLicenseJson, type PlaceholderValues } from '../../domain/templates/licenses.ts';
import { escapedInTurns, inTurns, jsonEscape } from '../../domain/utf8.ts';
import { TEMPLATE_HEADER, TEMPLATE_TYPE_RULES, type TemplateType } from '../../domain/templates/types.ts';

/** JSON.stringify of the entity; a long content (a project's file) escaped a stretch at a time (utf8.ts#inTurns). */
export async function templateJson(
  type: TemplateType,
  template: TemplateContent,
  values: PlaceholderValues,
): Promise<string> {
  if (template.kind === 'license') return fillLicenseJson(template.json, values);
  const header = TEMPLATE_TYPE_RULES[type].header ? TEMPLATE_HEADER : '';
  const content = await inTurns(escapedInTurns(`${header}${template.content}`, jsonEscape));
  return `{"name":${JSON.stringify(template.name)},"content":"${content}"}`;
}
