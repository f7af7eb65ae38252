// How a file is shown on a page: code highlighted on the server by the language its name says, Markdown
// rendered without raw HTML, images shown, binary files offered for download. Both renderers escape
// everything they are given, so their output is safe to place in a page.
import path from 'node:path';
import type { MarkdownIt } from 'markdown-it';
import type { HLJSApi } from 'highlight.js';

/** Files over this size are shown as plain escaped text: highlighting them would stall the page. */
export const MAX_HIGHLIGHTED_BYTES = 1024 * 1024;

export type FileView =
  | { kind: 'code'; html: string; language: string | null }
  | { kind: 'markdown'; html: string; source: string }
  | { kind: 'image' }
  | { kind: 'binary' };

const IMAGE = /\.(png|jpe?g|gif|webp|bmp|ico|avif)$/i;
const MARKDOWN = /\.(md|markdown|mdown|mkd)$/i;
const NAMED_LANGUAGES: Record<string, string> = { dockerfile: 'dockerfile', makefile: 'makefile', gemfile: 'ruby' };

interface Renderers {
  hljs: HLJSApi;
  markdown: MarkdownIt;
}

// Loaded on the first page that needs them, so the API server starts without them.
let renderers: Promise<Renderers> | null = null;
function loadRenderers(): Promise<Renderers> {
  renderers ??= (async () => {
    const hljs = (await import('highlight.js')).default;
    const MarkdownItClass = (await import('markdown-it')).default;
    const markdown = new MarkdownItClass({
      html: false, // raw HTML in Markdown is shown as text, never rendered
      linkify: true,
      highlight: (code, lang) =>
        lang && hljs.getLanguage(lang) ? hljs.highlight(code, { language: lang, ignoreIllegals: true }).value : '',
    });
    // GitLab-flavoured task lists: "- [ ]" and "- [x]" become disabled checkboxes.
    markdown.core.ruler.after('inline', 'task_lists', (state) => {
      for (const token of state.tokens) {
        if (token.type !== 'inline' || !token.children?.length) continue;
        const first = token.children[0];
        const m = /^\[([ xX])\]\s/.exec(first.content);
        if (first.type !== 'text' || !m) continue;
        first.content = first.content.slice(m[0].length);
        const box = new state.Token('html_inline', '', 0);
        box.content = `<input type="checkbox" disabled${m[1] === ' ' ? '' : ' checked'}> `;
        token.children.unshift(box);
      }
    });
    return { hljs, markdown };
  })();
  return renderers;
}

function languageOf(hljs: HLJSApi, filePath: string): string | null {
  const name = path.basename(filePath).toLowerCase();
  if (NAMED_LANGUAGES[name]) return NAMED_LANGUAGES[name];
  const ext = path.extname(name).slice(1);
  return ext && hljs.getLanguage(ext) ? ext : null;
}

export const isBinary = (content: Buffer) => content.subarray(0, 8000).includes(0);

function render({ hljs, markdown }: Renderers, filePath: string, content: Buffer): FileView {
  if (IMAGE.test(filePath)) return { kind: 'image' };
  if (isBinary(content)) return { kind: 'binary' };
  const text = content.toString('utf8');
  if (MARKDOWN.test(filePath)) return { kind: 'markdown', html: markdown.render(text), source: text };
  const language = content.length > MAX_HIGHLIGHTED_BYTES ? null : languageOf(hljs, filePath);
  if (!language) return { kind: 'code', html: escapeHtml(text), language: null };
  return { kind: 'code', html: hljs.highlight(text, { language, ignoreIllegals: true }).value, language };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML that shows it literally. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/**
 * The renderers build their HTML by appending thousands of pieces, and V8 keeps such a string as a tree of
 * those pieces: every page that contains it would walk the whole tree again to write it out (a third
 * of the CPU time of a page with a 200-line file). A copy made once is one flat string.
 */
const flat = (text: string) => Buffer.from(text, 'utf8').toString('utf8');

function flattened(view: FileView): FileView {
  return view.kind === 'code' || view.kind === 'markdown' ? { ...view, html: flat(view.html) } : view;
}

/**
 * Rendered HTML kept by a key: at most MAX_KEPT entries and MAX_KEPT_BYTES of text (a description may be
 * 1 MiB, a file shown plain much more), the oldest going first.
 */
class Kept<T> {
  private readonly entries = new Map<string, { value: T; bytes: number }>();
  private bytes = 0;

  constructor(private readonly sizeOf: (value: T) => number) {}

  get(key: string): T | undefined {
    return this.entries.get(key)?.value;
  }

  keep(key: string, value: T): T {
    const bytes = this.sizeOf(value) + key.length;
    if (bytes > MAX_KEPT_BYTES / 8) return value; // one huge rendering would push out everything else
    this.entries.set(key, { value, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= MAX_KEPT && this.bytes <= MAX_KEPT_BYTES) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
    return value;
  }
}
const MAX_KEPT = 2000;
const MAX_KEPT_BYTES = 64 * 1024 * 1024;

/**
 * The view of a file, kept by blob id and name: a blob's bytes never change, so it is rendered once, not on
 * every request.
 */
const views = new Kept<FileView>(
  (view) => ('html' in view ? view.html.length : 0) + ('source' in view ? view.source.length : 0),
);
const viewKey = (blobId: string, filePath: string) => `${blobId}\n${filePath}`;

/** The view kept for this blob and name, if one was rendered: a page need not read the file to show it. */
export const keptView = (blobId: string, filePath: string): FileView | undefined =>
  views.get(viewKey(blobId, filePath));

export async function viewOf(blobId: string, filePath: string, content: Buffer): Promise<FileView> {
  const key = viewKey(blobId, filePath);
  return views.get(key) ?? views.keep(key, flattened(render(await loadRenderers(), filePath, content)));
}

/**
 * Markdown text (a snippet's description) as safe HTML, kept by the text itself: the same text renders the
 * same, and rendering a short description costs a page about a fifth of its time.
 */
const descriptions = new Kept<string>((html) => html.length);

export async function markdownHtml(text: string): Promise<string> {
  return descriptions.get(text) ?? descriptions.keep(text, flat((await loadRenderers()).markdown.render(text)));
}
