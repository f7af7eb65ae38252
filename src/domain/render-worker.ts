// The renderers, run in a worker thread of domain/rendering.ts's pool: highlighting and Markdown take time
// that grows with their input (and for some inputs, far faster than it), so they never run on the event
// loop. Each task is one pure function of its input; a task over its time budget is abandoned and this
// thread is terminated, so nothing here needs to stop itself.
import os from 'node:os';
import hljs from 'highlight.js';
import MarkdownIt from 'markdown-it';
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
  | { op: 'code'; filePath: string; text: string }
  | { op: 'markdown'; text: string }
  | { op: 'plain'; text: string };

export type RenderResult = { html: string; language: string | null; sourceHtml?: string };

/** Highlighted output beyond this is shown plain: markup per token can make a page many times the file. */
const MAX_RENDERED_HTML = 8 * 1024 * 1024;

const markdown = new MarkdownIt({
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

function highlighted(filePath: string, text: string): RenderResult {
  const language = languageOf(filePath);
  if (!language) return { html: escapeHtml(text), language: null };
  const html = hljs.highlight(text, { language, ignoreIllegals: true }).value;
  return html.length > MAX_RENDERED_HTML ? { html: escapeHtml(text), language: null } : { html, language };
}

/**
 * Markdown, or its text escaped when the rendering comes out over MAX_RENDERED_HTML (a few kilobytes of
 * references to a long link can make hundreds of megabytes). `sourceHtml`: the text escaped, for the page's
 * Source panel, in the same task.
 */
function markdownOf(text: string): RenderResult {
  const sourceHtml = escapeHtml(text);
  const html = markdown.render(text);
  return html.length > MAX_RENDERED_HTML
    ? { html: `<pre class="plain">${sourceHtml}</pre>`, language: null, sourceHtml }
    : { html, language: null, sourceHtml };
}

export default function render(task: RenderTask): RenderResult {
  switch (task.op) {
    case 'code':
      return highlighted(task.filePath, task.text);
    case 'markdown':
      return markdownOf(task.text);
    case 'plain':
      return { html: escapeHtml(task.text), language: null };
  }
}
