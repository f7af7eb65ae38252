// The files that ship beside the code (templates-data/, http/views/, storage/git/hooks/), found below this
// file's directory: src/ when run from source, dist/ when built, where scripts/build.mjs copies them in the
// same layout. Every lookup goes through here because the build bundles the code into dist/cli.js and
// dist/index.js, where a module's own import.meta.url no longer says where its source file was.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.dirname(fileURLToPath(import.meta.url));

/** A shipped file or directory, by its path below src/ (`shippedFile('http', 'views', 'app.css')`). */
export const shippedFile = (...parts: string[]) => path.join(ROOT, ...parts);

/** require() for the data files of installed packages (licenses, gitignores); found from either layout. */
export const requireFromHere = createRequire(import.meta.url);
