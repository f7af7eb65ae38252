// How a file is shown on a page: code highlighted on the server by the language its name says, in numbered
// lines; Markdown rendered as GitLab does, its HTML cut down to GitLab's allowlist; images shown, binary
// files offered for download, and a file too large for a page named as such (its Raw and Download links
// still work). The renderers (render-worker.ts) escape or sanitize everything they are given, so their
// output is safe to place in a page; they run in a pool of worker threads within a time budget, so no file,
// however hostile, holds the event loop.
import os from 'node:os';
import type { Piscina } from 'piscina';
import { shippedFile } from '../shipped-files.ts';
import type { RelativeLinks, RenderResult, RenderTask } from './render-worker.ts';
import { escapeHtml } from './escape.ts';
import type { DiffResult, DiffTask } from './diff-highlight.ts';
import type { LargeBlob } from '../storage/git/repository.ts';

/**
 * The largest file a page shows (GitLab's blob viewers collapse text beyond 1 MB): a larger one is "too
 * large to display", with its Raw and Download links. Escaping, highlighting and sending a file all grow
 * with it, so this bounds every page.
 */
export const MAX_DISPLAYED_BYTES = 1024 * 1024;

/**
 * How long one rendering may take, waiting for a worker included (SNIPPETD_RENDER_BUDGET_MS). One over it is
 * abandoned (its worker thread terminated) and the file is shown as plain text instead.
 */
let renderBudgetMs = 5000;

/** The budget from the configuration; one for the process, as the pool is. */
export function setRenderBudget(ms: number): void {
  renderBudgetMs = ms;
}

export const renderBudget = () => renderBudgetMs;

/**
 * One budget for several git processes of one answer, started now: each call answers what is left of it, at least
 * 1 ms (a process started past it times out at once).
 */
export function sharedRenderBudget(): () => number {
  const deadline = performance.now() + renderBudgetMs;
  return () => Math.max(1, Math.floor(deadline - performance.now()));
}

export type FileView =
  | {
      kind: 'code';
      html: string;
      language: string | null;
      lines?: number;
      /** Shown plain: its rendering took too long or too much memory. */
      renderAbandoned?: boolean;
      /** Shown plain without being tried: a file above it on the page was abandoned (viewOf's plainOnly). */
      renderSkipped?: boolean;
    }
  | { kind: 'markdown'; html: string; sourceHtml: string }
  | { kind: 'too_large'; limit: number }
  | { kind: 'image' }
  | { kind: 'binary' };

const IMAGE = /\.(png|jpe?g|gif|webp|bmp|ico|avif)$/i;
const MARKDOWN = /\.(md|markdown|mdown|mkd)$/i;

export const isBinary = (content: Buffer) => content.subarray(0, 8000).includes(0);

/**
 * A file as a page has it: its bytes, or for a blob over MAX_DISPLAYED_BYTES only its size and start, enough to
 * tell a binary file from one too large to display (read whole, eight first views of a 45 MB file read 360 MB).
 */
export type Viewable = Buffer | Pick<LargeBlob, 'size' | 'head'>;

/** Whether viewOf renders the file into HTML (code or Markdown), rather than an image, binary or too large a file. */
export const rendersHtml = (filePath: string, content: Viewable) =>
  Buffer.isBuffer(content) && !IMAGE.test(filePath) && !isBinary(content) && content.length <= MAX_DISPLAYED_BYTES;

/**
 * A render thread's heap at most. A file of 1 MB can make highlight.js or markdown-it build gigabytes before the
 * output's own bound is checked (1 MB of `[1,` as JSON: 1.2 GB; a 5-column table: 0.75 GB), and a thread kept
 * its heap once idle. Past it the thread ends, and the file is shown plain; a MB of ordinary JavaScript, Python
 * or Markdown prose renders within it.
 */
const RENDER_HEAP_MB = 256;

// Started on the first page that renders, so the API server starts without it. Threads beyond the event
// loop's own core, at most 4; idle ones but one end after a minute. One always stays: with none, piscina
// starts no new thread for the tasks waiting when the last one is terminated over the budget.
let pool: Piscina | null = null;
async function renderPool(): Promise<Piscina> {
  if (pool) return pool;
  const { Piscina } = await import('piscina');
  // From source the worker is render-worker.ts (run through tsx, as its parent is); built, scripts/build.mjs
  // writes it beside the bundle as domain/render-worker.js.
  const filename = shippedFile('domain', import.meta.url.endsWith('.ts') ? 'render-worker.ts' : 'render-worker.js');
  pool ??= new Piscina({
    filename,
    minThreads: 1,
    maxThreads: Math.max(1, Math.min(4, os.availableParallelism() - 1)),
    idleTimeout: 60_000,
    resourceLimits: { maxOldGenerationSizeMb: RENDER_HEAP_MB },
  });
  // A thread that fails outside a task (its module cannot load, say) must not end the server, as an 'error'
  // event nobody hears would: its tasks fail and their files are shown plain; the failure is said on stderr.
  pool.on('error', (error: Error) => process.emitWarning(`a render thread failed: ${error.message}`));
  return pool;
}

/**
 * The task's result from a worker, or null when it was not done within the budget, or its worker failed
 * (out of memory, say): either way the text is shown plain rather than the page failing.
 */
async function inWorker(task: RenderTask): Promise<RenderResult | null> {
  const workers = await renderPool();
  return workers.run(task, { signal: AbortSignal.timeout(renderBudgetMs) }).catch(() => null);
}

/**
 * A file's patch as lines (diff-highlight.ts), highlighted by the file's name; over the budget, or if the
 * worker fails, the lines plain (escaped in a worker too); null if even that fails.
 */
export async function diffLines(filePath: string, hunks: string): Promise<DiffResult | null> {
  const workers = await renderPool();
  const run = (highlight: boolean) =>
    workers
      .run({ filePath, hunks, highlight } satisfies DiffTask, {
        name: 'highlightDiff',
        signal: AbortSignal.timeout(renderBudgetMs),
      })
      .catch(() => null) as Promise<DiffResult | null>;
  return (await run(true)) ?? run(false);
}

/**
 * Escaped text, in a worker too: escaping a megabyte of markup characters takes a tenth of a second. Only if
 * the worker fails is it escaped here (the text is at most MAX_DISPLAYED_BYTES).
 */
async function plain(text: string, linePrefix?: string): Promise<{ html: string; lines?: number }> {
  return (await inWorker({ op: 'plain', text, linePrefix })) ?? { html: escapeHtml(text) };
}

/** Texts this long are escaped in place; longer ones in a worker. */
const ESCAPED_IN_PLACE_CHARS = 64 * 1024;

/** Text as HTML that shows it literally, escaped in a worker when it is long (as `plain`, at most MAX_DISPLAYED_BYTES). */
export async function escapedHtml(text: string): Promise<string> {
  return text.length <= ESCAPED_IN_PLACE_CHARS ? escapeHtml(text) : (await plain(text)).html;
}

async function render(
  filePath: string,
  content: Viewable,
  linePrefix: string,
  links: RelativeLinks | undefined,
  plainOnly: boolean,
): Promise<FileView> {
  if (IMAGE.test(filePath)) return { kind: 'image' };
  if (isBinary(Buffer.isBuffer(content) ? content : content.head)) return { kind: 'binary' };
  if (!Buffer.isBuffer(content) || content.length > MAX_DISPLAYED_BYTES)
    return { kind: 'too_large', limit: MAX_DISPLAYED_BYTES };
  const text = content.toString('utf8');
  if (plainOnly) return { kind: 'code', ...(await plain(text, linePrefix)), language: null, renderSkipped: true };
  if (MARKDOWN.test(filePath)) {
    const rendered = await inWorker({ op: 'markdown', text, links });
    if (rendered) return { kind: 'markdown', html: rendered.html, sourceHtml: rendered.sourceHtml! };
    return { kind: 'code', ...(await plain(text)), language: null, renderAbandoned: true };
  }
  const highlighted = await inWorker({ op: 'code', filePath, text, linePrefix });
  if (highlighted) return { kind: 'code', ...highlighted };
  return { kind: 'code', ...(await plain(text, linePrefix)), language: null, renderAbandoned: true };
}

/**
 * Rendered HTML kept by a key: at most MAX_KEPT entries and MAX_KEPT_BYTES (unless `limits` say otherwise),
 * the oldest going first; and all of them together at most ALL_KEPT_BYTES, the largest giving up its oldest.
 * `sizeOf` counts bytes: a string's length twice (a string with a character past Latin-1 takes two bytes a
 * code unit, and two anonymous views of such files took 300 MB counted as 150).
 * Any rendering fits (the display limit bounds each one), so a large file is rendered once per node, not
 * once per view: rendering it is the costly part, keeping it is not.
 */
export class Kept<T> {
  private readonly entries = new Map<string, { value: T; bytes: number; until: number }>();
  private bytes = 0;

  constructor(
    private readonly sizeOf: (value: T) => number,
    private readonly limits = { entries: MAX_KEPT, bytes: MAX_KEPT_BYTES },
  ) {
    allKept.caches.add(this as Kept<unknown>);
  }

  /** Forgets the oldest entry; false when there is none. */
  private dropOldest(): boolean {
    for (const [key, entry] of this.entries) {
      this.forget(key, entry.bytes);
      return true;
    }
    return false;
  }

  private forget(key: string, bytes: number) {
    this.entries.delete(key);
    this.bytes -= bytes;
    allKept.bytes -= bytes;
  }

  /** Gives up the oldest entries of the caches holding most until all of them fit ALL_KEPT_BYTES. */
  private static fitAll() {
    while (allKept.bytes > ALL_KEPT_BYTES) {
      let largest: Kept<unknown> | null = null;
      for (const cache of allKept.caches) if (!largest || cache.bytes > largest.bytes) largest = cache;
      if (!largest?.dropOldest()) return;
    }
  }

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.until < Date.now()) {
      this.forget(key, entry.bytes);
      return undefined;
    }
    return entry?.value;
  }

  /** `forMs`: how long it is kept at most (by default, until it is pushed out). */
  keep(key: string, value: T, forMs = Number.POSITIVE_INFINITY): T {
    const bytes = this.sizeOf(value) + 2 * key.length;
    if (bytes > this.limits.bytes) return value;
    const old = this.entries.get(key);
    if (old) this.forget(key, old.bytes);
    this.entries.set(key, { value, bytes, until: Date.now() + forMs });
    this.bytes += bytes;
    allKept.bytes += bytes;
    while (this.entries.size > this.limits.entries || this.bytes > this.limits.bytes) this.dropOldest();
    Kept.fitAll();
    return value;
  }
}
const MAX_KEPT = 2000;
/** How long a rendering abandoned over the budget is kept before a view tries again. */
const ABANDONED_KEPT_MS = 60_000;
const MAX_KEPT_BYTES = 128 * 1024 * 1024;
const ALL_KEPT_BYTES = 160 * 1024 * 1024;
const allKept = { bytes: 0, caches: new Set<Kept<unknown>>() };

/**
 * Renderings of one key under way, so that many views of a file not rendered yet wait for one rendering
 * instead of each taking a worker for up to the budget.
 */
export class Rendering<T> {
  private readonly underWay = new Map<string, Promise<T>>();

  once(key: string, work: () => Promise<T>): Promise<T> {
    let promise = this.underWay.get(key);
    if (!promise) {
      promise = work().finally(() => this.underWay.delete(key));
      this.underWay.set(key, promise);
    }
    return promise;
  }
}

/**
 * The view of a file, kept by blob id, name and line prefix (its lines' ids: `L` gives `L1`, `L2`, …; a page
 * showing several files gives each its own): a blob's bytes never change, so it is rendered once, not on
 * every request. A view whose rendering was abandoned is kept for a while too: a file that takes a worker for
 * the whole budget would otherwise take it again on every view; only a while, since the budget counts time
 * waiting for a worker, and a file abandoned while the pool was busy renders on a later view.
 */
const views = new Kept<FileView>(
  (view) => 2 * (('html' in view ? view.html.length : 0) + ('sourceHtml' in view ? view.sourceHtml.length : 0)),
);
const viewRenderings = new Rendering<FileView>();
const viewKey = (blobId: string, filePath: string, linePrefix: string, links?: RelativeLinks) =>
  `${blobId}\n${filePath}\n${linePrefix}\n${links?.blob ?? ''}`;

/** The view kept for this blob and name, if one was rendered: a page need not read the file to show it. */
export const keptView = (blobId: string, filePath: string, linePrefix = 'L'): FileView | undefined =>
  views.get(viewKey(blobId, filePath, linePrefix));

/**
 * `links`: where a repository file's relative links lead (a snippet's files have none). `plainOnly`: a file
 * before it on the page was abandoned, so it is shown plain without being tried, rather than take the pool for
 * another budget (ten slow files made one view take a render thread for 50 s). Kept apart, and as briefly as an
 * abandoned view: another page showing the same file, or this one once the slow file is gone, tries it.
 */
export async function viewOf(
  blobId: string,
  filePath: string,
  content: Viewable,
  linePrefix = 'L',
  links?: RelativeLinks,
  plainOnly = false,
): Promise<FileView> {
  const key = `${viewKey(blobId, filePath, linePrefix, links)}${plainOnly ? '\nplain' : ''}`;
  return (
    views.get(key) ??
    viewRenderings.once(key, async () => {
      const view = await render(filePath, content, linePrefix, links, plainOnly);
      const briefly = view.kind === 'code' && (view.renderAbandoned || view.renderSkipped);
      return views.keep(key, view, briefly ? ABANDONED_KEPT_MS : undefined);
    })
  );
}

/**
 * Markdown text (a snippet's description) as safe HTML, kept by the text itself: the same text renders the
 * same, and rendering a short description costs a page about a fifth of its time. Over the budget, the
 * text is shown as it is.
 */
const descriptions = new Kept<string>((html) => 2 * html.length);
const descriptionRenderings = new Rendering<string>();

export async function markdownHtml(text: string): Promise<string> {
  return (
    descriptions.get(text) ??
    descriptionRenderings.once(text, async () => {
      const rendered = await inWorker({ op: 'markdown', text });
      if (rendered) return descriptions.keep(text, rendered.html);
      return descriptions.keep(text, `<pre class="plain">${(await plain(text)).html}</pre>`, ABANDONED_KEPT_MS);
    })
  );
}
