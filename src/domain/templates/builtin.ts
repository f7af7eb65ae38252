// Built-in templates, read once, when a request first needs them, from where the template-types table says
// (types.ts): the licenses of @rexxars/choosealicense-list, gitignr's snapshot of github/gitignore, and the
// Dockerfiles and GitLab CI templates written by this project (src/templates-data). Lists are in GitLab's category order
// (docs/gitlab-compatibility.md#template-lists).
import fs from 'node:fs';
import path from 'node:path';
import { byteOrder } from '../../order.ts';
import { licenseJsonOf, type LicenseData, type LicenseJson } from './licenses.ts';
import { atOnce } from '../utf8.ts';
import { TEMPLATE_TYPES, TEMPLATE_TYPE_RULES, type BuiltinFiles, type TemplateType } from './types.ts';
import { requireFromHere } from '../../shipped-files.ts';

export interface ListedTemplate {
  key: string;
  name: string;
}

/** A template's text as found: a file, or a license with its entity's JSON split at the placeholders. */
export type TemplateContent =
  | { kind: 'file'; name: string; content: string }
  | { kind: 'license'; license: LicenseData; json: LicenseJson };

/** One type's built-in templates. */
export interface BuiltinType {
  /** The list items, in list order. */
  listed: readonly ListedTemplate[];
  /** Every template by name, listed or not; the first of a name in list order wins (Languages before Global). */
  byName: ReadonlyMap<string, TemplateContent>;
}

interface FileTemplate {
  name: string;
  content: string;
}

/** The files of one folder (not recursive) ending in `extension`, by name in byte order. */
function readFolder(dir: string, extension: string): FileTemplate[] {
  if (!fs.existsSync(dir)) return [];
  return (
    fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith(extension))
      .map((e) => e.name.slice(0, -extension.length))
      .sort(byteOrder)
      // Line endings as in the upstream repositories (the gitignore snapshot was packed with CRLF).
      .map((name) => ({
        name,
        content: fs.readFileSync(path.join(dir, `${name}${extension}`), 'utf8').replace(/\r\n/g, '\n'),
      }))
  );
}

function loadFiles(files: BuiltinFiles): BuiltinType {
  const all = files.folders.flatMap((folder) => readFolder(path.join(files.root, folder), files.extension));
  const isUnlisted = files.unlisted ?? (() => false);
  const listed = all.filter((t) => !isUnlisted(t.name));
  const byName = new Map<string, TemplateContent>();
  for (const t of [...listed, ...all.filter((t) => isUnlisted(t.name))])
    if (!byName.has(t.name)) byName.set(t.name, { kind: 'file', name: t.name, content: t.content });
  return { listed: listed.map((t) => ({ key: t.name, name: t.name })), byName };
}

/** The fields of @rexxars/choosealicense-list's licenses.json that GitLab's answers use. */
interface ChooseALicenseEntry {
  id: string;
  'spdx-id'?: string;
  title: string;
  nickname?: string;
  featured?: boolean;
  description?: string;
  conditions?: string[];
  permissions?: string[];
  limitations?: string[];
  body: string;
}

/** Every license, in GitLab's list order: the non-popular ones by key, then the popular ones by key. */
function readLicenses(): LicenseData[] {
  const raw = requireFromHere('@rexxars/choosealicense-list/licenses.json') as Record<string, ChooseALicenseEntry>;
  const licenses = Object.values(raw).map((l) => {
    const key = String(l.id).toLowerCase();
    const spdx = l['spdx-id'];
    return {
      key,
      name: l.title,
      nickname: l.nickname || null,
      popular: l.featured === true,
      description: l.description ?? null,
      conditions: l.conditions ?? [],
      permissions: l.permissions ?? [],
      limitations: l.limitations ?? [],
      html_url: `http://choosealicense.com/licenses/${key}/`,
      source_url: spdx ? `https://spdx.org/licenses/${spdx}.html` : null,
      // The text with leading blank lines removed and its end kept as it is
      // (docs/gitlab-compatibility.md#template-lookup).
      body: String(l.body).replace(/^(\s*\n)+/, ''),
    };
  });
  return [
    ...licenses.filter((l) => !l.popular).sort((a, b) => byteOrder(a.key, b.key)),
    ...licenses.filter((l) => l.popular).sort((a, b) => byteOrder(a.key, b.key)),
  ];
}

function loadLicenses(licenses: LicenseData[]): BuiltinType {
  return {
    listed: licenses.map((l) => ({ key: l.key, name: l.name })),
    // Each license's JSON is split at its placeholders here, once: a request only joins the pieces.
    byName: new Map(licenses.map((l) => [l.key, { kind: 'license', license: l, json: atOnce(licenseJsonOf(l)) }])),
  };
}

interface Builtin {
  licenses: readonly LicenseData[];
  types: Partial<Record<TemplateType, BuiltinType>>;
}

let loaded: Builtin | null = null;

/**
 * Loaded once per process, by the first request that needs it (13 ms): the data ships with the code and never
 * changes while it runs, and most ephemeral servers of a test suite never serve a template.
 */
function builtin(): Builtin {
  if (loaded) return loaded;
  const licenses = readLicenses();
  const types: Builtin['types'] = {};
  for (const type of TEMPLATE_TYPES) {
    const source = TEMPLATE_TYPE_RULES[type].source;
    if (source === 'project-repository') continue;
    types[type] = source.builtin === 'choosealicense' ? loadLicenses(licenses) : loadFiles(source.builtin);
  }
  loaded = { licenses, types };
  return loaded;
}

/** The built-in templates of a type whose source is built-in data; null for the others. */
export function builtinTemplates(type: TemplateType): BuiltinType | null {
  return builtin().types[type] ?? null;
}

/** The built-in licenses by key, all of them or the popular (or other) ones: the deprecated endpoint's list. */
export function builtinLicensesByKey(popular?: boolean): LicenseData[] {
  return builtin()
    .licenses.filter((l) => popular === undefined || l.popular === popular)
    .sort((a, b) => byteOrder(a.key, b.key));
}
