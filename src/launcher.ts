// The compiled command's entry (dist/cli.js, built from this file): runs the bundled CLI, dist/cli.cjs,
// through V8's code cache. Why: Node 20 keeps no compiled code between runs (module.enableCompileCache came
// with Node 22), and compiling the bundle is about 30 ms of every start, a sixth of `snippetd serve`'s; with
// the cache a previous run left, V8 skips it. The cache sits beside the bundle, named by the bundle's
// content and Node's version (V8 itself checks only the source's length), and is written by the first run
// that finds none, when it may write there. Without one, the bundle compiles as it would anyway.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

const bundle = path.join(import.meta.dirname, 'cli.cjs');
const source = fs.readFileSync(bundle, 'utf8');
const digest = crypto.createHash('sha1').update(source).digest('hex').slice(0, 16);
const cacheFile = path.join(import.meta.dirname, `cli-${digest}-${process.version}-${process.arch}.cache`);

let cachedData: Buffer | undefined;
try {
  cachedData = fs.readFileSync(cacheFile);
} catch {}
// CommonJS's own wrapper, so the bundle runs as Node would run it as a module.
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: bundle,
  cachedData,
});
const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, path.dirname(bundle));

if (!cachedData || script.cachedDataRejected) {
  try {
    // Written whole under another name, then renamed: a start running beside this one reads all or nothing.
    const partial = `${cacheFile}.${process.pid}`;
    fs.writeFileSync(partial, script.createCachedData());
    fs.renameSync(partial, cacheFile);
  } catch {}
}
