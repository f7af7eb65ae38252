// `snippetd fsck [--repair]`: every repository through `git fsck --strict`, and every snippet's mirrored
// files (the database rows reads are answered from) against its repository's head.
import type { Store } from '../storage/db/store.ts';
import { projectRepository, snippetRepository } from './git-repositories.ts';
import { mirrorRepositoryHead } from './snippets/service.ts';

export interface FsckReport {
  checked: number;
  problems: string[];
  repaired: number;
}

export async function fsck(store: Store, dataDir: string, repair: boolean): Promise<FsckReport> {
  const report: FsckReport = { checked: 0, problems: [], repaired: 0 };
  for (const { id } of await store.kysely.selectFrom('projects').select('id').orderBy('id').execute()) {
    const repo = projectRepository(dataDir, id);
    if (!repo.exists()) continue;
    report.checked++;
    for (const line of await repo.fsck()) report.problems.push(`project ${id}: ${line}`);
  }
  for (const snippet of await store.kysely.selectFrom('snippets').selectAll().orderBy('id').execute()) {
    report.checked++;
    const repo = snippetRepository(dataDir, snippet.id);
    if (!repo.exists()) {
      report.problems.push(`snippet ${snippet.id}: repository missing`);
      continue;
    }
    for (const line of await repo.fsck()) report.problems.push(`snippet ${snippet.id}: ${line}`);
    const head = repo.readBranch(snippet.default_branch);
    const differences: string[] = [];
    if (head !== snippet.head_commit)
      differences.push(`head is ${head ?? 'missing'}, database says ${snippet.head_commit ?? 'none'}`);
    if (head) {
      const tree = new Map((await repo.listTree(head)).filter((e) => e.type === 'blob').map((e) => [e.path, e.id]));
      const mirrored = new Map((await store.snippets.fileIndex(snippet.id)).map((f) => [f.path, f.blob_id]));
      for (const [path, id] of tree)
        if (mirrored.get(path) !== id)
          differences.push(
            `${path}: repository ${id.slice(0, 12)}, database ${mirrored.get(path)?.slice(0, 12) ?? 'missing'}`,
          );
      for (const path of mirrored.keys()) if (!tree.has(path)) differences.push(`${path}: only in the database`);
    }
    for (const d of differences) report.problems.push(`snippet ${snippet.id}: ${d}`);
    if (repair && head && differences.length) {
      await store.transaction(async (tx) => {
        const locked = await tx.snippets.lock(snippet.id, store.db.dialect);
        if (locked) await mirrorRepositoryHead(tx, repo, locked, true);
      });
      report.repaired++;
    }
  }
  return report;
}
