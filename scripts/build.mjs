#!/usr/bin/env node
// `npm run build` (and the `prepare` lifecycle, so `npm ci` and `npm pack` build too): src/ compiled to
// dist/ by tsc, then every file of src/ that is not TypeScript (git hooks, templates, the stylesheet)
// copied beside it, because the code finds them next to itself.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dist = path.join(root, 'dist');

fs.rmSync(dist, { recursive: true, force: true });
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
  cwd: root,
  stdio: 'inherit',
});
if (result.status !== 0) process.exit(result.status ?? 1);
// cpSync keeps the mode, so hooks/pre-receive stays executable.
fs.cpSync(path.join(root, 'src'), dist, {
  recursive: true,
  filter: (from) => fs.statSync(from).isDirectory() || !from.endsWith('.ts'),
});
