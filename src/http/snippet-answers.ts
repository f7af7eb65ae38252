// What the project snippet routes and the personal snippet routes share: snippets presented as GitLab's
// entity (their authors and file paths looked up once per list), the domain's dependencies as the request
// has them, the request's user agent, and Grape's legacy single-file parameters as one file.
import type { FastifyRequest } from 'fastify';
import type { Project, Snippet, User } from '../storage/db/schema.ts';
import type { SnippetDeps } from '../domain/snippets/commits.ts';
import type { CreateInput } from '../domain/snippets/create.ts';
import type { ParamsOf } from './params.ts';
import type { createSnippetSpec } from './schemas/snippets.ts';
import { storeOf } from './request.ts';
import { type ListedSnippet, projectsOf } from '../domain/snippets/finder.ts';
import { baseUrl, sshHost } from './urls.ts';
import { snippet as presentSnippet } from './presenters/snippets.ts';

declare module 'fastify' {
  interface FastifyInstance {
    snippetDeps: SnippetDeps;
  }
}

/** The domain's dependencies, its lookups (settings) made as the request's are. */
export const depsOf = (request: FastifyRequest): SnippetDeps => ({
  ...request.server.snippetDeps,
  store: storeOf(request),
});

export const requestMeta = (request: FastifyRequest) => ({
  userAgent: String(request.headers['user-agent'] ?? ''),
  // Unknown once the client has hung up (a large body parsed after it left): its write is stored all the same.
  ip: request.ip ?? '',
});

/** A snippet with where it lives: its project, or null for a personal snippet. */
export interface PlacedSnippet {
  snippet: Snippet;
  project: Pick<Project, 'full_path'> | null;
}

/** Snippets of a list with their projects, for presenting. */
export async function placeSnippets(request: FastifyRequest, snippets: Snippet[]): Promise<PlacedSnippet[]> {
  const projects = await projectsOf(storeOf(request), snippets);
  return snippets.map((snippet) => ({
    snippet,
    project: snippet.project_id === null ? null : projects.get(snippet.project_id)!,
  }));
}

/** Whether every snippet came with its paths, as a list's page reads them on PostgreSQL (storage/db/page.ts). */
const allListed = (snippets: ListedSnippet[]): snippets is (Snippet & { paths: string[] })[] =>
  snippets.every((s) => s.paths !== undefined);

/** Presents snippets; authors and paths already at hand (on writes, in a list's page) are not looked up again. */
export async function presentSnippets(
  request: FastifyRequest,
  placed: PlacedSnippet[],
  knownPaths?: Map<number, string[]>,
) {
  const store = storeOf(request);
  const snippets = placed.map((p) => p.snippet);
  const paths =
    knownPaths ??
    (allListed(snippets)
      ? new Map(snippets.map((s) => [s.id, s.paths]))
      : await store.snippets.paths(snippets.map((s) => s.id)));
  const authors = new Map<number, User>();
  const caller = request.principal.user;
  if (caller) authors.set(caller.id, caller);
  for (const id of new Set(snippets.map((s) => s.author_id)))
    if (!authors.has(id)) authors.set(id, (await store.users.findById(id))!);
  const urls = { base: baseUrl(request), sshHost: sshHost(request) };
  return placed.map(({ snippet, project }) =>
    presentSnippet(snippet, authors.get(snippet.author_id)!, project, paths.get(snippet.id) ?? [], urls),
  );
}

/** Grape's deprecated single-file parameters become one file; an empty file_name gets GitLab's default name. */
export function createInput(p: ParamsOf<typeof createSnippetSpec>): CreateInput {
  const { content, file_name, files, ...rest } = p;
  // The constraints guarantee exactly one of files and content.
  return { ...rest, files: files ?? [{ file_path: file_name || 'snippetfile1.txt', content: content! }] };
}
