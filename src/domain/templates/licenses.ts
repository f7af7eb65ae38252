// License placeholders (gitlab-api.md §7.5): year, copyright holder and project, in any of the bracket
// styles [..], <..> and {..}, case-insensitive.
import type { LicenseData } from './builtin.ts';

const open = '[\\[<{]';
const close = '[\\]>}]';
const YEAR = new RegExp(`${open}(?:year|yyyy)${close}`, 'gi');
const FULLNAME = new RegExp(`${open}(?:fullname|name of author|name of copyright owner)${close}`, 'gi');
const PROJECT = new RegExp(`${open}(?:project|description|one line [^\\n\\]>}]* what it does\\.)${close}`, 'gi');

export function fillPlaceholders(text: string, values: { fullname?: string | null; project?: string | null; year?: number }): string {
  let out = text.replace(YEAR, String(values.year ?? new Date().getUTCFullYear()));
  if (values.fullname) out = out.replace(FULLNAME, () => values.fullname!);
  if (values.project) out = out.replace(PROJECT, () => values.project!);
  return out;
}

/** GitLab's license entity: exactly these 11 keys in this order. */
export function presentLicense(l: LicenseData, content: string) {
  return {
    key: l.key,
    name: l.name,
    nickname: l.nickname,
    html_url: l.html_url,
    source_url: l.source_url,
    popular: l.popular,
    description: l.description,
    conditions: l.conditions,
    permissions: l.permissions,
    limitations: l.limitations,
    content,
  };
}
