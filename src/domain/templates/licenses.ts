// License placeholders (docs/gitlab-compatibility.md#license-placeholders): year, copyright holder and
// project, in any of the bracket styles [..], <..> and {..}, case-insensitive; and the license entity's JSON.
import { Failure } from '../failure.ts';
import { CHARS_A_TURN, escapedInTurns, jsonEscape } from '../utf8.ts';
import { humanSize } from '../snippets/limits.ts';

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

/** The longest text PLACEHOLDER matches ("[one line " … " what it does.]"). */
const LONGEST_PLACEHOLDER = 256;

/**
 * `text` split at its placeholders, each piece escaped, as work that pauses after each stretch of CHARS_A_TURN
 * (utf8.ts#inTurns): a template project's license may be tens of megabytes. Each stretch is searched as a slice
 * that runs on by the longest placeholder, from where the last match ended, so the matches are those of one
 * search of the whole text.
 */
export function* splitPlaceholders(
  text: string,
  escapeText: (s: string) => string = asIs,
): Generator<void, PlaceholderText> {
  const parts: PlaceholderText = [];
  let last = 0;
  for (let from = 0; from < text.length; from += CHARS_A_TURN) {
    const start = Math.max(from, last);
    const stretch = text.slice(start, Math.min(text.length, from + CHARS_A_TURN + LONGEST_PLACEHOLDER));
    for (const m of stretch.matchAll(PLACEHOLDER)) {
      const at = start + m.index;
      if (at >= from + CHARS_A_TURN) break;
      parts.push(yield* escapedInTurns(text.slice(last, at), escapeText), {
        kind: m[1] ? 'year' : m[2] ? 'fullname' : 'project',
        original: escapeText(m[0]),
      });
      last = at + m[0].length;
    }
    if (text.length > CHARS_A_TURN) yield;
  }
  parts.push(yield* escapedInTurns(text.slice(last), escapeText));
  return parts;
}

/**
 * How much longer filling in may make a text. A template project's license can hold a placeholder many thousand
 * times, each filled with a full name of up to 16 KiB: hundreds of megabytes, or past the longest string V8
 * makes, a failure. GitLab has no such bound; docs/gitlab-compatibility.md#license-placeholders.
 */
export const MAX_FILLED_GROWTH = 16 * 1024 * 1024;

const tooLargeFilled = () =>
  new Failure('bad_request', `filled in, the license would grow by more than ${humanSize(MAX_FILLED_GROWTH)}`);

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
  if (values.project && fullname !== null) {
    const inProject = [...values.project.matchAll(FULLNAME)];
    if (inProject.length * values.fullname!.length > MAX_FILLED_GROWTH) throw tooLargeFilled();
  }
  const project = values.project
    ? escapeText(fullname === null ? values.project : values.project.replace(FULLNAME, () => values.fullname!))
    : null;
  const filled = (slot: Slot) =>
    (slot.kind === 'year' ? year : slot.kind === 'project' ? project : fullname) ?? slot.original;
  let growth = 0;
  for (const part of parts) if (typeof part !== 'string') growth += filled(part).length - part.original.length;
  if (growth > MAX_FILLED_GROWTH) throw tooLargeFilled();
  let out = '';
  for (const part of parts) out += typeof part === 'string' ? part : filled(part);
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

/**
 * A license entity's JSON split at the placeholders of its content, each piece already escaped: filling it
 * in joins strings instead of escaping the whole text again (tens of kilobytes for the GPL).
 */
export interface LicenseJson {
  before: string;
  content: PlaceholderText;
}

/** As work that pauses (utf8.ts#inTurns), for a template project's license of any size. */
export function* licenseJsonOf(l: LicenseData): Generator<void, LicenseJson> {
  const empty = JSON.stringify(presentLicense(l, ''));
  return { before: empty.slice(0, -'""}'.length), content: yield* splitPlaceholders(l.body, jsonEscape) };
}

/** The license entity as JSON with its placeholders filled (the same bytes as JSON.stringify of presentLicense). */
export function fillLicenseJson(json: LicenseJson, values: PlaceholderValues): string {
  return `${json.before}"${fillSplit(json.content, values, jsonEscape)}"}`;
}
