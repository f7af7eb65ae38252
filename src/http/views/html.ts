// HTML built from tagged templates: every interpolated value is escaped unless it is already Html (made
// by this tag or by a renderer that escapes or sanitizes: highlight.js, markdown-it's output through
// sanitize-html with GitLab's allowlist, domain/render-worker.ts).
// So user content can only reach a page escaped or sanitized.

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

import { escapeHtml } from '../../domain/escape.ts';

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** Markup that an escaping renderer produced: the one way to mark a string as safe. */
export const trusted = (markup: string) => new Html(markup);
