// Where a request's templates come from (docs/gitlab-compatibility.md#custom-templates, #d9), in
// GitLab's order: the file template projects of the project's ancestor groups (closest first), the instance's file template project, then
// the type's own source (types.ts): the built-in templates or the project's repository. The deprecated
// instance-wide endpoints use the instance's template project and the built-in templates. Repositories
// are read on every request, so a new commit is seen at once; a template project the caller
// cannot read is skipped.
import type { Store } from '../../storage/db/store.ts';
import { type GitRepository, unlessTooLarge } from '../../storage/git/repository.ts';
import { ancestorIds } from '../../storage/db/tables/namespaces.ts';
import { byteOrder } from '../../order.ts';
import { can, type Viewer } from '../policy.ts';
import { projectAccess, type ProjectContext } from '../projects.ts';
import { projectRepository } from '../git-repositories.ts';
import { getSettings } from '../settings.ts';
import { builtinTemplates, type BuiltinType, type ListedTemplate, type TemplateContent } from './builtin.ts';
import { licenseJsonOf, type LicenseData } from './licenses.ts';
import { inTurns } from '../utf8.ts';
import { TEMPLATE_TYPE_RULES, type TemplateType } from './types.ts';

/** A project's templates, or 'instance': the deprecated instance-wide endpoints'. */
export type TemplateScope = ProjectContext | 'instance';

/**
 * What decided an answer: 'builtin', the built-in templates and the database alone; 'git', a repository
 * too (a template project applies, or the project's own repository), so its next commit may change it.
 */
export type DecidedBy = 'builtin' | 'git';

export interface TemplateList {
  templates: readonly ListedTemplate[];
  source: DecidedBy;
}

export interface FoundTemplate {
  template: TemplateContent;
  source: DecidedBy;
}

/** A repository at the head of its default branch. */
interface RepositoryHead {
  repo: GitRepository;
  commit: string;
}

/** A place templates are searched: a template project's repository, the project's own, or built-in data. */
type Origin =
  | ({ kind: 'template-project'; projectId: number } & RepositoryHead)
  | ({ kind: 'own-repository' } & RepositoryHead)
  | { kind: 'builtin'; templates: BuiltinType };

/** Every template of a type for the scope, in GitLab's order. */
export async function listTemplates(
  store: Store,
  viewer: Viewer,
  scope: TemplateScope,
  type: TemplateType,
): Promise<TemplateList> {
  const { origins, source } = await originsOf(store, viewer, scope, type);
  const lists: (readonly ListedTemplate[])[] = [];
  for (const origin of origins)
    lists.push(origin.kind === 'builtin' ? origin.templates.listed : await listInRepository(origin, type));
  return { templates: lists.flat(), source };
}

/**
 * One template by exact name, from the first origin that has it; `templateProjectId` limits the template
 * projects searched to that one (the type's own source is still searched after it).
 */
export async function findTemplate(
  store: Store,
  viewer: Viewer,
  scope: TemplateScope,
  type: TemplateType,
  name: string,
  templateProjectId?: number,
): Promise<FoundTemplate | null> {
  const { origins, source } = await originsOf(store, viewer, scope, type);
  for (const origin of origins) {
    if (templateProjectId !== undefined && origin.kind === 'template-project' && origin.projectId !== templateProjectId)
      continue;
    const template =
      origin.kind === 'builtin'
        ? (origin.templates.byName.get(name) ?? null)
        : await findInRepository(origin, type, name);
    if (template) return { template, source };
  }
  return null;
}

/** The places to search for the scope and type, in order, and what an answer from them is decided by. */
async function originsOf(
  store: Store,
  viewer: Viewer,
  scope: TemplateScope,
  type: TemplateType,
): Promise<{ origins: Origin[]; source: DecidedBy }> {
  const templateProjects = await readableTemplateProjects(store, viewer, scope);
  const origins: Origin[] = [];
  for (const p of templateProjects) {
    const head = await repositoryHead(store, p.id, p.defaultBranch);
    if (head) origins.push({ kind: 'template-project', projectId: p.id, ...head });
  }
  if (TEMPLATE_TYPE_RULES[type].source === 'project-repository') {
    const own =
      scope === 'instance' ? null : await repositoryHead(store, scope.project.id, scope.project.default_branch);
    if (own) origins.push({ kind: 'own-repository', ...own });
    return { origins, source: 'git' };
  }
  const builtin = builtinTemplates(type);
  if (builtin) origins.push({ kind: 'builtin', templates: builtin });
  return { origins, source: templateProjects.length ? 'git' : 'builtin' };
}

/** The custom template projects that apply to the scope and that the viewer may read, closest first. */
async function readableTemplateProjects(
  store: Store,
  viewer: Viewer,
  scope: TemplateScope,
): Promise<{ id: number; defaultBranch: string | null }[]> {
  const configured: number[] = [];
  if (scope !== 'instance' && scope.namespace.kind === 'group') {
    const ids = ancestorIds(scope.namespace).reverse();
    const groups = new Map((await store.namespaces.findManyByIds(ids)).map((g) => [g.id, g]));
    for (const id of ids) {
      const projectId = groups.get(id)?.file_template_project_id;
      if (projectId) configured.push(projectId);
    }
  }
  const instance = (await getSettings(store)).file_template_project_id;
  if (instance) configured.push(instance);
  const readable: { id: number; defaultBranch: string | null }[] = [];
  // A project named by several groups (or the instance too) is one origin: listed once, read once.
  for (const id of new Set(configured)) {
    const project = await store.projects.findById(id);
    if (!project) continue;
    const namespace = (await store.namespaces.findById(project.namespace_id))!;
    if (can(viewer, 'download_code', { project, access: await projectAccess(store, viewer, project, namespace) }))
      readable.push({ id, defaultBranch: project.default_branch });
  }
  return readable;
}

/** A project's repository at the head of its default branch; null without a repository or a commit. */
async function repositoryHead(store: Store, projectId: number, branch: string | null): Promise<RepositoryHead | null> {
  const repo = await projectRepository(store, { id: projectId });
  if (!repo) return null;
  const commit = await repo.resolveCommit(branch ?? 'HEAD');
  return commit ? { repo, commit } : null;
}

/**
 * The largest template a repository serves (GitLab reads any size): a 49 MB issue template of control
 * characters, anonymous, answered 308 MB of JSON and took the process to 858 MB. Larger ones are not listed and
 * answer 404.
 */
export const MAX_TEMPLATE_BYTES = 1024 * 1024;

async function listInRepository(origin: RepositoryHead, type: TemplateType): Promise<ListedTemplate[]> {
  const { folder, extension } = TEMPLATE_TYPE_RULES[type];
  // A folder too large to list is one no one could choose from.
  const entries = await origin.repo
    .listTree(origin.commit, { path: folder, recursive: false })
    .catch(unlessTooLarge([]));
  return entries
    .filter((e) => e.type === 'blob' && e.path.endsWith(extension) && e.size <= MAX_TEMPLATE_BYTES)
    .map((e) => e.path.slice(folder.length + 1, -extension.length))
    .sort(byteOrder)
    .map((name) => ({ key: name, name }));
}

async function findInRepository(
  origin: RepositoryHead,
  type: TemplateType,
  name: string,
): Promise<TemplateContent | null> {
  const { folder, extension, entity } = TEMPLATE_TYPE_RULES[type];
  const file = await origin.repo.readFile(origin.commit, `${folder}/${name}${extension}`, MAX_TEMPLATE_BYTES);
  if (!file) return null;
  const content = file.toString('utf8');
  if (entity === 'file') return { kind: 'file', name, content };
  const license = customLicense(name, content);
  return { kind: 'license', license, json: await inTurns(licenseJsonOf(license)) };
}

/** A license from a template project: its name is the file name and it carries no metadata. */
function customLicense(name: string, content: string): LicenseData {
  return {
    key: name,
    name,
    nickname: name,
    popular: false,
    description: null,
    conditions: null,
    permissions: null,
    limitations: null,
    html_url: null,
    source_url: null,
    body: content,
  };
}
