// `snippetd fsck [--repair]`: every repository's rows checked the way `git fsck` checks a repository (each
// object's id recomputed from its bytes, every ref and every object reachable from one present with the right
// type), every repository's owner present, and each snippet's index of files and head against its branch.
// Objects no ref reaches are listed as dangling, as git lists them: a deleted branch leaves them, and they
// are not a fault. --repair rebuilds a snippet's index from its branch.
//
// Then the search index against the rows, under the limit in force (search_indexed_file_size_limit_kb):
// each snippet's rows of snippet_file_text against its files (one for each, holding the file's text, or ''
// for a binary file or one over the limit), and on SQLite the full-text index against those rows and the
// snippets' fields (storage/db/search-index-check.ts); what SQLite's indexer has still to do is not a fault.
// --repair writes a snippet's rows again (and so queues them for SQLite's indexer) and removes what is
// left of sources gone. Snippets are walked a batch at a time, a snippet's search check in one transaction.
import zlib from 'node:zlib';
import type { Store } from '../storage/db/store.ts';
import { objectId, parseCommit, parseTree, TYPE_OF_PACK_TYPE, tagTarget } from '../storage/git/objects.ts';
import { isValidRefName } from './paths.ts';
import type { GitRepository } from '../storage/git/repository.ts';
import { readParts } from '../storage/git/object-parts.ts';
import { reindexSnippet } from './snippets/repair.ts';
import { getSettings, indexedFileMaxBytes } from './settings.ts';
import { textRows } from '../storage/db/tables/snippet-text.ts';
import { fullTextDifference, goneSources, requeueSource } from '../storage/db/search-index-check.ts';
import type { SourceKind } from '../storage/db/search-indexing.ts';
import type { IndexedFile } from '../storage/db/tables/snippets.ts';

/** Snippets read at a time. */
const SNIPPET_BATCH = 100;

export interface FsckReport {
  checked: number;
  problems: string[];
  /** Objects no ref reaches (git's "dangling"): reported, not a problem. */
  dangling: string[];
  repaired: number;
  /** Full-text index entries of files and snippets gone, removed by --repair (SQLite). */
  searchIndexLeftoversRemoved: number;
  /** SQLite: what its search index has still to take in (a server's thread does); null elsewhere. */
  searchIndexBacklog: { sources: number; bytes: number } | null;
}

export async function fsck(store: Store, repair: boolean): Promise<FsckReport> {
  const report: FsckReport = {
    checked: 0,
    problems: [],
    dangling: [],
    repaired: 0,
    searchIndexLeftoversRemoved: 0,
    searchIndexBacklog: await store.snippets.texts.indexBacklog(),
  };
  // fsck may run beside a serving instance: what it reads first is what a write makes last (a repository before
  // its owner's row is gone, refs before the objects they name), and a snippet that differs is read again.
  const repositories = await store.git.all();
  const snippetIds = new Set((await store.kysely.selectFrom('snippets').select('id').execute()).map((r) => r.id));
  const projectIds = new Set((await store.kysely.selectFrom('projects').select('id').execute()).map((r) => r.id));
  for (const row of repositories) {
    report.checked++;
    const name = `${row.kind} ${row.owner_id}`;
    // One deleted with its owner meanwhile is not a problem.
    if (
      !(row.kind === 'snippet' ? snippetIds : projectIds).has(row.owner_id) &&
      (await store.git.find(row.kind, row.owner_id))
    )
      report.problems.push(`${name}: repository without its ${row.kind}`);
    const checked = await store.snapshot((s) => checkObjects(s, row.id));
    // Deleted while it was read (SQLite reads apart): what was missing is no problem.
    if (checked.problems.length && !(await store.git.find(row.kind, row.owner_id))) continue;
    for (const line of checked.problems) report.problems.push(`${name}: ${line}`);
    for (const line of checked.dangling) report.dangling.push(`${name}: ${line}`);
  }
  const maxBytes = indexedFileMaxBytes(await getSettings(store));
  for (let after = 0; ; ) {
    const snippets = await store.kysely
      .selectFrom('snippets')
      .select(['id', 'default_branch', 'head_commit'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(SNIPPET_BATCH)
      .execute();
    if (!snippets.length) break;
    after = snippets[snippets.length - 1].id;
    for (const { id } of snippets) {
      let repaired = false;
      // The snippet's row and its repository as one write left them. On SQLite, whose reads here are apart, they
      // are read again when they differ, in a transaction that holds writes off for that one snippet: read
      // apart twice, a write landed between the row and its branch in both reads once in a CI run.
      let checked = await store.snapshot((s) => snippetDifferences(s, id));
      if (store.db.dialect === 'sqlite' && checked && (!checked.repo || checked.differences.length))
        checked = await store.transaction((tx) => snippetDifferences(tx, id));
      if (!checked) continue; // deleted meanwhile
      const { snippet, repo, differences } = checked;
      if (!repo) report.problems.push(`snippet ${snippet.id}: repository missing`);
      else {
        for (const d of differences) report.problems.push(`snippet ${snippet.id}: ${d}`);
        if (repair && differences.length) {
          await store.transaction((tx) => reindexSnippet(tx, snippet.id));
          repaired = true;
        }
      }
      const search = await store.transaction((tx) => searchIndexDifferences(tx, snippet.id, maxBytes, repair));
      for (const d of search.differences) report.problems.push(`snippet ${snippet.id}: ${d}`);
      if (repaired || search.repaired) report.repaired++;
    }
  }
  if (store.db.dialect === 'sqlite')
    for (const kind of ['file', 'fields'] as const) await searchIndexLeftovers(store, kind, repair, report);
  return report;
}

/** The snippet, its repository and how its index of files differs from its branch; undefined if it is gone. */
async function snippetDifferences(store: Store, id: number) {
  const snippet = await store.kysely
    .selectFrom('snippets')
    .select(['id', 'default_branch', 'head_commit'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!snippet) return undefined;
  const repo = await store.git.find('snippet', id);
  return { snippet, repo, differences: repo ? await indexDifferences(store, repo, snippet) : [] };
}

/**
 * How the snippet's rows in the search index differ from its files, and on SQLite its full-text index from
 * those rows and its fields; with `repair`, made to agree. Call in a transaction.
 */
async function searchIndexDifferences(tx: Store, snippetId: number, maxBytes: number, repair: boolean) {
  const snippet = await tx.snippets.lock(snippetId);
  if (!snippet) return { differences: [], repaired: false };
  const indexedFiles = await tx.snippets.fileIndex(snippetId);
  const { bodies, unreadable } = await soundBlobs(tx, snippetId, indexedFiles, maxBytes);
  // A file whose blob is missing or damaged keeps its text: it may be the only copy of the file left.
  const files = indexedFiles.filter((f) => !unreadable.has(f.blob_id));
  const expected = new Map(
    (await textRows(tx.kysely, snippetId, files, maxBytes, bodies)).map((r, i) => [r.path, { ...r, file: files[i] }]),
  );
  const rows = await tx.kysely
    .selectFrom('snippet_file_text')
    .select(['id', 'path', 'content'])
    .where('snippet_id', '=', snippetId)
    .execute();
  const differences: string[] = [];
  const removed: string[] = [];
  const rewritten: typeof files = [];
  /** Sources whose full-text entries differ from their rows, to be indexed again. */
  const requeued: { kind: SourceKind; id: number; source: Parameters<typeof requeueSource>[3] }[] = [];
  const sqlite = tx.db.dialect === 'sqlite';
  for (const file of indexedFiles) {
    if (!unreadable.has(file.blob_id)) continue;
    const kept = rows.find((r) => r.path === file.path)?.content;
    const exact = kept && objectId('blob', Buffer.from(kept)) === file.blob_id;
    differences.push(
      `${file.path}: its blob ${file.blob_id} is missing or damaged; ${
        kept
          ? `its text in the search index is kept${exact ? ', and is that blob exactly' : ''}`
          : 'the search index has no text of it'
      }`,
    );
  }
  for (const row of rows) {
    const want = expected.get(row.path);
    if (indexedFiles.some((f) => f.path === row.path && unreadable.has(f.blob_id))) continue;
    if (!want) {
      differences.push(`${row.path}: in the search index, not a file of the snippet`);
      removed.push(row.path);
    } else if (row.content !== want.content) {
      differences.push(
        want.file.size > maxBytes && row.content !== ''
          ? `${row.path}: its text is in the search index, over the limit of ${maxBytes / 1024} KiB`
          : row.content === ''
            ? `${row.path}: its text is not in the search index`
            : `${row.path}: the search index holds other text than the file`,
      );
      rewritten.push(want.file);
    } else if (sqlite) {
      const fullText = await fullTextDifference(tx.kysely, row.id, { kind: 'file', ...row });
      if (fullText) {
        differences.push(`${row.path}: ${fullText}`);
        requeued.push({ kind: 'file', id: row.id, source: { kind: 'file', ...row } });
      }
    }
  }
  const indexed = new Set(rows.map((r) => r.path));
  for (const file of files)
    if (!indexed.has(file.path)) {
      differences.push(`${file.path}: not in the search index`);
      rewritten.push(file);
    }
  if (sqlite) {
    const fields = { kind: 'fields' as const, ...snippet };
    const fullText = await fullTextDifference(tx.kysely, snippetId, fields);
    if (fullText) {
      differences.push(`title, description and file name: ${fullText}`);
      requeued.push({ kind: 'fields', id: snippetId, source: fields });
    }
  }
  const repaired = repair && (removed.length > 0 || rewritten.length > 0 || requeued.length > 0);
  if (!repaired) return { differences, repaired };
  for (const r of requeued) await requeueSource(tx.kysely, r.kind, r.id, r.source);
  if (removed.length || rewritten.length)
    await tx.snippets.texts.sync(snippetId, [...removed, ...rewritten.map((f) => f.path)], rewritten, maxBytes);
  return { differences, repaired };
}

/**
 * The blobs of `files` the search index may hold the text of (up to `maxBytes`), read and checked against their
 * ids, and the ids of those missing, that cannot be inflated or whose bytes hash to another id.
 */
async function soundBlobs(tx: Store, snippetId: number, files: IndexedFile[], maxBytes: number) {
  const bodies = new Map<string, Buffer>();
  const unreadable = new Set<string>();
  const repo = await tx.git.find('snippet', snippetId);
  for (const id of new Set(files.filter((f) => f.size <= maxBytes).map((f) => f.blob_id))) {
    const body = repo && (await repo.readBlobs([id]).catch(() => null))?.get(id);
    if (body && objectId('blob', body) === id) bodies.set(id, body);
    else unreadable.add(id);
  }
  return { bodies, unreadable };
}

/** SQLite: full-text index entries of files or snippets gone, a line each; with `repair`, removed. */
async function searchIndexLeftovers(store: Store, kind: SourceKind, repair: boolean, report: FsckReport) {
  const what = kind === 'file' ? 'a file of a snippet' : 'a snippet';
  for (let after = 0; ; ) {
    const { gone, next } = await store.transaction(async (tx) => {
      const batch = await goneSources(tx.kysely, kind, after);
      if (repair) for (const id of batch.gone) await requeueSource(tx.kysely, kind, id, null);
      return batch;
    });
    for (const id of gone) report.problems.push(`search index: full-text entries of ${what} gone (${kind} ${id})`);
    if (repair) report.searchIndexLeftoversRemoved += gone.length;
    if (next === null) return;
    after = next;
  }
}

/** Every stored object sound, every ref and everything reachable present; what nothing reaches is dangling. */
async function checkObjects(store: Store, repositoryId: number) {
  const problems: string[] = [];
  // Refs first: an object a ref names was written before the ref moved to it.
  const refs = await store.kysely
    .selectFrom('git_refs')
    .select(['name', 'oid'])
    .where('repository_id', '=', repositoryId)
    .execute();
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
  for (const ref of refs)
    if (!isValidRefName(ref.name))
      problems.push(`${JSON.stringify(ref.name)}: not a ref name git accepts: every push to this repository fails`);
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
      let entries: ReturnType<typeof parseTree>;
      try {
        entries = parseTree(object.body);
      } catch {
        return void problems.push(`tree ${id}: an entry without its name or id (a damaged tree)`);
      }
      for (const e of entries) if (e.mode !== '160000') visit(e.id, e.mode === '40000' ? 'tree' : 'blob', `tree ${id}`);
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
