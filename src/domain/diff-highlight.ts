// A file's unified diff as the rows of a page's diff table, highlighted: run in a worker thread of the render
// pool (render-worker.ts re-exports it; domain/rendering.ts#diffLines runs it within the time budget), since a
// diff may have 50,000 lines and building their markup would hold the event loop. Each side of the change
// (the old lines and the new ones, context in both) is highlighted as one text, so a string or comment
// spanning lines keeps its colours, then cut back into lines.
import hljs from 'highlight.js';
import { escapeHtml } from './escape.ts';
import { languageOf } from './languages.ts';

export interface DiffTask {
  filePath: string;
  /** The patch from its first `@@` line on (storage/git/history.ts#FilePatch.hunks). */
  hunks: string;
  highlight: boolean;
}

interface DiffLine {
  type: 'hunk' | 'context' | 'added' | 'deleted' | 'note';
  /** Line numbers in the old and new file (null on the side a line is not in). */
  oldLine: number | null;
  newLine: number | null;
  /** The line's text as safe HTML, without its leading marker. */
  html: string;
}

export interface DiffResult {
  language: string | null;
  /**
   * One `<tr>` a line, its class the line's type: a hunk header or a note in one cell after two empty ones;
   * any other line its number before, its number after (either empty), and its text after a marker, in
   * `<ins>` when added and `<del>` when deleted. Null when even unhighlighted they would be over MAX_ROWS_HTML.
   */
  rows: string | null;
}

/**
 * A file's rows at most, highlighted or else plain: markup per token made a patch of 190 KiB of `<a>` 4 MB of
 * rows, and a page of ten such files held the event loop 100 ms a view and 1.1 s for eight views at once.
 */
export const MAX_ROWS_HTML = 2 * 1024 * 1024;

const MARKER = { added: '+', deleted: '-', context: ' ' };

function row(line: DiffLine): string {
  if (line.type === 'hunk' || line.type === 'note')
    return `<tr class="${line.type}"><td colspan="2"></td><td class="code">${line.html}</td></tr>`;
  const code =
    line.type === 'added' ? `<ins>${line.html}</ins>` : line.type === 'deleted' ? `<del>${line.html}</del>` : line.html;
  return `<tr class="${line.type}"><td class="num">${line.oldLine ?? ''}</td><td class="num">${line.newLine ?? ''}</td><td class="code"><span class="marker" aria-hidden="true">${MARKER[line.type]}</span>${code}</td></tr>`;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function highlightDiff(task: DiffTask): DiffResult {
  const text = task.hunks.endsWith('\n') ? task.hunks.slice(0, -1) : task.hunks;
  const lines: DiffLine[] = [];
  const oldSide: string[] = [];
  const newSide: string[] = [];
  // Where each line's text is in the sides: [old index, new index].
  const at: [number, number][] = [];
  let oldLine = 0;
  let newLine = 0;
  for (const raw of text.split('\n')) {
    const marker = raw[0];
    const body = raw.slice(1);
    const hunk = marker === '@' ? HUNK.exec(raw) : null;
    if (hunk) {
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      lines.push({ type: 'hunk', oldLine: null, newLine: null, html: escapeHtml(raw) });
      at.push([-1, -1]);
    } else if (marker === '+') {
      lines.push({ type: 'added', oldLine: null, newLine: newLine++, html: '' });
      at.push([-1, newSide.push(body) - 1]);
    } else if (marker === '-') {
      lines.push({ type: 'deleted', oldLine: oldLine++, newLine: null, html: '' });
      at.push([oldSide.push(body) - 1, -1]);
    } else if (marker === ' ') {
      lines.push({ type: 'context', oldLine: oldLine++, newLine: newLine++, html: '' });
      at.push([oldSide.push(body) - 1, newSide.push(body) - 1]);
    } else {
      // "\ No newline at end of file", and anything git may add.
      lines.push({ type: 'note', oldLine: null, newLine: null, html: escapeHtml(raw.replace(/^\\ ?/, '')) });
      at.push([-1, -1]);
    }
  }
  const rowsIn = (language: string | null) => {
    const oldHtml = sideHtml(oldSide, language);
    const newHtml = sideHtml(newSide, language);
    lines.forEach((line, i) => {
      const [o, n] = at[i];
      if (n !== -1) line.html = newHtml[n];
      else if (o !== -1) line.html = oldHtml[o];
    });
    return lines.map(row).join('');
  };
  const language = task.highlight ? languageOf(task.filePath) : null;
  const rows = rowsIn(language);
  if (rows.length <= MAX_ROWS_HTML) return { language, rows };
  const plain = language ? rowsIn(null) : rows;
  return { language: null, rows: plain.length <= MAX_ROWS_HTML ? plain : null };
}

/** Each line of one side as HTML: highlighted as one text, then cut at its line ends. */
function sideHtml(side: string[], language: string | null): string[] {
  if (!language || !side.length) return side.map(escapeHtml);
  const html = hljs.highlight(side.join('\n'), { language, ignoreIllegals: true }).value;
  const out = splitLines(html);
  return out.length === side.length ? out : side.map(escapeHtml);
}

/**
 * highlight.js's HTML cut into lines, each whole: the spans open at a line's end are closed there and opened
 * again on the next line. Its output holds only text (escaped), `<span class="…">` and `</span>`.
 */
function splitLines(html: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  let line = '';
  let last = 0;
  for (const m of html.matchAll(/<span[^>]*>|<\/span>|\n/g)) {
    line += html.slice(last, m.index);
    last = m.index + m[0].length;
    if (m[0] === '\n') {
      lines.push(line + '</span>'.repeat(open.length));
      line = open.join('');
    } else {
      line += m[0];
      if (m[0] === '</span>') open.pop();
      else open.push(m[0]);
    }
  }
  lines.push(line + html.slice(last));
  return lines;
}
