// The code editor's bundle for browsers (src/http/pages/editor-client.ts with CodeMirror): one definition
// for `npm run build` (scripts/build.mjs writes it to dist/http/views/editor/) and for the server run from
// its sources (src/http/pages/editor.ts bundles it in memory), so both serve the same script.
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/** esbuild's options for the bundle: editor.js and the chunks it imports; `extra` says where they go. */
export const editorBundleOptions = (extra) => ({
  entryPoints: { editor: path.join(root, 'src/http/pages/editor-client.ts') },
  bundle: true,
  format: 'esm',
  splitting: true,
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  platform: 'browser',
  // Browsers with constructable stylesheets, which CodeMirror's styles need under the pages' policy (no
  // inline <style>).
  target: ['chrome93', 'firefox101', 'safari16.4'],
  minify: true,
  logLevel: 'warning',
  ...extra,
});
