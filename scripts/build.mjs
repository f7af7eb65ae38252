#!/usr/bin/env node
// `npm run build` (and the `prepare` lifecycle, so `npm ci` and `npm pack` build too):
//  1. tsc type-checks src/ and writes the type declarations (dist/index.d.ts and what it names);
//  2. esbuild bundles each entry (dist/cli.cjs for the command, started by dist/cli.js; dist/index.js for
//     `import 'snippetd'`; dist/domain/render-worker.js for the render pool's threads) with the packages
//     it uses. Node loads one file instead of about a thousand: a start takes a third of the time;
//  3. the code editor of the snippet forms is bundled for browsers (scripts/editor-bundle.mjs);
//  4. every file of src/ that is not TypeScript (git hooks, templates, the stylesheet) is copied beside them,
//     in the same layout, where src/shipped-files.ts finds them.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { editorBundleOptions } from './editor-bundle.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dist = path.join(root, 'dist');

fs.rmSync(dist, { recursive: true, force: true });
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
  cwd: root,
  stdio: 'inherit',
});
if (result.status !== 0) process.exit(result.status ?? 1);

const external = [
  // Native code.
  'better-sqlite3',
  // Loaded when first needed (src/storage/db/database.ts, src/domain/seed.ts).
  'pg',
  'yaml',
  // Loaded on first use (a page with code or Markdown), not at start. piscina finds its own worker script
  // beside its files, so it cannot be bundled.
  'highlight.js',
  'markdown-it',
  'markdown-it-footnote',
  // CommonJS that requires Node's modules (through postcss), which an ES module bundle cannot do.
  'sanitize-html',
  'piscina',
  // Data files read from the installed packages.
  'gitignr',
  '@rexxars/choosealicense-list',
  // Loaded only when run from the sources, to bundle the code editor (src/http/pages/editor.ts).
  'esbuild',
  // Loaded only for a route that declares a JSON schema, which none of ours does (src/http/schema-compilers.ts).
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
];
// Fastify and prom-client (its push gateway client) load Node's https and http2 modules as they are loaded,
// for servers and clients snippetd never makes (it serves plain HTTP/1.1; TLS ends at the proxy in front):
// 8 ms of every start. In the bundle, these two modules load when something first uses them.
const httpsOnFirstUse = {
  name: 'https-on-first-use',
  setup(build) {
    build.onResolve({ filter: /^(node:)?(https|http2)$/ }, (args) => ({
      path: args.path.replace(/^(node:)?/, 'node:'),
      namespace: 'on-first-use',
    }));
    build.onLoad({ filter: /.*/, namespace: 'on-first-use' }, (args) => ({
      contents: `let loaded; module.exports = new Proxy({}, { get: (_, key) => (loaded ??= require(${JSON.stringify(args.path)}))[key] });`,
      loader: 'js',
    }));
  },
};

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Without blanks and comments the bundle is a third smaller and compiles faster at every start (6 ms of
  // 40). Names are kept (no identifier minification), so a stack trace still names each function.
  minifyWhitespace: true,
  logLevel: 'warning',
  external,
  plugins: [httpsOnFirstUse],
};

// The library, for `import 'snippetd'`.
await build({
  ...common,
  entryPoints: { index: path.join(root, 'src/index.ts') },
  outdir: dist,
  format: 'esm',
  // Bundled CommonJS packages call require() for Node's own modules.
  banner: {
    js: "import { createRequire as snippetdRequire } from 'node:module';\nconst require = snippetdRequire(import.meta.url);",
  },
});
// The command: dist/cli.js (src/launcher.ts) runs dist/cli.cjs through V8's code cache, which Node 20 offers
// for scripts only, hence CommonJS. import.meta.url (src/shipped-files.ts) becomes the bundle's own URL.
await build({
  ...common,
  entryPoints: { cli: path.join(root, 'src/launcher.ts') },
  outdir: dist,
  format: 'esm',
});
await build({
  ...common,
  entryPoints: [path.join(root, 'src/cli.ts')],
  outfile: path.join(dist, 'cli.cjs'),
  format: 'cjs',
  // import() of the packages loaded on first use becomes require(): a script run by node:vm has no loader
  // for import().
  supported: { 'dynamic-import': false },
  define: { 'import.meta.url': 'snippetdBundleUrl' },
  banner: { js: "const snippetdBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
});

// The render worker: piscina starts this file in each of its threads (src/domain/rendering.ts looks for it
// at dist/domain/render-worker.js).
await build({
  ...common,
  entryPoints: { 'domain/render-worker': path.join(root, 'src/domain/render-worker.ts') },
  outdir: dist,
  format: 'esm',
});
// The body parser's worker (src/http/plugins/body.ts looks for it at dist/http/body-parse-worker.js).
await build({
  ...common,
  entryPoints: { 'http/body-parse-worker': path.join(root, 'src/http/body-parse-worker.ts') },
  outdir: dist,
  format: 'esm',
});

// The SQLite reader's worker (src/storage/db/sqlite-reader.ts looks for it at dist/storage/db/sqlite-read-worker.js).
await build({
  ...common,
  entryPoints: { 'storage/db/sqlite-read-worker': path.join(root, 'src/storage/db/sqlite-read-worker.ts') },
  outdir: dist,
  format: 'esm',
});

// SQLite's background thread: search indexing and checkpoints (src/storage/db/sqlite-background.ts looks for it
// at dist/storage/db/sqlite-background-worker.js).
await build({
  ...common,
  entryPoints: { 'storage/db/sqlite-background-worker': path.join(root, 'src/storage/db/sqlite-background-worker.ts') },
  outdir: dist,
  format: 'esm',
});

// The code editor, for browsers: dist/http/views/editor/, served by src/http/pages/editor.ts.
await build(editorBundleOptions({ outdir: path.join(dist, 'http/views/editor') }));

// cpSync keeps the mode, so hooks/pre-receive stays executable.
fs.cpSync(path.join(root, 'src'), dist, {
  recursive: true,
  filter: (from) => fs.statSync(from).isDirectory() || !from.endsWith('.ts'),
});
