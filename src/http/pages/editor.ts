// The code editor of the snippet forms (editor-client.ts: CodeMirror 6 over each file's textarea), for the
// pages that include `editorScriptTag`: its script tag and the route that serves the script and the chunks
// it imports (a language is one, fetched when a file name asks for it).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { html, type Html } from '../views/html.ts';
import { shippedFile } from '../../shipped-files.ts';
import { sendCompressed } from '../plugins/compression.ts';
import { routeNotFound } from '../../domain/failure.ts';
import { sitePath } from '../urls.ts';

const EDITOR_PATH = '/-/snippetd/editor';
export const EDITOR_ROUTE = `${EDITOR_PATH}/:file`;

/**
 * The editor's script for a page sent with `nonce`; sendPage puts it in a page sent with `{ editor: true }`,
 * whose policy then allows the nonce for styles too. A module script: the chunks it imports are fetched
 * with its nonce. Without JavaScript the textareas stay as they are.
 */
export const editorScriptTag = (request: FastifyRequest, nonce: string): Html =>
  html`<script type="module" nonce="${nonce}" src="${sitePath(request, EDITOR_PATH)}/editor.js"></script>`;

interface EditorFile {
  body: Buffer;
  etag: string;
}

// `npm run build` writes the bundle to dist/http/views/editor/ (scripts/build.mjs), so the installed package
// serves those files and bundles nothing. Run from the sources (npm run dev, and the tests, which run src/
// through tsx) there is no such directory: the bundle is made here in memory on first request, with
// esbuild and CodeMirror from the devDependencies every checkout installs, from the same options as the
// build (scripts/editor-bundle.mjs). So the tests serve exactly what the build ships, and neither esbuild
// nor CodeMirror has to be a dependency of the installed server.
let files: Promise<Map<string, EditorFile>> | undefined;

async function readBundle(): Promise<Map<string, Buffer>> {
  const built = shippedFile('http', 'views', 'editor');
  if (fs.existsSync(built))
    return new Map(fs.readdirSync(built).map((name) => [name, fs.readFileSync(path.join(built, name))]));
  const options = shippedFile('..', 'scripts', 'editor-bundle.mjs');
  const [{ build }, { editorBundleOptions }] = await Promise.all([
    import('esbuild'),
    import(pathToFileURL(options).href),
  ]);
  const result = await build(editorBundleOptions({ write: false, outdir: '/editor' }));
  return new Map(result.outputFiles!.map((file) => [path.basename(file.path), Buffer.from(file.contents)]));
}

function editorFiles(): Promise<Map<string, EditorFile>> {
  files ??= readBundle().then(
    (bundle) =>
      new Map(
        [...bundle].map(([name, body]) => [
          name,
          { body, etag: `"${crypto.createHash('sha256').update(body).digest('hex').slice(0, 32)}"` },
        ]),
      ),
    (error) => {
      files = undefined;
      throw error;
    },
  );
  return files;
}

/**
 * GET /-/snippetd/editor/:file — editor.js revalidated on every use (a 304 by its ETag), so a browser never runs
 * an editor.js from before an upgrade that imports chunks the new bundle no longer has; the chunks, named by
 * their hash, kept a year.
 */
export async function serveEditorFile(request: FastifyRequest<{ Params: { file: string } }>, reply: FastifyReply) {
  const { file: name } = request.params;
  const file = (await editorFiles()).get(name);
  if (!file) throw routeNotFound();
  reply
    .header('Content-Type', 'text/javascript; charset=utf-8')
    .header('ETag', file.etag)
    .header('Cache-Control', name === 'editor.js' ? 'public, no-cache' : 'public, max-age=31536000, immutable');
  const known = request.headers['if-none-match'];
  if (typeof known === 'string' && known.split(',').some((tag) => tag.trim() === file.etag))
    return reply.code(304).send();
  return sendCompressed(reply, file.body);
}
