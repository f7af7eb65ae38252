// The renderers, run in a worker thread of domain/rendering.ts's pool: highlighting and Markdown take time
// that grows with their input (and for some inputs, far faster than it), so they never run on the event
// loop. Each task is one pure function of its input; a task over its time budget is abandoned and this
// thread is terminated, so nothing here needs to stop itself.
import os from 'node:os';
import hljs from 'highlight.js';
import MarkdownIt from 'markdown-it';
import footnote from 'markdown-it-footnote';
import sanitizeHtml from 'sanitize-html';
import { escapeHtml } from './escape.ts';
import { languageOf } from './languages.ts';

// A diff's lines highlighted (pool.run(task, { name: 'highlightDiff' })).
export { highlightDiff } from './diff-highlight.ts';

// Rendering takes what the event loop leaves: on Linux a thread's nice value is its own, so this lowers this
// render thread alone, and a server short of CPU still answers its other requests first.
try {
  os.setPriority(10);
} catch {
  // Not allowed here: the thread keeps the process's priority.
}

export type RenderTask =
  | { op: 'code'; filePath: string; text: string; linePrefix: string }
  | { op: 'markdown'; text: string; links?: RelativeLinks }
  | { op: 'plain'; text: string; linePrefix?: string };

/**
 * Where a repository file's relative links lead, as GitLab's RelativeLinkFilter: links to the files' pages
 * (`…/-/blob/<ref>/<dir>/`), images to their raw bytes (`…/-/raw/<ref>/<dir>/`). Both end with "/".
 */
export type RelativeLinks = { blob: string; raw: string };

/** `lines`: how many numbered lines the html holds, when it is code split into lines. */
export type RenderResult = { html: string; language: string | null; sourceHtml?: string; lines?: number };

/** Highlighted output beyond this is shown plain: markup per token can make a page many times the file. */
const MAX_RENDERED_HTML = 8 * 1024 * 1024;

const markdown = new MarkdownIt({
  html: true, // raw HTML is kept, then cut down to GitLab's allowlist by the sanitizer (safeHtml)
  linkify: true,
  highlight: (code, lang) =>
    lang && hljs.getLanguage(lang) ? hljs.highlight(code, { language: lang, ignoreIllegals: true }).value : '',
}).use(footnote);

// Table alignment as classes, not markdown-it's `style="text-align:…"`: the page's policy allows no inline
// style, and the sanitizer drops every style attribute.
markdown.core.ruler.push('table_alignment', (state) => {
  for (const token of state.tokens) {
    if (token.type !== 'th_open' && token.type !== 'td_open') continue;
    const align = /^text-align:(left|center|right)$/.exec(String(token.attrGet('style') ?? ''));
    if (!align) continue;
    token.attrs = (token.attrs ?? []).filter(([name]) => name !== 'style');
    token.attrJoin('class', `text-${align[1]}`);
  }
});

// GitLab-flavoured task lists: "- [ ]" and "- [x]" become disabled checkboxes, each labelled by its item's
// text (GitLab's TaskListFilter classes).
markdown.core.ruler.after('inline', 'task_lists', (state) => {
  const tokens = state.tokens;
  for (let i = 2; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.type !== 'inline' || !token.children?.length || tokens[i - 2].type !== 'list_item_open') continue;
    const first = token.children[0];
    const m = /^\[([ xX])\](?:\s|$)/.exec(first.content);
    if (first.type !== 'text' || !m) continue;
    first.content = first.content.slice(m[0].length);
    const open = new state.Token('html_inline', '', 0);
    open.content = `<label class="task-list-item-label"><input type="checkbox" class="task-list-item-checkbox" disabled${m[1] === ' ' ? '' : ' checked'}> `;
    const close = new state.Token('html_inline', '', 0);
    close.content = '</label>';
    token.children.unshift(open);
    token.children.push(close);
    tokens[i - 2].attrJoin('class', 'task-list-item');
  }
});

/** GitLab's heading ids (TableOfContentsFilter): lower case, punctuation removed, spaces as dashes. */
function headingSlug(text: string): string {
  const slug = text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-')
    .replace(/-+/g, '-');
  return /^\d+$/.test(slug) ? `anchor-${slug}` : slug;
}

// Heading anchors as GitLab's: an anchor inside each heading whose id is prefixed `user-content-` (so no
// heading can take an id the page uses) and whose link is the bare slug (the page's script follows it).
markdown.core.ruler.push('heading_anchors', (state) => {
  const seen = new Map<string, number>();
  const tokens = state.tokens;
  for (let i = 0; i < tokens.length - 1; i++) {
    if (tokens[i].type !== 'heading_open') continue;
    const inline = tokens[i + 1];
    const text = (inline.children ?? [])
      .filter((t) => t.type === 'text' || t.type === 'code_inline')
      .map((t) => t.content)
      .join('');
    const slug = headingSlug(text);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    const href = count > 0 ? `${slug}-${count}` : slug;
    const anchor = new state.Token('html_inline', '', 0);
    anchor.content = `<a id="user-content-${escapeHtml(href)}" class="anchor" href="#${escapeHtml(encodeURIComponent(href))}" aria-hidden="true" tabindex="-1"></a>`;
    inline.children?.unshift(anchor);
  }
});

// Footnotes as GitLab's (FootnoteFilter): `fn-1-<n>` ids, with a number of the text's own so that two
// documents on one page do not share them, the reference numbered without brackets.
type FootnoteMeta = { id: number; subId: number };
const footnoteOf = (token: { meta: unknown }) => token.meta as FootnoteMeta;
const sub = (meta: FootnoteMeta) => (meta.subId > 0 ? `:${meta.subId}` : '');
markdown.renderer.rules.footnote_anchor_name = (tokens, idx, _options, env) =>
  `-${footnoteOf(tokens[idx]).id + 1}-${(env as { docId: string }).docId}`;
markdown.renderer.rules.footnote_caption = (tokens, idx) =>
  `${footnoteOf(tokens[idx]).id + 1}${sub(footnoteOf(tokens[idx]))}`;
markdown.renderer.rules.footnote_block_open = () => '<section class="footnotes" data-footnotes>\n<ol>\n';
markdown.renderer.rules.footnote_anchor = (tokens, idx, options, env, self) => {
  const meta = footnoteOf(tokens[idx]);
  const id = `${self.rules.footnote_anchor_name?.(tokens, idx, options, env, self)}${sub(meta)}`;
  return ` <a href="#fnref${id}" class="footnote-backref" aria-label="Back to reference ${meta.id + 1}">\u21a9\uFE0E</a>`;
};

// Images as GitLab shows them: lazily loaded, each inside a link to itself (`no-attachment-icon`, its class).
markdown.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  token.attrSet('alt', self.renderInlineAsText(token.children ?? [], options, env));
  token.attrSet('loading', 'lazy');
  const src = String(token.attrGet('src') ?? '');
  return `<a class="no-attachment-icon" href="${escapeHtml(src)}" target="_blank" rel="noopener noreferrer">${self.renderToken(tokens, idx, options)}</a>`;
};

/** A number for footnote ids from the text (FNV-1a), the same for the same text. */
function docId(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return String((hash >>> 0) % 10000);
}

const HEADINGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];
const OWN_ID = /^(user-content-|fn-|fnref-)/;

/**
 * What GitLab's SanitizationFilter keeps (HTML::Pipeline's allowlist with GitLab's additions: details,
 * summary, abbr, span), and nothing else: no script, no handler, no style, no class or id but the renderer's
 * own, links and images only to http(s), mailto and relative addresses.
 */
const SANITIZE: sanitizeHtml.IOptions = {
  // biome-ignore format: one list, as GitLab's
  allowedTags: [
    ...HEADINGS,
    'br', 'b', 'i', 'strong', 'em', 'a', 'pre', 'code', 'img', 'tt', 'div', 'ins', 'del', 'sup', 'sub', 'p',
    'ol', 'ul', 'table', 'thead', 'tbody', 'tfoot', 'blockquote', 'dl', 'dt', 'dd', 'kbd', 'q', 'samp', 'var',
    'hr', 'ruby', 'rt', 'rp', 'li', 'tr', 'td', 'th', 's', 'strike', 'summary', 'details', 'caption', 'figure',
    'figcaption', 'abbr', 'bdo', 'cite', 'dfn', 'mark', 'small', 'span', 'time', 'wbr', 'section', 'label',
    'input',
  ],
  allowedAttributes: {
    '*': ['id', 'class', 'title', 'lang', 'dir', 'aria-hidden', 'aria-label'],
    a: ['href', 'name', 'target', 'rel', 'tabindex'],
    img: ['src', 'alt', 'width', 'height', 'loading'],
    td: ['colspan', 'rowspan'],
    th: ['colspan', 'rowspan', 'scope'],
    ol: ['start', 'type'],
    details: ['open'],
    time: ['datetime'],
    blockquote: ['cite'],
    q: ['cite'],
    ins: ['cite'],
    del: ['cite'],
    section: ['data-footnotes'],
    input: ['type', 'disabled', 'checked'],
  },
  allowedClasses: {
    '*': ['text-left', 'text-center', 'text-right'],
    a: ['anchor', 'footnote-backref', 'no-attachment-icon'],
    code: ['language-*'],
    span: ['hljs-*', 'hljs', 'language-*'],
    sup: ['footnote-ref'],
    section: ['footnotes'],
    li: ['task-list-item'],
    label: ['task-list-item-label'],
    input: ['task-list-item-checkbox'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowProtocolRelative: false,
  // A checkbox only in a task list's label: any other would be a control without a name.
  exclusiveFilter: (frame) =>
    frame.tag === 'input' && !frame.attribs.class?.split(' ').includes('task-list-item-checkbox'),
  transformTags: {
    // A checkbox can only be the disabled one of a task list, whoever wrote it.
    input: (_tag, attribs) => ({
      tagName: 'input',
      attribs: {
        ...ownId(attribs),
        type: 'checkbox',
        disabled: '',
        ...(attribs.checked !== undefined ? { checked: '' } : {}),
      },
    }),
    a: (_tag, attribs) => linkTag(attribs),
    img: (_tag, attribs) => imageTag(attribs),
    '*': (tagName, attribs) => ({ tagName, attribs: ownId(attribs) }),
  },
};

/** Links to other sites open apart from the page and are not followed for ranking (ExternalLinkFilter). */
function linkTag(attribs: sanitizeHtml.Attributes): sanitizeHtml.Tag {
  const { target: _target, rel: _rel, ...rest } = ownId(attribs);
  return /^https?:/i.test(attribs.href ?? '')
    ? { tagName: 'a', attribs: { ...rest, target: '_blank', rel: 'nofollow noreferrer noopener' } }
    : { tagName: 'a', attribs: rest };
}

const imageTag = (attribs: sanitizeHtml.Attributes): sanitizeHtml.Tag => ({
  tagName: 'img',
  attribs: { ...ownId(attribs), loading: 'lazy' },
});

/** Only the renderer's own ids, namespaced, so no user content takes an id the page or its script uses. */
function ownId(attribs: sanitizeHtml.Attributes): sanitizeHtml.Attributes {
  if (attribs.id === undefined || OWN_ID.test(attribs.id)) return attribs;
  const { id: _id, ...rest } = attribs;
  return rest;
}

/**
 * A relative address (`img.png`, `../docs/a.md`) resolved against `base`, as a path on this site; any other
 * is left as it is.
 */
function resolved(url: string, base: string): string {
  if (url === '' || /^([a-z][a-z0-9+.-]*:|[/#?\\])/i.test(url)) return url;
  try {
    const to = new URL(url, base);
    return to.pathname + to.search + to.hash;
  } catch {
    return url;
  }
}

/** The sanitizer's options for a repository file, its relative links and images led into the repository. */
function withRelativeLinks(links: RelativeLinks): sanitizeHtml.IOptions {
  return {
    ...SANITIZE,
    transformTags: {
      ...SANITIZE.transformTags,
      // An image's link (the renderer's `no-attachment-icon`) leads to the image itself, as its source does.
      a: (_tag, attribs) => {
        if (attribs.href === undefined) return linkTag(attribs);
        const base = attribs.class?.split(' ').includes('no-attachment-icon') ? links.raw : links.blob;
        return linkTag({ ...attribs, href: resolved(attribs.href, base) });
      },
      img: (_tag, attribs) =>
        imageTag(attribs.src === undefined ? attribs : { ...attribs, src: resolved(attribs.src, links.raw) }),
    },
  };
}

/** Rendered Markdown cut down to the allowed subset. */
const safeHtml = (rendered: string, links?: RelativeLinks) =>
  sanitizeHtml(rendered, links ? withRelativeLinks(links) : SANITIZE);

/**
 * Code as numbered lines, as GitLab's blob viewer: each line a block with the id `<prefix><n>` (`L10`) and
 * a link to itself, the line's number drawn by the stylesheet (so copying the text leaves it out). `html`
 * is escaped text with highlight.js's spans, which may run over several lines: each is closed at a line's
 * end and opened again on the next, so every line stands alone.
 */
function numberedLines(html: string, text: string, prefix: string): { html: string; lines: number } {
  const out: string[] = [];
  const open: string[] = [];
  let line = '';
  const end = (last: boolean) => {
    const id = `${prefix}${out.length + 1}`;
    out.push(
      `<span class="line" id="${id}"><a class="ln" href="#${id}" aria-hidden="true" tabindex="-1"></a>${line}${'</span>'.repeat(open.length)}${last ? '' : '\n'}</span>`,
    );
    line = open.join('');
  };
  for (const [token] of html.matchAll(/<span[^>]*>|<\/span>|\n|[^<\n]+/g)) {
    if (token === '\n') end(false);
    else {
      if (token === '</span>') open.pop();
      else if (token.startsWith('<span')) open.push(token);
      line += token;
    }
  }
  // Text that ends with a line break has no line after it, as in GitLab; one that does not ends on its last.
  if (text.length > 0 && !text.endsWith('\n')) end(true);
  return { html: out.join(''), lines: out.length };
}

/** Escaped text as numbered lines, or just escaped when numbering would make it over MAX_RENDERED_HTML. */
function plainLines(text: string, prefix: string): RenderResult {
  const escaped = escapeHtml(text);
  const numbered = numberedLines(escaped, text, prefix);
  return numbered.html.length > MAX_RENDERED_HTML ? { html: escaped, language: null } : { ...numbered, language: null };
}

function highlighted(filePath: string, text: string, prefix: string): RenderResult {
  const language = languageOf(filePath);
  if (!language) return plainLines(text, prefix);
  const html = hljs.highlight(text, { language, ignoreIllegals: true }).value;
  if (html.length > MAX_RENDERED_HTML) return { html: escapeHtml(text), language: null };
  const numbered = numberedLines(html, text, prefix);
  return numbered.html.length > MAX_RENDERED_HTML ? plainLines(text, prefix) : { ...numbered, language };
}

/**
 * Markdown, or its text escaped when the rendering comes out over MAX_RENDERED_HTML (a few kilobytes of
 * references to a long link can make hundreds of megabytes). `sourceHtml`: the text escaped, for the page's
 * Source panel, in the same task.
 */
function markdownOf(text: string, links?: RelativeLinks): RenderResult {
  const sourceHtml = escapeHtml(text);
  const html = markdown.render(text, { docId: docId(text) });
  return html.length > MAX_RENDERED_HTML
    ? { html: `<pre class="plain">${sourceHtml}</pre>`, language: null, sourceHtml }
    : { html: safeHtml(html, links), language: null, sourceHtml };
}

/** Line ids are made of this prefix and a number; it is placed in the page as it is. */
const LINE_PREFIX = /^[A-Za-z][\w-]*$/;

export default function render(task: RenderTask): RenderResult {
  switch (task.op) {
    case 'code':
      if (!LINE_PREFIX.test(task.linePrefix)) throw new Error(`bad line prefix ${task.linePrefix}`);
      return highlighted(task.filePath, task.text, task.linePrefix);
    case 'markdown':
      return markdownOf(task.text, task.links);
    case 'plain':
      if (task.linePrefix === undefined) return { html: escapeHtml(task.text), language: null };
      if (!LINE_PREFIX.test(task.linePrefix)) throw new Error(`bad line prefix ${task.linePrefix}`);
      return plainLines(task.text, task.linePrefix);
  }
}
