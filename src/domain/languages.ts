// Which highlight.js language a file's name says: its own module so that the render worker's tasks
// (render-worker.ts, diff-highlight.ts) share one rule.
import path from 'node:path';
import hljs from 'highlight.js';

const NAMED_LANGUAGES: Record<string, string> = { dockerfile: 'dockerfile', makefile: 'makefile', gemfile: 'ruby' };

export function languageOf(filePath: string): string | null {
  const name = path.basename(filePath).toLowerCase();
  if (NAMED_LANGUAGES[name]) return NAMED_LANGUAGES[name];
  const ext = path.extname(name).slice(1);
  return ext && hljs.getLanguage(ext) ? ext : null;
}
