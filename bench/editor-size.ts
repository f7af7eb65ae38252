// The code editor's weight (issue 30): what a form page fetches at once (editor.js and the chunks it imports
// statically) and the whole bundle (every language chunk), minified and as sent (brotli at the server's
// quality 4, gzip). `npx tsx bench/editor-size.ts`
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import zlib from 'node:zlib';
import { build } from 'esbuild';

const options = path.join(import.meta.dirname, '..', 'scripts', 'editor-bundle.mjs');
const { editorBundleOptions } = await import(pathToFileURL(options).href);
const result = await build(editorBundleOptions({ write: false, outdir: '/editor' }));
const files = new Map(result.outputFiles!.map((f) => [path.basename(f.path), Buffer.from(f.contents)]));

const atOnce = new Set<string>();
const reach = (name: string) => {
  if (atOnce.has(name)) return;
  atOnce.add(name);
  for (const m of files
    .get(name)!
    .toString()
    .matchAll(/from"\.\/(chunk-[A-Z0-9]+\.js)"/g))
    reach(m[1]);
};
reach('editor.js');

const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
const weigh = (names: Iterable<string>) => {
  let raw = 0;
  let br = 0;
  let gz = 0;
  for (const name of names) {
    const body = files.get(name)!;
    raw += body.length;
    br += zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }).length;
    gz += zlib.gzipSync(body).length;
  }
  return `${kb(raw)} minified, ${kb(br)} brotli, ${kb(gz)} gzip`;
};
console.log(`at once (${atOnce.size} files): ${weigh(atOnce)}`);
console.log(`whole bundle (${files.size} files): ${weigh(files.keys())}`);
