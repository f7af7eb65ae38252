// The files a commit changed against its first parent, worked out from the rows in-process, as
// `git log --raw --numstat -M` (history.ts) reports them: no git process and no serving cache, so a
// revisions page after a new commit costs row reads and one line count. Only what can be worked out exactly
// as git does is: a line count follows git's xdiff (its line classes, trimmed ends, discarded lines, then a
// minimal Myers diff, which git's is as long as the difference stays under its cost heuristics). Anything
// else answers null and git works it out: a rename that is not an exact one, a type change, a submodule,
// `.gitattributes`, a large file or a large difference.
import type { FileChange } from './history.ts';
import { type GitRepository, type TreeEntry, unlessTooLarge } from './repository.ts';

/** Blobs larger than this are counted by git: the count runs on the event loop. */
const MAX_BLOB_BYTES = 256 * 1024;
/**
 * Bytes of changed files (both sides) one commit counts in-process, at most: past it, git. Counting takes
 * about 0.8 ms a KiB of short lines on the event loop (ten changed files of 256 KiB held it 1.5 s).
 */
const MAX_COUNTED_BYTES = 64 * 1024;
/** Trees with more files than this are compared by git. */
const MAX_FILES = 1000;
/**
 * Differences (lines, after git's discarding) past this are counted by git: below it git's Myers meets in the
 * middle before its heuristics (XDL_HEUR_MIN_COST, XDL_MAX_COST_MIN: 256 steps) apply, so its diff is minimal.
 */
const MAX_EDIT_COST = 200;
/** Steps of the line diffs of one call, at most: past it, git. */
const MAX_STEPS = 2_000_000;

const ZERO_MODE = '000000';
const EMPTY_BLOB = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';

/** The changes of `commitId`, or null when git should work them out. */
export async function changesFromRows(repo: GitRepository, commitId: string): Promise<FileChange[] | null> {
  const commit = await repo.commit(commitId);
  const parent = commit.parents[0] ?? null;
  // Past MAX_FILES git compares them anyway: the listing stops soon after (directories count as entries).
  const listed = (id: string) => repo.listTree(id, { limit: 4 * MAX_FILES }).catch(unlessTooLarge(null));
  const [before, after] = await Promise.all([parent ? listed(parent) : [], listed(commitId)]);
  if (!before || !after || before.length > MAX_FILES || after.length > MAX_FILES) return null;
  if ([...before, ...after].some((e) => e.type !== 'blob' || /(^|\/)\.gitattributes$/.test(e.path))) return null;
  const old = new Map(before.map((e) => [e.path, e]));
  const now = new Map(after.map((e) => [e.path, e]));
  const modified: [TreeEntry, TreeEntry][] = [];
  const deleted: TreeEntry[] = [];
  const added: TreeEntry[] = [];
  for (const e of before) {
    const next = now.get(e.path);
    if (!next) deleted.push(e);
    else if (next.id !== e.id || next.mode !== e.mode) {
      if (fileType(next.mode) !== fileType(e.mode)) return null;
      modified.push([e, next]);
    }
  }
  for (const e of after) if (!old.has(e.path)) added.push(e);

  // Exact renames only, each blob named once on either side (git would pair several its own way); any
  // other pair of a deletion and an addition may be a rename by similarity, which git works out.
  const renamed: [TreeEntry, TreeEntry][] = [];
  if (deleted.length && added.length) {
    const once = (entries: TreeEntry[]) => {
      const counts = new Map<string, number>();
      for (const e of entries) counts.set(e.id, (counts.get(e.id) ?? 0) + 1);
      return counts;
    };
    const gone = once(deleted);
    const come = once(added);
    for (const e of added) {
      const source = deleted.find((d) => d.id === e.id);
      if (!source) continue;
      if (gone.get(e.id)! > 1 || come.get(e.id)! > 1 || e.id === EMPTY_BLOB) return null;
      if (fileType(source.mode) !== fileType(e.mode)) return null;
      renamed.push([source, e]);
    }
    const sources = new Set(renamed.map(([s]) => s.path));
    const targets = new Set(renamed.map(([, t]) => t.path));
    if (deleted.some((d) => !sources.has(d.path)) && added.some((a) => !targets.has(a.path))) return null;
  }
  const sources = new Set(renamed.map(([s]) => s.path));
  const targets = new Map(renamed.map(([s, t]) => [t.path, s]));

  const entries = [...modified, ...renamed];
  if ([...entries.flat(), ...added, ...deleted].some((e) => e.size > MAX_BLOB_BYTES)) return null;
  if (modified.reduce((bytes, [a, b]) => bytes + a.size + b.size, 0) > MAX_COUNTED_BYTES) return null;
  const blobs = await repo.readBlobs([
    ...new Set([...entries.flat(), ...added, ...deleted.filter((d) => !sources.has(d.path))].map((e) => e.id)),
  ]);
  const budget = { steps: MAX_STEPS };

  // Git lists the changes in its tree order (byte order of the full paths), a rename where its new path is.
  const out: { path: string; change: FileChange }[] = [];
  for (const [a, b] of modified) {
    const counts = lineCounts(blobs.get(a.id)!, blobs.get(b.id)!, budget);
    if (counts === undefined) return null;
    out.push({ path: b.path, change: change('modified', a, b, counts, null) });
  }
  for (const e of deleted) {
    if (sources.has(e.path)) continue;
    const body = blobs.get(e.id)!;
    const counts = isBinary(body) ? null : { added: 0, deleted: countLines(body) };
    out.push({ path: e.path, change: change('deleted', e, null, counts, null) });
  }
  for (const e of added) {
    const source = targets.get(e.path);
    const body = blobs.get(e.id)!;
    if (source) {
      out.push({ path: e.path, change: change('renamed', source, e, isBinary(body) ? null : NO_LINES, 100) });
      continue;
    }
    const counts = isBinary(body) ? null : { added: countLines(body), deleted: 0 };
    out.push({ path: e.path, change: change('added', null, e, counts, null) });
  }
  out.sort((x, y) => Buffer.compare(Buffer.from(x.path), Buffer.from(y.path)));
  return out.map((o) => o.change);
}

const NO_LINES = { added: 0, deleted: 0 };

/** Regular files (either mode) are one type; a symlink another. */
const fileType = (mode: string) => (mode.startsWith('100') ? 'file' : mode);

function change(
  kind: FileChange['kind'],
  from: TreeEntry | null,
  to: TreeEntry | null,
  counts: { added: number; deleted: number } | null,
  similarity: number | null,
): FileChange {
  return {
    kind,
    oldPath: (from ?? to)!.path,
    path: (to ?? from)!.path,
    oldMode: from?.mode ?? ZERO_MODE,
    newMode: to?.mode ?? ZERO_MODE,
    added: counts?.added ?? null,
    deleted: counts?.deleted ?? null,
    similarity,
  };
}

/** Git's test for a binary file: a NUL in its first 8,000 bytes. */
const isBinary = (body: Buffer) => body.subarray(0, 8000).includes(0);

/** Lines as git counts them: a last line without its newline counts. */
function countLines(body: Buffer): number {
  let n = 0;
  for (let at = body.indexOf(10); at !== -1; at = body.indexOf(10, at + 1)) n++;
  return body.length && body[body.length - 1] !== 10 ? n + 1 : n;
}

/** A file's lines, each with its newline (the last one may have none): a line differs from itself without it. */
function linesOf(body: Buffer): string[] {
  const text = body.toString('latin1');
  const lines: string[] = [];
  let start = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', start)) {
    lines.push(text.slice(start, at + 1));
    start = at + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** xdiff's xdl_bogosqrt: a power of two near the square root. */
function bogoSqrt(n: number): number {
  let i = 1;
  for (; n > 0; n >>= 2) i <<= 1;
  return i;
}

/** XDL_MAX_EQLIMIT, XDL_SIMSCAN_WINDOW, XDL_KPDIS_RUN (xdiff/xdiffi.h, xprepare.c). */
const MAX_EQ_LIMIT = 1024;
const SIMSCAN_WINDOW = 100;
const KPDIS_RUN = 4;

/**
 * Lines added and deleted between two texts, as git's numstat counts them (binary: null); undefined when
 * git should count them (a large difference, or past the budget's steps).
 */
export function lineCounts(
  before: Buffer,
  after: Buffer,
  budget: { steps: number },
): { added: number; deleted: number } | null | undefined {
  if (isBinary(before) || isBinary(after)) return null;
  if (before.equals(after)) return { ...NO_LINES };
  // Line classes (xdl_classify_record): equal lines share a class; how often each occurs on each side.
  const classes = new Map<string, number>();
  const occurs: [number[], number[]] = [[], []];
  const classify = (lines: string[], side: 0 | 1) =>
    lines.map((line) => {
      let c = classes.get(line);
      if (c === undefined) {
        c = classes.size;
        classes.set(line, c);
        occurs[0].push(0);
        occurs[1].push(0);
      }
      occurs[side][c]++;
      return c;
    });
  const a = classify(linesOf(before), 0);
  const b = classify(linesOf(after), 1);

  // xdl_trim_ends: the common head and tail.
  let start = 0;
  const lim = Math.min(a.length, b.length);
  while (start < lim && a[start] === b[start]) start++;
  let tail = 0;
  while (tail < lim - start && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const endA = a.length - tail - 1;
  const endB = b.length - tail - 1;

  // xdl_cleanup_records: lines with no match on the other side are changed; lines with many matches too
  // when they sit among unmatched ones. The rest go to the diff.
  const keptOf = (side: number[], other: 0 | 1, end: number) => {
    const mlim = Math.min(bogoSqrt(side.length), MAX_EQ_LIMIT);
    const dis: number[] = [];
    for (let i = start; i <= end; i++) {
      const nm = occurs[other][side[i]];
      dis[i] = nm === 0 ? 0 : nm >= mlim ? 2 : 1;
    }
    const kept: number[] = [];
    let discarded = 0;
    for (let i = start; i <= end; i++) {
      if (dis[i] === 1 || (dis[i] === 2 && !cleanMultimatch(dis, i, start, end))) kept.push(side[i]);
      else discarded++;
    }
    return { kept, discarded };
  };
  const x = keptOf(a, 1, endA);
  const y = keptOf(b, 0, endB);
  const cost = editCost(x.kept, y.kept, budget);
  if (cost === undefined) return undefined;
  // A minimal diff of n and m lines at cost d keeps (n + m - d) / 2 lines in common.
  const common = (x.kept.length + y.kept.length - cost) / 2;
  return { deleted: x.discarded + x.kept.length - common, added: y.discarded + y.kept.length - common };
}

/** xdl_clean_mmatch: whether a line with many matches, at `i`, is discarded among lines without a match. */
function cleanMultimatch(dis: number[], i: number, s: number, e: number): boolean {
  if (i - s > SIMSCAN_WINDOW) s = i - SIMSCAN_WINDOW;
  if (e - i > SIMSCAN_WINDOW) e = i + SIMSCAN_WINDOW;
  let rdis0 = 0;
  let rpdis0 = 1;
  for (let r = 1; i - r >= s; r++) {
    if (!dis[i - r]) rdis0++;
    else if (dis[i - r] === 2) rpdis0++;
    else break;
  }
  if (rdis0 === 0) return false;
  let rdis1 = 0;
  let rpdis1 = 1;
  for (let r = 1; i + r <= e; r++) {
    if (!dis[i + r]) rdis1++;
    else if (dis[i + r] === 2) rpdis1++;
    else break;
  }
  if (rdis1 === 0) return false;
  rdis1 += rdis0;
  rpdis1 += rpdis0;
  return rpdis1 * KPDIS_RUN < rpdis1 + rdis1;
}

/** The least number of lines deleted and added to turn `a` into `b` (Myers), or undefined past the limits. */
function editCost(a: number[], b: number[], budget: { steps: number }): number | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDIT_COST);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  for (let d = 0; d <= max; d++) {
    for (let k = -d; k <= d; k += 2) {
      let i =
        k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let j = i - k;
      const from = i;
      while (i < n && j < m && a[i] === b[j]) {
        i++;
        j++;
      }
      budget.steps -= 1 + i - from;
      v[offset + k] = i;
      if (i >= n && j >= m) return d;
    }
    if (budget.steps < 0) return undefined;
  }
  return undefined;
}
