// Data directories of versions before migration 0005 kept one bare repository per project and per snippet
// under repositories/. `snippetd migrate` stores each as rows (storage/git/import.ts: every object's id
// recomputed), one transaction a repository, so an interrupted run is simply run again; then it renames the
// directory so that nothing reads it again. `snippetd serve` does not start while it is there. A snippet
// whose repository is missing gets one rebuilt from the copy of its files the earlier version kept in
// snippet_files.content.
import fs from 'node:fs';
import path from 'node:path';
import type { Store } from '../storage/db/store.ts';
import { importDirectory } from '../storage/git/import.ts';
import { refreshPlannerStatistics } from '../storage/db/statistics.ts';
import { sql } from 'kysely';
import { recreateSnippetRepository, reindexSnippet } from './snippets/repair.ts';

export const legacyRepositoriesDir = (dataDir: string) => path.join(dataDir, 'repositories');

export const hasLegacyRepositories = (dataDir: string) => fs.existsSync(legacyRepositoriesDir(dataDir));

export const LEGACY_REPOSITORIES_MESSAGE =
  'the data directory holds repositories of an earlier version; run `snippetd migrate` to move them into the database';
export const MISSING_REPOSITORIES_MESSAGE =
  'the database holds snippets of an earlier version without their repositories; run `snippetd migrate` to rebuild them';

/** Snippets without a repository row: what an earlier version's database has until `snippetd migrate`. */
const snippetsWithoutRepository = (store: Store) =>
  store.kysely
    .selectFrom('snippets')
    .selectAll()
    .where(
      'id',
      'not in',
      store.kysely.selectFrom('git_repositories').select('owner_id').where('kind', '=', 'snippet'),
    );

export async function hasSnippetsWithoutRepository(store: Store): Promise<boolean> {
  return (await snippetsWithoutRepository(store).limit(1).execute()).length > 0;
}

/**
 * Imports every repository under repositories/ whose project or snippet still exists (none when the
 * directory is gone), then rebuilds the snippets still without one; answers what was stored.
 */
export async function importLegacyRepositories(
  store: Store,
  dataDir: string,
  progress: (done: number, total: number) => void,
): Promise<{ repositories: number; objects: number; movedTo: string | null }> {
  const root = legacyRepositoriesDir(dataDir);
  const found = (['project', 'snippet'] as const).flatMap((kind) => {
    const dir = path.join(root, `${kind}s`);
    if (!fs.existsSync(dir)) return [];
    return fs
      .readdirSync(dir)
      .filter((name) => /^\d+\.git$/.test(name))
      .map((name) => ({ kind, ownerId: Number.parseInt(name, 10), dir: path.join(dir, name) }));
  });
  let objects = 0;
  let repositories = 0;
  for (const [i, repo] of found.entries()) {
    progress(i, found.length);
    const owner =
      repo.kind === 'project'
        ? await store.projects.findById(repo.ownerId)
        : await store.kysely.selectFrom('snippets').select('id').where('id', '=', repo.ownerId).executeTakeFirst();
    if (!owner) continue; // debris of a deletion the old layout could leave behind
    await store.transaction(async (tx) => {
      const rows = await tx.git.ensure(repo.kind, repo.ownerId, 'main');
      objects += (await importDirectory(rows, repo.dir)).objects;
      if (repo.kind === 'snippet') await reindexSnippet(tx, repo.ownerId, { allTexts: true });
    });
    repositories++;
  }
  progress(found.length, found.length);
  repositories += await recreateMissingSnippetRepositories(store);
  // Every object of every repository was just loaded: PostgreSQL's planner must see them counted.
  if (repositories) await refreshPlannerStatistics(store.db);
  if (!fs.existsSync(root)) return { repositories, objects, movedTo: null };
  const movedTo = `${root}.imported-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  fs.renameSync(root, movedTo);
  return { repositories, objects, movedTo };
}

/** Snippets left without a repository: one commit of the files their rows still hold. */
async function recreateMissingSnippetRepositories(store: Store): Promise<number> {
  const orphans = await snippetsWithoutRepository(store).execute();
  for (const snippet of orphans) {
    const rows = await sql<{ path: string; content: Buffer }>`SELECT path, content FROM snippet_files
      WHERE snippet_id = ${snippet.id}`.execute(store.kysely);
    const files = new Map(rows.rows.map((r) => [r.path, Buffer.from(r.content)]));
    if (!files.size) files.set(snippet.file_name || 'snippetfile1.txt', Buffer.from(snippet.content));
    await store.transaction((tx) => recreateSnippetRepository(tx, snippet, files));
  }
  return orphans.length;
}
