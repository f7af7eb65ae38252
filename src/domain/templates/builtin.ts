// Built-in templates, read once at start-up: licenses from @rexxars/choosealicense-list, gitignores from
// gitignr's snapshot of github/gitignore, Dockerfiles and GitLab CI templates written by this project
// (src/templates-data). Lists are prepared in GitLab's category order (gitlab-api.md §7.3).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { byteOrder } from '../../order.ts';

export type TemplateType = 'dockerfiles' | 'gitignores' | 'gitlab_ci_ymls' | 'licenses' | 'issues' | 'merge_requests';
export const TEMPLATE_TYPES: TemplateType[] = [
  'dockerfiles',
  'gitignores',
  'gitlab_ci_ymls',
  'licenses',
  'issues',
  'merge_requests',
];

export interface FileTemplate {
  key: string;
  name: string;
  category: string;
  content: string;
}

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

const require = createRequire(import.meta.url);
const DATA_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'templates-data');

export { byteOrder };

/** Every file in `dir` (not recursive) ending in `ext`, as templates of one category, sorted by name. */
export function readCategory(
  dir: string,
  ext: string,
  category: string,
  hide: (name: string) => boolean = () => false,
): FileTemplate[] {
  if (!fs.existsSync(dir)) return [];
  return (
    fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith(ext))
      .map((e) => e.name.slice(0, -ext.length))
      .filter((name) => !hide(name))
      .sort(byteOrder)
      // Line endings as in the upstream repositories (the gitignore snapshot was packed with CRLF).
      .map((name) => ({
        key: name,
        name,
        category,
        content: fs.readFileSync(path.join(dir, `${name}${ext}`), 'utf8').replace(/\r\n/g, '\n'),
      }))
  );
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

function loadLicenses(): LicenseData[] {
  const raw = require('@rexxars/choosealicense-list/licenses.json') as Record<string, ChooseALicenseEntry>;
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
      // The text with leading blank lines removed and its end kept as it is (gitlab-api.md §7.8).
      body: String(l.body).replace(/^(\s*\n)+/, ''),
    };
  });
  // GitLab lists the non-popular licenses first, then the popular ones, each by key.
  return [
    ...licenses.filter((l) => !l.popular).sort((a, b) => byteOrder(a.key, b.key)),
    ...licenses.filter((l) => l.popular).sort((a, b) => byteOrder(a.key, b.key)),
  ];
}

function loadGitignores(): FileTemplate[] {
  const root = path.join(path.dirname(require.resolve('gitignr/package.json')), 'gitignore');
  return [
    ...readCategory(root, '.gitignore', 'Languages'),
    ...readCategory(path.join(root, 'Global'), '.gitignore', 'Global'),
  ];
}

const CI_CATEGORIES: [dir: string, category: string][] = [
  ['', 'General'],
  ['Pages', 'Pages'],
  ['Verify', 'Verify'],
  ['autodeploy', 'Auto deploy'],
];

function loadCi(hidden: boolean): FileTemplate[] {
  const root = path.join(DATA_DIR, 'gitlab-ci');
  const isHidden = (name: string) => name.includes('.latest');
  return CI_CATEGORIES.flatMap(([dir, category]) =>
    readCategory(path.join(root, dir), '.gitlab-ci.yml', category, (n) => isHidden(n) !== hidden),
  );
}

export interface ListedTemplate {
  key: string;
  name: string;
}

export interface BuiltinTemplates {
  licenses: LicenseData[];
  /** The list items ({key, name}) of each built-in type, in list order, built once. */
  listed: Record<'dockerfiles' | 'gitignores' | 'gitlab_ci_ymls' | 'licenses', readonly ListedTemplate[]>;
  licenseByKey: Map<string, LicenseData>;
  /** Listed file templates per type, in list order. */
  files: Record<'dockerfiles' | 'gitignores' | 'gitlab_ci_ymls', FileTemplate[]>;
  /** Templates found by name but not listed (the `.latest` CI variants). */
  unlisted: Record<'dockerfiles' | 'gitignores' | 'gitlab_ci_ymls', FileTemplate[]>;
  /** Every file template by key, listed or not, as a found template. */
  fileByKey: Record<
    'dockerfiles' | 'gitignores' | 'gitlab_ci_ymls',
    Map<string, { kind: 'file'; name: string; content: string }>
  >;
}

let cached: BuiltinTemplates | null = null;

/** Loaded once per process; the data ships with the code and never changes while it runs. */
export function builtinTemplates(): BuiltinTemplates {
  if (cached) return cached;
  const licenses = loadLicenses();
  const files = {
    dockerfiles: readCategory(path.join(DATA_DIR, 'dockerfiles'), '.Dockerfile', 'General'),
    gitignores: loadGitignores(),
    gitlab_ci_ymls: loadCi(false),
  };
  const unlisted = { dockerfiles: [], gitignores: [], gitlab_ci_ymls: loadCi(true) };
  const items = (list: { key: string; name: string }[]) =>
    Object.freeze(list.map(({ key, name }) => Object.freeze({ key, name })));
  // The first template with a key wins, as in a search through the list (Languages before Global/).
  const byKey = (type: keyof typeof files) => {
    const map = new Map<string, { kind: 'file'; name: string; content: string }>();
    for (const t of [...files[type], ...unlisted[type]])
      if (!map.has(t.key)) map.set(t.key, Object.freeze({ kind: 'file' as const, name: t.name, content: t.content }));
    return map;
  };
  cached = {
    licenses,
    listed: {
      dockerfiles: items(files.dockerfiles),
      gitignores: items(files.gitignores),
      gitlab_ci_ymls: items(files.gitlab_ci_ymls),
      licenses: items(licenses),
    },
    licenseByKey: new Map(licenses.map((l) => [l.key, l])),
    files,
    unlisted,
    fileByKey: {
      dockerfiles: byKey('dockerfiles'),
      gitignores: byKey('gitignores'),
      gitlab_ci_ymls: byKey('gitlab_ci_ymls'),
    },
  };
  return cached;
}
