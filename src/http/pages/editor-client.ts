// The code editor of the snippet forms, run in the browser (bundled by scripts/editor-bundle.mjs, served by
// editor.ts): CodeMirror 6 over each file's `<textarea class="code-input">`. The textarea stays in the form,
// hidden, and holds what the editor holds, so the form posts the same fields as without JavaScript, where
// the textarea is the editor. The language follows the file name beside it (`input.file-name` in the same
// `fieldset.snippet-file`); colours are the page's own (app.css), light or dark as the system prefers.
import { autocompletion } from '@codemirror/autocomplete';
import { HighlightStyle, type StreamParser, StreamLanguage, syntaxHighlighting } from '@codemirror/language';
import { Compartment, type Extension } from '@codemirror/state';
import { tags as t } from '@lezer/highlight';
import { basicSetup, EditorView } from 'codemirror';

const legacy = (parser: StreamParser<unknown>) => StreamLanguage.define(parser);

// Each language is a chunk of its own, fetched when a file name first asks for it: all of them would
// triple the script every form page loads.
const LANGUAGES: Record<string, () => Promise<Extension>> = {
  js: () => import('@codemirror/lang-javascript').then((m) => m.javascript({ jsx: true })),
  ts: () => import('@codemirror/lang-javascript').then((m) => m.javascript({ typescript: true })),
  tsx: () => import('@codemirror/lang-javascript').then((m) => m.javascript({ jsx: true, typescript: true })),
  json: () => import('@codemirror/lang-json').then((m) => m.json()),
  py: () => import('@codemirror/lang-python').then((m) => m.python()),
  md: () => import('@codemirror/lang-markdown').then((m) => m.markdown()),
  yaml: () => import('@codemirror/lang-yaml').then((m) => m.yaml()),
  html: () => import('@codemirror/lang-html').then((m) => m.html()),
  css: () => import('@codemirror/lang-css').then((m) => m.css()),
  sql: () => import('@codemirror/lang-sql').then((m) => m.sql()),
  xml: () => import('@codemirror/lang-xml').then((m) => m.xml()),
  rs: () => import('@codemirror/lang-rust').then((m) => m.rust()),
  go: () => import('@codemirror/lang-go').then((m) => m.go()),
  java: () => import('@codemirror/lang-java').then((m) => m.java()),
  cpp: () => import('@codemirror/lang-cpp').then((m) => m.cpp()),
  php: () => import('@codemirror/lang-php').then((m) => m.php()),
  rb: () => import('@codemirror/legacy-modes/mode/ruby').then((m) => legacy(m.ruby)),
  sh: () => import('@codemirror/legacy-modes/mode/shell').then((m) => legacy(m.shell)),
  dockerfile: () => import('@codemirror/legacy-modes/mode/dockerfile').then((m) => legacy(m.dockerFile)),
  toml: () => import('@codemirror/legacy-modes/mode/toml').then((m) => legacy(m.toml)),
};

/** Other names of a language's key: extensions, and whole file names without one. */
const ALIASES: Record<string, string> = {
  mjs: 'js',
  cjs: 'js',
  jsx: 'js',
  mts: 'ts',
  cts: 'ts',
  markdown: 'md',
  yml: 'yaml',
  htm: 'html',
  svg: 'xml',
  c: 'cpp',
  h: 'cpp',
  cc: 'cpp',
  cxx: 'cpp',
  hpp: 'cpp',
  gemfile: 'rb',
  rakefile: 'rb',
  bash: 'sh',
  zsh: 'sh',
};

/** The language key for a file name (`Dockerfile`, `a/b.tsx`), or '' for plain text. */
function languageKey(fileName: string): string {
  const base = fileName.split('/').pop()!.toLowerCase();
  const dot = base.lastIndexOf('.');
  const key = dot > 0 ? base.slice(dot + 1) : base;
  const known = ALIASES[key] ?? key;
  return Object.hasOwn(LANGUAGES, known) ? known : '';
}

// The page's palette (app.css custom properties), which already changes with the colour scheme and is the
// one the server's highlighting uses; so are its contrasts.
const pageHighlight = HighlightStyle.define([
  { tag: [t.keyword, t.modifier, t.operatorKeyword, t.self], color: 'var(--kw)' },
  { tag: [t.string, t.special(t.string), t.regexp, t.character, t.inserted], color: 'var(--str)' },
  { tag: [t.number, t.bool, t.null, t.atom, t.constant(t.name)], color: 'var(--num)' },
  { tag: [t.comment, t.meta], color: 'var(--com)', fontStyle: 'italic' },
  { tag: [t.function(t.variableName), t.function(t.propertyName), t.heading], color: 'var(--fn)' },
  { tag: [t.typeName, t.className, t.namespace, t.tagName, t.attributeName], color: 'var(--ty)' },
  { tag: t.link, color: 'var(--link)', textDecoration: 'underline' },
  { tag: t.strong, fontWeight: 'bold' },
  { tag: t.emphasis, fontStyle: 'italic' },
]);

const pageTheme = EditorView.theme({
  '&': {
    color: 'var(--fg)',
    backgroundColor: 'var(--bg)',
    border: '1px solid var(--line)',
    borderRadius: '4px',
    maxHeight: '70vh',
  },
  '&.cm-focused': { outline: '3px solid var(--link)', outlineOffset: '2px' },
  '.cm-scroller': {
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace',
    fontSize: '14px',
    lineHeight: '1.45',
  },
  '.cm-content, .cm-gutter': { minHeight: '10em' },
  '.cm-content': { caretColor: 'var(--fg)' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--fg)' },
  '.cm-gutters': { backgroundColor: 'var(--panel)', color: 'var(--muted)', borderRight: '1px solid var(--line)' },
  '.cm-activeLine': { backgroundColor: 'var(--panel)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--line)', color: 'var(--fg)' },
});

// CodeMirror's own parts (selection, search panel) pick their light or dark colours by this.
const darkScheme = window.matchMedia('(prefers-color-scheme: dark)');
const schemeOf = () => EditorView.darkTheme.of(darkScheme.matches);
const schemes = new Set<{ view: EditorView; scheme: Compartment }>();
darkScheme.addEventListener('change', () => {
  for (const { view, scheme } of schemes) view.dispatch({ effects: scheme.reconfigure(schemeOf()) });
});

/** The editable element's name and description are the textarea's, so its label still names it. */
function accessibility(textarea: HTMLTextAreaElement): Record<string, string> {
  const attributes: Record<string, string> = {};
  const labels = [...(textarea.labels ?? [])];
  for (const label of labels) label.id ||= `${textarea.id || textarea.name}-label`;
  const labelledBy = [textarea.getAttribute('aria-labelledby'), ...labels.map((l) => l.id)].filter(Boolean);
  if (labelledBy.length) attributes['aria-labelledby'] = labelledBy.join(' ');
  for (const name of ['aria-label', 'aria-describedby', 'aria-invalid']) {
    const value = textarea.getAttribute(name);
    if (value !== null) attributes[name] = value;
  }
  if (textarea.required) attributes['aria-required'] = 'true';
  // Focusable by its tabindex too, as a checker sees it: a file taller than the editor scrolls inside it, and a
  // scrolling region needs something focusable (axe's scrollable-region-focusable).
  attributes.tabindex = '0';
  return attributes;
}

// CodeMirror writes its styles into a <style> element, which the page's policy allows with the nonce of
// this script (layout.ts); a script can read its nonce, markup injected into the page cannot.
const nonce = document.querySelector<HTMLScriptElement>('script[src$="/editor/editor.js"]')?.nonce ?? '';

function upgrade(textarea: HTMLTextAreaElement): void {
  const nameInput = textarea.closest('fieldset.snippet-file')?.querySelector<HTMLInputElement>('input.file-name');
  const language = new Compartment();
  const scheme = new Compartment();
  let key = '';
  const view = new EditorView({
    doc: textarea.value,
    extensions: [
      basicSetup,
      // Words offered as one types would make Enter take one instead of ending the line: asked for only.
      autocompletion({ activateOnTyping: false }),
      language.of([]),
      scheme.of(schemeOf()),
      EditorView.cspNonce.of(nonce),
      pageTheme,
      // A long line wraps rather than scroll: one line of a minified file made a phone's form 84,000 px wide.
      EditorView.lineWrapping,
      syntaxHighlighting(pageHighlight),
      EditorView.contentAttributes.of(accessibility(textarea)),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) textarea.value = update.state.doc.toString();
      }),
    ],
  });
  schemes.add({ view, scheme });
  textarea.after(view.dom);
  textarea.style.display = 'none';
  // A hidden required field the browser cannot point at would block the form without a word: the server
  // says what is missing instead.
  textarea.required = false;
  for (const label of textarea.labels ?? [])
    label.addEventListener('click', (event) => {
      event.preventDefault();
      view.focus();
    });
  const chooseLanguage = async () => {
    const chosen = languageKey(nameInput?.value ?? '');
    if (chosen === key) return;
    key = chosen;
    const extension = chosen ? await LANGUAGES[chosen]() : [];
    // The name may have changed again while its language loaded.
    if (key === chosen) view.dispatch({ effects: language.reconfigure(extension) });
  };
  nameInput?.addEventListener('input', chooseLanguage);
  void chooseLanguage();
}

for (const textarea of document.querySelectorAll<HTMLTextAreaElement>('textarea.code-input')) upgrade(textarea);
