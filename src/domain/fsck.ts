// `snippetd fsck [--repair]`: every repository's rows checked the way `git fsck` checks a repository (each
// object's id recomputed from its bytes, every ref and every object reachable from one present with the right
// type), every repository's owner present, and each snippet's index of files and head against its branch.
// Objects no ref reaches are listed as dangling, as git lists them: a deleted branch leaves them, and they
// are not a fault. --repair rebuilds a snippet's index from its branch.
import zlib from 'node:zlib';
import type { Store } from '../storage/db/store.ts';
import { objectId, parseCommit, parseTree, TYPE_OF_PACK_TYPE, tagTarget } from '../storage/git/objects.ts';
import type { GitRepository } from '../storage/git/repository.ts';
import { readParts } from '../storage/git/object-parts.ts';
import { reindexSnippet } from './snippets/repair.ts';

export interface FsckReport {
  checked: number;
  problems: string[];
  /** Objects no ref reaches (git's "dangling"): reported, not a problem. */
  dangling: string[];
  repaired: number;
  /** SQLite: what its search index has still to take in (a server's thread does); null elsewhere. */
  searchIndexBacklog: { sources: number; bytes: number } | null;
}

export async function fsck(store: Store, repair: boolean): Promise<FsckReport> {
  const report: FsckReport = {
    checked: 0,
    problems: [],
    dangling: [],
    repaired: 0,
    searchIndexBacklog: await store.snippets.texts.indexBacklog(),
  };
  const snippetIds = new Set((await store.kysely.selectFrom('snippets').select('id').execute()).map((r) => r.id));
  const projectIds = new Set((await store.kysely.selectFrom('projects').select('id').execute()).map((r) => r.id));
  for (const row of await store.git.all()) {
    report.checked++;
    const name = `${row.kind} ${row.owner_id}`;
    if (!(row.kind === 'snippet' ? snippetIds : projectIds).has(row.owner_id))
      report.problems.push(`${name}: repository without its ${row.kind}`);
    const checked = await checkObjects(store, row.id);
    for (const line of checked.problems) report.problems.push(`${name}: ${line}`);
    for (const line of checked.dangling) report.dangling.push(`${name}: ${line}`);
  }
  for (const snippet of await store.kysely.selectFrom('snippets').selectAll().orderBy('id').execute()) {
    const repo = await store.git.find('snippet', snippet.id);
    if (!repo) {
      report.problems.push(`snippet ${snippet.id}: repository missing`);
      continue;
    }
    const differences = await indexDifferences(store, repo, snippet);
    for (const d of differences) report.problems.push(`snippet ${snippet.id}: ${d}`);
    if (repair && differences.length) {
      await store.transaction((tx) => reindexSnippet(tx, snippet.id));
      report.repaired++;
    }
  }
  return report;
}

/** Every stored object sound, every ref and everything reachable present; what nothing reaches is dangling. */
async function checkObjects(store: Store, repositoryId: number) {
  const problems: string[] = [];
  const objects = new Map<string, { type: string; body: Buffer }>();
  const rows = await store.kysely
    .selectFrom('git_objects')
    .select(['oid', 'type', 'size', 'data', 'parts'])
    .where('repository_id', '=', repositoryId)
    .execute();
  for (const r of rows) {
    const id = Buffer.from(r.oid).toString('hex');
    const type = TYPE_OF_PACK_TYPE[r.type];
    let body: Buffer;
    try {
      body = zlib.inflateSync(r.parts === null ? r.data : await readParts(store.kysely, r.parts));
    } catch {
      problems.push(`object ${id}: cannot be inflated`);
      continue;
    }
    if (!type || objectId(type, body) !== id || body.length !== r.size)
      problems.push(`object ${id}: its bytes do not hash to its id`);
    objects.set(id, { type, body });
  }
  const refs = await store.kysely
    .selectFrom('git_refs')
    .select(['name', 'oid'])
    .where('repository_id', '=', repositoryId)
    .execute();
  const reached = new Set<string>();
  const visit = (id: string, expected: string | null, from: string) => {
    if (reached.has(id)) return;
    const object = objects.get(id);
    if (!object) return void problems.push(`${from}: missing ${expected ?? 'object'} ${id}`);
    if (expected && object.type !== expected)
      return void problems.push(`${from}: ${id} is a ${object.type}, not a ${expected}`);
    reached.add(id);
    if (object.type === 'commit') {
      const c = parseCommit(object.body);
      visit(c.tree, 'tree', `commit ${id}`);
      for (const p of c.parents) visit(p, 'commit', `commit ${id}`);
    } else if (object.type === 'tree') {
      for (const e of parseTree(object.body))
        if (e.mode !== '160000') visit(e.id, e.mode === '40000' ? 'tree' : 'blob', `tree ${id}`);
    } else if (object.type === 'tag') visit(tagTarget(object.body), null, `tag ${id}`);
  };
  for (const ref of refs) visit(Buffer.from(ref.oid).toString('hex'), null, ref.name);
  const dangling = [...objects.keys()]
    .filter((id) => !reached.has(id))
    .map((id) => `dangling ${objects.get(id)!.type} ${id}`);
  return { problems, dangling };
}

async function indexDifferences(
  store: Store,
  repo: GitRepository,
  snippet: { id: number; default_branch: string; head_commit: string | null },
): Promise<string[]> {
  const head = await repo.readBranch(snippet.default_branch);
  const differences: string[] = [];
  if (head !== snippet.head_commit)
    differences.push(`head is ${head ?? 'missing'}, database says ${snippet.head_commit ?? 'none'}`);
  if (!head) return differences;
  const tree = new Map((await repo.listTree(head).catch(() => [])).map((e) => [e.path, e.id]));
  const indexed = new Map((await store.snippets.fileIndex(snippet.id)).map((f) => [f.path, f.blob_id]));
  for (const [path, id] of tree)
    if (indexed.get(path) !== id)
      differences.push(
        `${path}: repository ${id.slice(0, 12)}, database ${indexed.get(path)?.slice(0, 12) ?? 'missing'}`,
      );
  for (const path of indexed.keys()) if (!tree.has(path)) differences.push(`${path}: only in the database`);
  return differences;
}
