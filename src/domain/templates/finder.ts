// Where a project's templates come from (gitlab-api.md §7.6, D9): the file template projects of its
// ancestor groups (closest first), the instance's file template project, then the built-in templates —
// or, for issues and merge requests, the project's own repository. Template projects are read from git
// on every request, so a new commit is seen at once on every node; one the caller cannot read is skipped.
import type { Store } from '../../storage/db/store.ts';
import type { GitRepository } from '../../storage/git/repository.ts';
import { ancestorIds } from '../../storage/db/repositories/namespaces.ts';
import { canReadRepository, type Viewer } from '../policy.ts';
import { projectAccess, type ProjectContext } from '../projects.ts';
import { projectRepository } from '../repositories.ts';
import { getSettings } from '../settings.ts';
import { byteOrder } from '../../order.ts';
import { builtinTemplates, type ListedTemplate, type TemplateContent } from './builtin.ts';
import { licenseJsonOf, type LicenseData } from './licenses.ts';
import { TEMPLATE_TYPE_RULES, type TemplateType } from './types.ts';

interface RepoSource {
  category: string;
  projectId: number;
  repo: GitRepository;
  commit: string;
}

export type { ListedTemplate };

export type FoundTemplate = TemplateContent;

/** A custom template project that applies and that the viewer may read. */
interface Candidate {
  category: string;
  projectId: number;
  defaultBranch: string | null;
}

/**
 * The custom template projects that apply to this project (null: the instance-wide endpoints) and that
 * the viewer may read, closest first. Database reads only, so the read cache keeps the answer.
 */
function readableCandidates(store: Store, viewer: Viewer, ctx: ProjectContext | null): Promise<Candidate[]> {
  return store.memo(`template-sources:${viewer?.id ?? 'anonymous'}:${ctx?.project.id ?? 'instance'}`, async () => {
    const configured: { category: string; projectId: number }[] = [];
    if (ctx && ctx.namespace.kind === 'group') {
      const ids = ancestorIds(ctx.namespace).reverse();
      const groups = new Map((await store.namespaces.findManyByIds(ids)).map((g) => [g.id, g]));
      for (const id of ids) {
        const g = groups.get(id);
        if (g?.file_template_project_id)
          configured.push({ category: `Group ${g.full_name}`, projectId: g.file_template_project_id });
      }
    }
    const instance = (await getSettings(store)).file_template_project_id;
    if (instance) configured.push({ category: 'Instance', projectId: instance });
    const readable: Candidate[] = [];
    for (const c of configured) {
      const project = await store.projects.findById(c.projectId);
      if (!project) continue;
      const namespace = (await store.namespaces.findById(project.namespace_id))!;
      if (canReadRepository(viewer, project, await projectAccess(store, viewer, project, namespace))) {
        readable.push({ ...c, defaultBranch: project.default_branch });
      }
    }
    return readable;
  });
}

/** The readable template projects at the head of their default branch: git is read on every request, so a new commit is seen at once. */
async function customSources(
  store: Store,
  dataDir: string,
  viewer: Viewer,
  ctx: ProjectContext | null,
): Promise<RepoSource[]> {
  const candidates = await readableCandidates(store, viewer, ctx);
  const sources: RepoSource[] = [];
  for (const c of candidates) {
    const repo = projectRepository(dataDir, c.projectId);
    if (!repo.exists()) continue;
    const commit = await repo.resolveCommit(c.defaultBranch ?? 'HEAD');
    if (commit) sources.push({ category: c.category, projectId: c.projectId, repo, commit });
  }
  return sources;
}

async function listInRepo(source: RepoSource, type: TemplateType): Promise<ListedTemplate[]> {
  const { folder, extension } = TEMPLATE_TYPE_RULES[type];
  const entries = await source.repo.listTree(source.commit, { path: folder, recursive: false });
  return entries
    .filter((e) => e.type === 'blob' && e.path.endsWith(extension))
    .map((e) => e.path.slice(folder.length + 1, -extension.length))
    .sort(byteOrder)
    .map((name) => ({ key: name, name }));
}

async function readInRepo(source: RepoSource, type: TemplateType, name: string): Promise<string | null> {
  const { folder, extension } = TEMPLATE_TYPE_RULES[type];
  const content = await source.repo.readFile(source.commit, `${folder}/${name}${extension}`);
  return content ? content.toString('utf8') : null;
}

/** The project's own repository, the source of its issue and merge request templates. */
async function ownSource(dataDir: string, ctx: ProjectContext): Promise<RepoSource | null> {
  const repo = projectRepository(dataDir, ctx.project.id);
  if (!repo.exists()) return null;
  const commit = await repo.resolveCommit(ctx.project.default_branch ?? 'HEAD');
  return commit ? { category: 'Project Templates', projectId: ctx.project.id, repo, commit } : null;
}

const isDescriptionType = (type: TemplateType) => TEMPLATE_TYPE_RULES[type].source === 'project-repository';

/**
 * Whether the templates of this type for this project (null: the instance-wide endpoints) are read from
 * git: issue and merge request templates always, the others when a readable template project applies.
 * Otherwise they are the built-in ones alone, and change only with the database (who may read what).
 */
export async function readsGit(
  store: Store,
  viewer: Viewer,
  ctx: ProjectContext | null,
  type: TemplateType,
): Promise<boolean> {
  return isDescriptionType(type) || (await readableCandidates(store, viewer, ctx)).length > 0;
}

/** Every template of a type for the project, in GitLab's order: groups, instance, then built-in/own. */
export async function listTemplates(
  store: Store,
  dataDir: string,
  viewer: Viewer,
  ctx: ProjectContext,
  type: TemplateType,
): Promise<readonly ListedTemplate[]> {
  const custom: ListedTemplate[] = [];
  for (const source of await customSources(store, dataDir, viewer, ctx))
    custom.push(...(await listInRepo(source, type)));
  if (isDescriptionType(type)) {
    const own = await ownSource(dataDir, ctx);
    return own ? [...custom, ...(await listInRepo(own, type))] : custom;
  }
  const builtin = builtinTemplates(type)?.listed ?? [];
  return custom.length ? [...custom, ...builtin] : builtin;
}

/** One template by exact name: closest custom source first (or only `sourceProjectId`'s), then built-in/own. */
export async function findTemplate(
  store: Store,
  dataDir: string,
  viewer: Viewer,
  ctx: ProjectContext,
  type: TemplateType,
  name: string,
  sourceProjectId?: number,
): Promise<FoundTemplate | null> {
  let sources = await customSources(store, dataDir, viewer, ctx);
  if (sourceProjectId !== undefined) sources = sources.filter((s) => s.projectId === sourceProjectId);
  for (const source of sources) {
    const content = await readInRepo(source, type, name);
    if (content !== null) return foundInRepo(type, name, content);
  }
  if (isDescriptionType(type)) {
    const own = await ownSource(dataDir, ctx);
    const content = own && (await readInRepo(own, type, name));
    return content === null || content === undefined ? null : { kind: 'file', name, content };
  }
  return findBuiltin(type, name);
}

export function findBuiltin(type: TemplateType, name: string): FoundTemplate | null {
  return builtinTemplates(type)?.byName.get(name) ?? null;
}

function foundInRepo(type: TemplateType, name: string, content: string): FoundTemplate {
  if (TEMPLATE_TYPE_RULES[type].entity === 'file') return { kind: 'file', name, content };
  const license = customLicense(name, content);
  return { kind: 'license', license, json: licenseJsonOf(license) };
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

/** The deprecated instance-wide endpoints: the instance template project (when readable), then built-in. */
export async function listInstanceTemplates(
  store: Store,
  dataDir: string,
  viewer: Viewer,
  type: TemplateType,
): Promise<readonly ListedTemplate[]> {
  const custom: ListedTemplate[] = [];
  for (const source of await customSources(store, dataDir, viewer, null))
    custom.push(...(await listInRepo(source, type)));
  const builtin = builtinTemplates(type)?.listed ?? [];
  return custom.length ? [...custom, ...builtin] : builtin;
}

export async function findInstanceTemplate(
  store: Store,
  dataDir: string,
  viewer: Viewer,
  type: TemplateType,
  name: string,
): Promise<FoundTemplate | null> {
  for (const source of await customSources(store, dataDir, viewer, null)) {
    const content = await readInRepo(source, type, name);
    if (content !== null) return foundInRepo(type, name, content);
  }
  return findBuiltin(type, name);
}
