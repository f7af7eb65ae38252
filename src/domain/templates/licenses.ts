// License placeholders (docs/gitlab-compatibility.md#license-placeholders): year, copyright holder and
// project, in any of the bracket styles [..], <..> and {..}, case-insensitive; and the license entity's JSON.

export interface LicenseData {
  key: string;
  name: string;
  nickname: string | null;
  popular: boolean;
  description: string | null;
  conditions: string[] | null;
  permissions: string[] | null;
  limitations: string[] | null;
  html_url: string | null;
  source_url: string | null;
  body: string;
}

const open = '[\\[<{]';
const close = '[\\]>}]';
const FULLNAME = new RegExp(`${open}(?:fullname|name of author|name of copyright owner)${close}`, 'gi');
// One pass finds every placeholder; the group that matched says which kind it is. The middle of "[one line …
// what it does.]" is at most 200 characters: unbounded, a line of "[one line " repeated (a template project's
// file) took time in proportion to its square.
const PLACEHOLDER = new RegExp(
  `${open}(?:(year|yyyy)|(fullname|name of author|name of copyright owner)|(project|description|one line [^\\n\\]>}]{0,200} what it does\\.))${close}`,
  'gi',
);

type Slot = { kind: 'year' | 'fullname' | 'project'; original: string };

/** A text split at its placeholders once, so filling it in is joining strings. */
export type PlaceholderText = (string | Slot)[];

export interface PlaceholderValues {
  fullname?: string | null;
  project?: string | null;
  year?: number;
}

const asIs = (text: string) => text;

export function splitPlaceholders(text: string, escapeText: (s: string) => string = asIs): PlaceholderText {
  const parts: PlaceholderText = [];
  let last = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    parts.push(escapeText(text.slice(last, m.index)), {
      kind: m[1] ? 'year' : m[2] ? 'fullname' : 'project',
      original: escapeText(m[0]),
    });
    last = m.index + m[0].length;
  }
  parts.push(escapeText(text.slice(last)));
  return parts;
}

/**
 * GitLab fills the year, then the project, then the full name, each over the whole text: so a full-name
 * placeholder inside the project value is filled too. Empty values leave their placeholders as they are.
 */
export function fillSplit(
  parts: PlaceholderText,
  values: PlaceholderValues,
  escapeText: (s: string) => string = asIs,
): string {
  const year = String(values.year ?? new Date().getUTCFullYear());
  const fullname = values.fullname ? escapeText(values.fullname) : null;
  const project = values.project
    ? escapeText(fullname === null ? values.project : values.project.replace(FULLNAME, () => values.fullname!))
    : null;
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') out += part;
    else if (part.kind === 'year') out += year;
    else out += (part.kind === 'project' ? project : fullname) ?? part.original;
  }
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

/** The inside of a JSON string literal for `s`. */
const jsonEscape = (s: string) => JSON.stringify(s).slice(1, -1);

/**
 * A license entity's JSON split at the placeholders of its content, each piece already escaped: filling it
 * in joins strings instead of escaping the whole text again (tens of kilobytes for the GPL).
 */
export interface LicenseJson {
  before: string;
  content: PlaceholderText;
}

export function licenseJsonOf(l: LicenseData): LicenseJson {
  const empty = JSON.stringify(presentLicense(l, ''));
  return { before: empty.slice(0, -'""}'.length), content: splitPlaceholders(l.body, jsonEscape) };
}

/** The license entity as JSON with its placeholders filled (the same bytes as JSON.stringify of presentLicense). */
export function fillLicenseJson(json: LicenseJson, values: PlaceholderValues): string {
  return `${json.before}"${fillSplit(json.content, values, jsonEscape)}"}`;
}
