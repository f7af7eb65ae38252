// Seed documents for test suites (docs/tool-authors.md): users with fixed tokens, groups, projects with
// members, repository files and snippets, and instance settings. Everything is created through the same
// domain functions as the API, as the administrator `root`, in the order the document lists it, so the same
// document on a fresh ephemeral server gives the same ids. The document is checked whole before anything
// is created; a problem found while creating is named by where it is in the document (`projects[1].path`).
import type { Store } from '../storage/db/store.ts';
import type { FeatureAccessLevel, User, Visibility } from '../storage/db/schema.ts';
import { ACCESS_LEVELS, FEATURE_ACCESS_LEVELS, SCOPES, type Scope, VISIBILITIES } from './access.ts';
import { Failure, invalidFields } from './failure.ts';
import { createUser } from './users.ts';
import { createToken } from './tokens.ts';
import { createGroup, groupAccess } from './groups.ts';
import { createProject, type ProjectContext } from './projects.ts';
import { addMember } from './members.ts';
import { writeFile } from './project-files.ts';
import { createSnippet } from './snippets/create.ts';
import { isKey, updateSettings } from './settings.ts';
import { acceptEverything } from './spam.ts';
import { isWellFormed, Utf8Text } from './utf8.ts';

export interface SeedFile {
  path: string;
  /** A long one in a large body comes as its bytes (http/body-parse-worker.ts), as an API write's does. */
  content: string | Utf8Text;
}

export interface SeedSnippet {
  title: string;
  description?: string;
  visibility?: Visibility;
  /** A username. */
  author?: string;
  files: SeedFile[];
}

export interface SeedMember {
  /** A username. */
  user: string;
  access_level: number;
}

export interface SeedDocument {
  users?: {
    username: string;
    name?: string;
    email?: string;
    password?: string;
    admin?: boolean;
    external?: boolean;
    /** Personal access tokens with the values given, so that a test suite can write them down. */
    tokens?: { token: string; name?: string; scopes?: Scope[]; expires_at?: string | null }[];
  }[];
  groups?: {
    /** The full path; a subgroup's parent comes earlier in the list or exists already. */
    path: string;
    name?: string;
    visibility?: Visibility;
    description?: string;
    members?: SeedMember[];
  }[];
  projects?: {
    /** `<namespace>/<project>`: the namespace is a group or a user's username. */
    path: string;
    name?: string;
    visibility?: Visibility;
    description?: string;
    default_branch?: string;
    /** As POST /projects takes them: 'enabled' unless given. */
    repository_access_level?: FeatureAccessLevel;
    snippets_access_level?: FeatureAccessLevel;
    /** Who creates it: by default the user whose namespace it is in, or root in a group. */
    creator?: string;
    members?: SeedMember[];
    /** Committed to the default branch, one commit each (template projects are seeded this way). */
    files?: SeedFile[];
    /** Their author is by default the project's creator. */
    snippets?: SeedSnippet[];
  }[];
  /** Personal snippets (in no project); their author is by default root. */
  snippets?: SeedSnippet[];
  /** As PUT /application/settings takes them; `file_template_project` may name a project by its path. */
  settings?: Record<string, unknown> & { file_template_project?: string };
}

/** The ids of what a seed created, by the names the document used. */
export interface SeedResult {
  users: Record<string, number>;
  groups: Record<string, number>;
  projects: Record<string, number>;
  /** `project` is null for a personal snippet. */
  snippets: { project: string | null; title: string; id: number }[];
}

// --- checking the document's shape ----------------------------------------------------------------------

type Problems = Record<string, string[]>;

/**
 * Problems a refusal names at most, as the API's name at most 100 parameters (http/params.ts): listing all 20,000
 * unknown keys of a document held the event loop 120-240 ms. The rest of the document is not checked then.
 */
const MAX_PROBLEMS = 100;

/** A seed is applied by an administrator (the start, or POST /-/snippetd/seed as root): any level goes. */
const BY_ADMIN = { mayManageOwners: true };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks one object's keys: each known key's value with its rule; unknown keys are problems too. */
function checkObject(
  value: unknown,
  where: string,
  rules: Record<string, (v: unknown, where: string) => string | null>,
  required: string[],
  problems: Problems,
): value is Record<string, unknown> {
  let count = Object.keys(problems).length;
  const add = (at: string, problem: string) => {
    problems[at] = [problem];
    count = Object.keys(problems).length;
  };
  if (!isObject(value)) {
    if (count < MAX_PROBLEMS) add(where, 'must be an object');
    return false;
  }
  for (const key of required)
    if (value[key] === undefined && count < MAX_PROBLEMS) add(`${where}.${key}`, 'is missing');
  for (const key in value) {
    if (count >= MAX_PROBLEMS) break;
    const v = value[key];
    const rule = Object.hasOwn(rules, key) ? rules[key] : undefined;
    const problem = rule ? (v === undefined ? null : rule(v, `${where}.${key}`)) : 'is not a known key';
    // A rule that checks what is inside (a list of objects) may have added problems of its own meanwhile.
    count = Object.keys(problems).length;
    if (problem && count < MAX_PROBLEMS) add(`${where}.${key}`, problem);
  }
  return true;
}

const text = (v: unknown) => (typeof v === 'string' && v !== '' ? null : 'must be a non-empty string');
const anyText = (v: unknown) => (typeof v === 'string' ? null : 'must be a string');
const fileContent = (v: unknown) => (typeof v === 'string' || v instanceof Utf8Text ? null : 'must be a string');
const bool = (v: unknown) => (typeof v === 'boolean' ? null : 'must be true or false');
const visibility = (v: unknown) =>
  (VISIBILITIES as unknown[]).includes(v) ? null : `must be one of ${VISIBILITIES.join(', ')}`;
const featureLevel = (v: unknown) =>
  (FEATURE_ACCESS_LEVELS as unknown[]).includes(v) ? null : `must be one of ${FEATURE_ACCESS_LEVELS.join(', ')}`;
const accessLevel = (v: unknown) =>
  ACCESS_LEVELS.includes(v as number) ? null : `must be one of ${ACCESS_LEVELS.join(', ')}`;

/** A list whose items `each` checks (it records their problems itself). */
function list(each: (item: unknown, where: string, problems: Problems) => void, problems: Problems) {
  return (v: unknown, where: string) => {
    if (!Array.isArray(v)) return 'must be a list';
    for (const [i, item] of v.entries()) each(item, `${where}[${i}]`, problems);
    return null;
  };
}

/**
 * A large body's long strings come as their bytes (http/body-parse-worker.ts): each becomes the string it is, but
 * a file's content, which goes to its blob as bytes. Half of a UTF-16 pair anywhere (a file's path, however deep)
 * is refused as the API refuses it: it would be stored as U+FFFD.
 */
function asTexts(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  // By key, not Object.entries: a pair for each of a document's 20,000 keys was a tenth of its check.
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'string' && !isWellFormed(item)) throw new Failure('bad_request_malformed');
    if (item instanceof Utf8Text) {
      if (key !== 'content') (value as Record<string, unknown>)[key] = item.toString();
    } else asTexts(item);
  }
}

function checkDocument(doc: unknown): asserts doc is SeedDocument {
  const problems: Problems = {};
  const member = (v: unknown, where: string) =>
    checkObject(v, where, { user: text, access_level: accessLevel }, ['user', 'access_level'], problems);
  const file = (v: unknown, where: string) =>
    checkObject(v, where, { path: text, content: fileContent }, ['path', 'content'], problems);
  const token = (v: unknown, where: string) =>
    checkObject(
      v,
      where,
      {
        token: (t) => (typeof t === 'string' && t.length >= 20 ? null : 'must be a string of 20 characters or more'),
        name: text,
        scopes: (s) =>
          Array.isArray(s) && s.length > 0 && s.every((x) => (SCOPES as readonly unknown[]).includes(x))
            ? null
            : `must be a list of scopes (${SCOPES.join(', ')})`,
        expires_at: (d) =>
          d === null || (typeof d === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(d)) ? null : 'must be a date (YYYY-MM-DD)',
      },
      ['token'],
      problems,
    );
  const snippet = (v: unknown, where: string) =>
    checkObject(
      v,
      where,
      {
        title: text,
        description: anyText,
        visibility,
        author: text,
        files: (f, at) => (Array.isArray(f) && f.length === 0 ? 'must list a file' : list(file, problems)(f, at)),
      },
      ['title', 'files'],
      problems,
    );
  checkObject(
    doc,
    'seed',
    {
      users: list(
        (v, where) =>
          checkObject(
            v,
            where,
            {
              username: text,
              name: text,
              email: text,
              password: text,
              admin: bool,
              external: bool,
              tokens: list(token, problems),
            },
            ['username'],
            problems,
          ),
        problems,
      ),
      groups: list(
        (v, where) =>
          checkObject(
            v,
            where,
            { path: text, name: text, visibility, description: anyText, members: list(member, problems) },
            ['path'],
            problems,
          ),
        problems,
      ),
      projects: list(
        (v, where) =>
          checkObject(
            v,
            where,
            {
              path: (p) => (typeof p === 'string' && p.includes('/') ? null : 'must be <namespace>/<project>'),
              name: text,
              visibility,
              description: anyText,
              default_branch: text,
              repository_access_level: featureLevel,
              snippets_access_level: featureLevel,
              creator: text,
              members: list(member, problems),
              files: list(file, problems),
              snippets: list(snippet, problems),
            },
            ['path'],
            problems,
          ),
        problems,
      ),
      snippets: list(snippet, problems),
      settings: (v) => (isObject(v) ? null : 'must be an object'),
    },
    [],
    problems,
  );
  if (Object.keys(problems).length) throw invalidFields(problems);
}

// --- creating --------------------------------------------------------------------------------------------

/** The document's names of the fields GitLab's models name otherwise in their errors. */
const DOCUMENT_FIELDS: Record<string, string> = { visibility_level: 'visibility' };

/** A failure of the domain, named by where in the document it happened. */
function at(where: string, error: unknown): unknown {
  if (!(error instanceof Failure)) return error;
  if (Object.keys(error.fields).length)
    return invalidFields(
      Object.fromEntries(Object.entries(error.fields).map(([k, v]) => [`${where}.${DOCUMENT_FIELDS[k] ?? k}`, v])),
    );
  return invalidFields({ [where]: [error.detail || error.reason] });
}

async function step<T>(where: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw at(where, error);
  }
}

const splitPath = (full: string) => [full.slice(0, full.lastIndexOf('/')), full.slice(full.lastIndexOf('/') + 1)];

/**
 * The store a seed writes through, but for two lookups every entity repeats: the settings, which the
 * seed changes only in its last step (which uses the plain store), and users by name, which it never
 * changes once it has made them (nor root). Each is read once: a seed of 50 entities made 90 of its 650 queries.
 */
function withSeedLookups(store: Store): Store {
  let settings: ReturnType<Store['settings']['all']> | null = null;
  // Only users found are kept: a name looked up before its user is made (a uniqueness check) is asked again.
  const users = new Map<string, User>();
  const userNamed = async (username: string) => {
    const key = username.toLowerCase();
    const user = users.get(key) ?? (await store.users.findByUsername(username));
    if (user) users.set(key, user);
    return user;
  };
  return {
    ...store,
    settings: { ...store.settings, all: () => (settings ??= store.settings.all()) },
    users: { ...store.users, findByUsername: userNamed },
  };
}

/** Applies `doc` (already parsed) to the database. The caller makes it all-or-nothing (ephemeral.ts). */
export async function applySeed(given: Store, doc: unknown): Promise<SeedResult> {
  asTexts(doc);
  checkDocument(doc);
  const store = withSeedLookups(given);
  /** A snippet in the project `ctx` names, or a personal one: the API's create, without a spam check. */
  const seedSnippet = (ctx: ProjectContext | null, author: User, s: SeedSnippet) =>
    createSnippet(
      { store, spam: acceptEverything },
      ctx,
      author,
      {
        title: s.title,
        description: s.description,
        visibility: s.visibility,
        files: s.files.map((f) => ({ file_path: f.path, content: f.content })),
      },
      { userAgent: '', ip: '' },
    );
  const result: SeedResult = { users: {}, groups: {}, projects: {}, snippets: [] };
  const root = await store.users.findByUsername('root');
  if (!root) throw invalidFields({ seed: ['needs the administrator root, who creates what it lists'] });
  /** A user the document names; `field` is where, relative to the step it is called in. */
  const userNamed = async (username: string, field: string): Promise<User> => {
    const user = await store.users.findByUsername(username);
    if (!user) throw invalidFields({ [field]: [`names no user "${username}"`] });
    return user;
  };
  const addMembers = async (members: SeedMember[] = [], type: 'Namespace' | 'Project', id: number, where: string) => {
    for (const [i, m] of members.entries())
      await step(`${where}.members[${i}]`, async () => {
        await addMember(store, { type, id }, (await userNamed(m.user, 'user')).id, m.access_level, BY_ADMIN);
      });
  };

  for (const [i, u] of (doc.users ?? []).entries()) {
    const where = `users[${i}]`;
    const user = await step(where, () =>
      createUser(store, {
        username: u.username,
        email: u.email ?? `${u.username}@example.com`,
        name: u.name ?? u.username,
        password: u.password,
        admin: u.admin ?? false,
        external: u.external ?? false,
      }),
    );
    for (const [j, t] of (u.tokens ?? []).entries())
      await step(`${where}.tokens[${j}]`, () =>
        createToken(store, user, {
          name: t.name ?? 'seed',
          scopes: t.scopes ?? ['api'],
          expiresAt: t.expires_at ?? null,
          plain: t.token,
        }),
      );
    // By the names the document used, in its case: a test looks them up as it wrote them.
    result.users[u.username] = user.id;
  }

  for (const [i, g] of (doc.groups ?? []).entries()) {
    const where = `groups[${i}]`;
    const [parentPath, path] = g.path.includes('/') ? splitPath(g.path) : ['', g.path];
    const group = await step(where, async () => {
      const parent = parentPath ? await store.namespaces.findByFullPath(parentPath) : null;
      if (parentPath && parent?.kind !== 'group') throw invalidFields({ path: [`names no group "${parentPath}"`] });
      const parentCtx = parent ? { group: parent, access: await groupAccess(store, root, parent) } : null;
      return createGroup(store, root, parentCtx, {
        path,
        name: g.name ?? path,
        visibility: g.visibility,
        description: g.description,
      });
    });
    await addMembers(g.members, 'Namespace', group.id, where);
    result.groups[g.path] = group.id;
  }

  for (const [i, p] of (doc.projects ?? []).entries()) {
    const where = `projects[${i}]`;
    const [namespacePath, path] = splitPath(p.path);
    const { ctx, creator } = await step(where, async () => {
      const namespace = await store.namespaces.findByFullPath(namespacePath);
      if (!namespace) throw invalidFields({ path: [`names no group or user "${namespacePath}"`] });
      const creator = p.creator
        ? await userNamed(p.creator, 'creator')
        : namespace.kind === 'user'
          ? ((await store.users.findById(namespace.owner_id!)) ?? root)
          : root;
      const ctx = await createProject(
        store,
        creator,
        {
          path,
          name: p.name ?? path,
          namespace_id: namespace.id,
          visibility: p.visibility,
          description: p.description,
          default_branch: p.default_branch,
          repository_access_level: p.repository_access_level,
          snippets_access_level: p.snippets_access_level,
        },
        root,
      );
      return { ctx, creator };
    });
    await addMembers(p.members, 'Project', ctx.project.id, where);
    for (const [j, f] of (p.files ?? []).entries())
      await step(`${where}.files[${j}]`, () =>
        writeFile(store, ctx, {
          action: 'create',
          filePath: f.path,
          content: f.content instanceof Utf8Text ? f.content.bytes : Buffer.from(f.content),
          branch: ctx.project.default_branch ?? 'main',
          message: `Add ${f.path}`,
          author: { name: creator.name, email: creator.email },
        }),
      );
    for (const [j, s] of (p.snippets ?? []).entries()) {
      const snippet = await step(`${where}.snippets[${j}]`, async () =>
        seedSnippet(ctx, s.author ? await userNamed(s.author, 'author') : creator, s),
      );
      result.snippets.push({ project: p.path, title: snippet.title, id: snippet.id });
    }
    result.projects[p.path] = ctx.project.id;
  }

  for (const [j, s] of (doc.snippets ?? []).entries()) {
    const snippet = await step(`seed.snippets[${j}]`, async () =>
      seedSnippet(null, s.author ? await userNamed(s.author, 'author') : root, s),
    );
    result.snippets.push({ project: null, title: snippet.title, id: snippet.id });
  }

  if (doc.settings) {
    const { file_template_project, ...settings } = doc.settings;
    const store = given;
    await step('settings', async () => {
      if (file_template_project !== undefined) {
        const project = await store.projects.findByFullPath(String(file_template_project));
        if (!project) throw invalidFields({ file_template_project: [`names no project "${file_template_project}"`] });
        settings.file_template_project_id = project.id;
      }
      // The API ignores a name it does not know, as Grape does; a document's typo never passes silently.
      const unknown = Object.keys(settings).filter((key) => !isKey(key));
      if (unknown.length)
        throw invalidFields(Object.fromEntries(unknown.map((key) => [key, ['is not a known setting']])));
      await updateSettings(store, settings);
    });
  }
  return result;
}
