// A snippet's revisions (beyond GitLab, whose snippets have no history view): every commit of its default
// branch, newest first, with the files each changed, and one commit's changes as a diff. Written through the
// API, a page or `git push`, a commit is a commit. A page of revisions is read from the rows (the commits
// walked as `git log` walks them, each one's files from storage/git/changes.ts); what only git can tell (a
// rename by similarity, a large change) and every diff, git itself reads from the node's serving cache of
// the snippet (storage/git/history.ts), brought up to date from the rows first, as a clone is. The caller has
// found the snippet as the viewer may see it (reads.ts#findSnippetOrPersonalForPage).
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Store } from '../../storage/db/store.ts';
import type { Snippet } from '../../storage/db/schema.ts';
import type { ServingCaches } from '../../storage/git/serving-cache.ts';
import {
  type DiffLimits,
  type FilePatch,
  GitTimeout,
  EMPTY_TREE,
  readCommitDiff,
  readRevisions,
  type Revision,
} from '../../storage/git/history.ts';
import type { GitRepository } from '../../storage/git/repository.ts';
import { changesFromRows } from '../../storage/git/changes.ts';
import { changesSize, keptChanges, readingCache } from '../commit-changes.ts';
import { notFound } from '../failure.ts';
import { diffLines, Kept, Rendering, renderBudget } from '../rendering.ts';

export const REVISIONS_PER_PAGE = 20;

/** What one page of revisions may read of git's output before it lists commits without their files. */
const MAX_LOG_BYTES = 1024 * 1024;

/**
 * GitLab's diff limits (docs: administration/diff_limits, the defaults): a file's patch over 200 KB is "too
 * large", and a diff shows at most 1,000 files and 50,000 changed lines. The total bounds what one page holds.
 */
export const DIFF_LIMITS: DiffLimits = {
  filePatchBytes: 200 * 1024,
  totalPatchBytes: 5 * 1024 * 1024,
  totalLines: 50_000,
  files: 1000,
};

/**
 * Pages of revisions and diffs kept by commit id: a commit id names its whole history and its changes, so
 * what was worked out for one never goes stale, and a view after the first costs no git process (about
 * 5 ms of a page's time, bench/revisions.ts). Views of one not worked out yet wait for one git process.
 * Keyed by ids alone, each is found only after the snippet's own repository was asked for the commit. What
 * was cut short by the time budget (which counts waiting) is kept only a while: later it may be worked out.
 */
const RETRY_AFTER_MS = 60_000;
const KEPT_LIMITS = { entries: 1000, bytes: 32 * 1024 * 1024 };
/** What a page holds, about: its messages and a few hundred bytes a revision and a file (stringifying it to
 * measure took 300 ms for twenty messages of a megabyte of control characters). */
const keptPages = new Kept<RevisionsPage>(
  (page) => page.revisions.reduce((n, r) => n + 2 * r.message.length + 256 + changesSize(r.files), 0),
  KEPT_LIMITS,
);
const pagesUnderWay = new Rendering<RevisionsPage>();
const keptDiffs = new Kept<RevisionDiff>(
  (diff) => 2 * diff.message.length + diff.files.reduce((n, f) => n + 2 * (f.rows?.length ?? 0) + 256, 0),
  KEPT_LIMITS,
);
const diffsUnderWay = new Rendering<RevisionDiff>();
/** Pages from this one on are read by git (one process skips the commits): the rows would be walked commit by commit. */
const ROWS_PAGES = 10;

export interface RevisionsPage {
  revisions: Revision[];
  /** Whether older revisions follow. */
  hasMore: boolean;
  /** Whether the revisions are listed without the files they changed (too many to read for one page). */
  filesOmitted: boolean;
}

/** Page `page` (from 1) of the snippet's revisions, newest first. */
export async function snippetRevisions(
  store: Store,
  caches: ServingCaches,
  snippet: Snippet,
  page: number,
): Promise<RevisionsPage> {
  // A snippet from before repositories (content only) has none: no history.
  const repo = await store.git.find('snippet', snippet.id);
  const head = repo && (await repo.readBranch(repo.head));
  if (!repo || !head) return { revisions: [], hasMore: false, filesOmitted: false };
  return pageOf(caches, repo, head, page);
}

async function pageOf(caches: ServingCaches, repo: GitRepository, head: string, page: number) {
  const key = `${head}\n${page}`;
  return (
    keptPages.get(key) ??
    pagesUnderWay.once(key, async () => {
      const read =
        (page <= ROWS_PAGES && (await pageFromRows(repo, head, page))) || (await readPage(caches, repo, head, page));
      return keptPages.keep(key, read, read.filesOmitted ? RETRY_AFTER_MS : undefined);
    })
  );
}

/** The page from the rows, or null when one of its commits' files only git can tell. */
async function pageFromRows(repo: GitRepository, head: string, page: number): Promise<RevisionsPage | null> {
  // One more than a page says whether another follows, without counting them all.
  const commits = await repo.log(head, { skip: (page - 1) * REVISIONS_PER_PAGE, limit: REVISIONS_PER_PAGE + 1 });
  const revisions: Revision[] = [];
  for (const c of commits.slice(0, REVISIONS_PER_PAGE)) {
    let files = keptChanges.get(c.id);
    if (!files) {
      // Each commit's count is bounded (changes.ts); between them, other requests go first.
      await nextTurn();
      const read = await changesFromRows(repo, c.id);
      if (!read) return null;
      files = keptChanges.keep(c.id, read);
    }
    revisions.push({
      id: c.id,
      parents: c.parents,
      authorName: c.authorName,
      authorEmail: c.authorEmail,
      authoredAt: new Date(c.authoredAt).toISOString(),
      message: c.message,
      files,
    });
  }
  return { revisions, hasMore: commits.length > REVISIONS_PER_PAGE, filesOmitted: false };
}

async function readPage(caches: ServingCaches, repo: GitRepository, head: string, page: number) {
  // One more than a page says whether another follows, without counting them all.
  const { revisions, filesOmitted } = await readingCache(caches, repo, (dir) =>
    readRevisions(dir, head, {
      skip: (page - 1) * REVISIONS_PER_PAGE,
      limit: REVISIONS_PER_PAGE + 1,
      maxBytes: MAX_LOG_BYTES,
      timeoutMs: renderBudget(),
    }),
  );
  if (!filesOmitted) for (const r of revisions) keptChanges.keep(r.id, r.files);
  return {
    revisions: revisions.slice(0, REVISIONS_PER_PAGE),
    hasMore: revisions.length > REVISIONS_PER_PAGE,
    filesOmitted,
  };
}

export interface FileDiff extends Omit<FilePatch, 'hunks' | 'omitted'> {
  /** The patch's rows, highlighted (diff-highlight.ts); null when `omitted` says why not (`render_failed`: no worker could). */
  rows: string | null;
  omitted: FilePatch['omitted'] | 'render_failed';
}

export interface RevisionDiff {
  id: string;
  /** The first parent, which the diff is against; null for the first commit. */
  parent: string | null;
  parents: string[];
  authorName: string;
  authorEmail: string;
  authoredAt: string;
  message: string;
  files: FileDiff[];
  /** Whether the diff went over its limits (DIFF_LIMITS): files are missing or not shown. */
  cut: boolean;
  /** Whether git did not work the diff out within the time budget (nothing of it is shown). */
  timedOut: boolean;
}

/**
 * The commit `ref` names in the snippet's repository (404 Commit Not Found when none) with its changes
 * against its first parent, each file's lines highlighted in the render pool.
 */
export async function snippetRevisionDiff(
  store: Store,
  caches: ServingCaches,
  snippet: Snippet,
  ref: string,
): Promise<RevisionDiff> {
  const repo = await store.git.find('snippet', snippet.id);
  const id = repo && (await repo.resolveCommit(ref, { shortestId: SHORTEST_PAGE_ID }));
  if (!repo || !id) throw notFound('Commit');
  return diffOf(caches, repo, id);
}

/**
 * The fewest hex digits GitLab's commit pages take as an id (Commit::COMMIT_SHA_PATTERN, 7 to 40), here too when
 * ancestry steps follow (`abcd^0`): fewer are only a ref's name. Four digits were enough, so 65,536 requests found
 * every commit of a snippet, those no branch reaches any more (a history force-pushed away, which is never pruned)
 * among them, with their diffs.
 */
const SHORTEST_PAGE_ID = 7;

/** A commit's diff against its first parent, kept by its id: a snippet's revision or a project's commit. */
export async function diffOf(caches: ServingCaches, repo: GitRepository, id: string): Promise<RevisionDiff> {
  return (
    keptDiffs.get(id) ??
    diffsUnderWay.once(id, async () => {
      const diff = await workOutDiff(caches, repo, id);
      const partial = diff.timedOut || diff.files.some((f) => f.omitted === 'render_failed');
      return keptDiffs.keep(id, diff, partial ? RETRY_AFTER_MS : undefined);
    })
  );
}

/** Commits waiting to be prepared at most: past it, the oldest are left to their first view. */
const MAX_WAITING = 16;

/**
 * Works out a new commit's first page of revisions (from the rows) and its diff (git, then the highlighting
 * in the render pool) right after the update that made it, so that their first views find them kept: a diff
 * costs a git process and its highlighting (for 200 changed lines of JavaScript, about 35 ms of CPU:
 * bench/revisions.ts), far over a page's 20 ms. Only for a snippet whose serving cache this node has
 * (someone looked at a diff of it, or cloned it, since the node started): a snippet nobody looks at costs its
 * writes nothing, and none gets a serving cache for it. One at a time, in the background; a preparation
 * that fails is left to the first view.
 */
export class RevisionPreparer {
  private readonly waiting: { snippetId: number; commit: string }[] = [];
  private running: Promise<void> = Promise.resolve();
  private draining = false;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly caches: ServingCaches,
  ) {}

  prepare(snippetId: number, commit: string): void {
    if (this.closed) return;
    this.waiting.push({ snippetId, commit });
    if (this.waiting.length > MAX_WAITING) this.waiting.shift();
    if (this.draining) return;
    this.draining = true;
    this.running = this.drain();
  }

  /** Stops taking commits and waits for the one under way. */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting.length = 0;
    await this.running;
  }

  private async drain(): Promise<void> {
    try {
      for (let next = this.waiting.shift(); next && !this.closed; next = this.waiting.shift()) {
        try {
          const repo = await this.store.git.find('snippet', next.snippetId);
          if (!repo || !this.caches.has(repo.id)) continue;
          await pageOf(this.caches, repo, next.commit, 1);
          await diffOf(this.caches, repo, next.commit);
        } catch {
          // The first view works it out again, and answers what went wrong.
        }
      }
    } finally {
      // In the same turn as the loop's last look at `waiting`: a commit added after it starts a new drain.
      this.draining = false;
    }
  }
}

/**
 * The diff of `to` against `base` (null: against nothing) as a page shows it, `to`'s commit describing it: the
 * comparison page's (…/-/compare/<base>...<to>); not kept, as a commit's own diff is.
 */
export const rangeDiff = (caches: ServingCaches, repo: GitRepository, base: string | null, to: string) =>
  workOutDiff(caches, repo, to, base);

/** The diff of the commit `id` against `against`, by default its first parent. */
async function workOutDiff(
  caches: ServingCaches,
  repo: GitRepository,
  id: string,
  against?: string | null,
): Promise<RevisionDiff> {
  const commit = await repo.commit(id);
  const parent = against === undefined ? (commit.parents[0] ?? null) : against;
  let patches: { files: FilePatch[]; cut: boolean };
  let timedOut = false;
  try {
    // Against nothing asked for (two histories that share no commit): from the empty tree, whatever the commit.
    const from = against === null ? EMPTY_TREE : parent;
    patches = await readingCache(caches, repo, (dir) => readCommitDiff(dir, from, id, DIFF_LIMITS, renderBudget()));
  } catch (error) {
    if (!(error instanceof GitTimeout)) throw error;
    patches = { files: [], cut: true };
    timedOut = true;
  }
  const rendered = async ({ hunks, ...file }: FilePatch): Promise<FileDiff> => {
    if (hunks === null) return { ...file, rows: null };
    const result = await diffLines(file.path, hunks);
    if (!result) return { ...file, rows: null, omitted: 'render_failed' };
    return result.rows === null ? { ...file, rows: null, omitted: 'not_shown' } : { ...file, rows: result.rows };
  };
  // Files rendered a few at a time, until the page's rows reach DIFF_PAGE_HTML: those after are not shown.
  const files: FileDiff[] = [];
  let pageHtml = 0;
  let full = false;
  for (let i = 0; i < patches.files.length; i += RENDERED_AT_ONCE) {
    const batch = patches.files.slice(i, i + RENDERED_AT_ONCE);
    const done: FileDiff[] = full ? batch.map(leftOut) : await Promise.all(batch.map(rendered));
    for (const [k, file] of done.entries()) {
      full ||= pageHtml + (file.rows?.length ?? 0) > DIFF_PAGE_HTML;
      pageHtml += full ? 0 : (file.rows?.length ?? 0);
      files.push(full ? leftOut(batch[k]) : file);
    }
  }
  const cut = patches.cut || files.some((f) => f.omitted === 'not_shown');
  return {
    id,
    parent,
    parents: commit.parents,
    authorName: commit.author.name,
    authorEmail: commit.author.email,
    authoredAt: new Date(commit.author.time * 1000).toISOString(),
    message: commit.message,
    files,
    cut,
    timedOut,
  };
}

/** The rows of a diff page at most (their markup is most of the page), as a snippet file's highlighted HTML. */
const DIFF_PAGE_HTML = 4 * 1024 * 1024;
/** Files of a diff highlighted at once (the render pool has up to four threads). */
const RENDERED_AT_ONCE = 4;

/** A file of the diff left out: its rows over the page's (a file without rows keeps its note). */
const leftOut = ({ hunks, ...file }: FilePatch): FileDiff => ({
  ...file,
  rows: null,
  omitted: hunks === null ? file.omitted : 'not_shown',
});
