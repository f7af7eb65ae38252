// Where repositories live on disk: one bare repository per project and per snippet, named by id so that
// renames never move them.
import crypto from 'node:crypto';
import path from 'node:path';
import type { Project } from '../storage/db/schema.ts';
import { GitRepository } from '../storage/git/repository.ts';

export const repositoriesRoot = (dataDir: string) => path.join(dataDir, 'repositories');
export const projectRepositoryPath = (id: number) => `projects/${id}.git`;
export const snippetRepositoryPath = (id: number) => `snippets/${id}.git`;

export const projectRepository = (dataDir: string, id: number) =>
  new GitRepository(path.join(repositoriesRoot(dataDir), projectRepositoryPath(id)));
export const snippetRepository = (dataDir: string, id: number) =>
  new GitRepository(path.join(repositoriesRoot(dataDir), snippetRepositoryPath(id)));

/** A repository under a temporary name, to be renamed to its final one (see GitRepository.moveTo). */
export const stagingRepository = (dataDir: string) =>
  new GitRepository(
    path.join(repositoriesRoot(dataDir), 'snippets', `.staging-${crypto.randomBytes(8).toString('hex')}.git`),
  );

/** Creates the project's empty repository when it has none yet. */
export function ensureProjectRepository(
  dataDir: string,
  project: Pick<Project, 'id' | 'default_branch'>,
): GitRepository {
  const repo = projectRepository(dataDir, project.id);
  if (!repo.exists()) {
    repo.init(project.default_branch ?? 'main');
    repo.syncLayout();
  }
  return repo;
}
