// Issue 28: how long hostile snippet pages hold a server's event loop, and how large they are on the wire.
// Runs the checkout given (default: this one) from source, creates a public snippet with an 8 MB Markdown
// file of "*_" and one with a 1,040,000-byte JavaScript file, then views each page (and the Markdown one's
// embed script) while cheap requests go on (test/stall.ts), and fetches the JavaScript page as is, in
// gzip and in brotli.
//   npx tsx bench/page-stalls.ts [checkout] [javascript file]
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { sourceServer } from './source-server.ts';
import { whileHostile } from '../test/stall.ts';

const checkout = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));
const javascript = process.argv[3] ? fs.readFileSync(process.argv[3], 'utf8') : null;
const TOKEN = 'page-stalls-bench-root-token-0123';
const { server, api, stop } = await sourceServer(checkout, TOKEN, 'snippetd-page-stalls-');
const project = await api('POST', '/projects', { path: 'bench', visibility: 'public' });
const snippet = async (file_path: string, content: string) =>
  (
    await api('POST', `/projects/${project.id}/snippets`, {
      title: file_path,
      visibility: 'public',
      files: [{ file_path, content }],
    })
  ).web_url as string;

const line = 'function add(a, b) { return a + b; } // the sum of "a" and <b>\n';
const code = javascript ?? line.repeat(Math.ceil(1_040_000 / line.length));
const markdownPage = await snippet('big.md', '*_'.repeat(4_000_000));
const codePage = await snippet('big.js', code.slice(0, 1_040_000));

const view = async (url: string) => {
  const started = performance.now();
  const res = await fetch(url);
  const bytes = (await res.arrayBuffer()).byteLength;
  return { status: res.status, bytes, ms: Math.round(performance.now() - started) };
};
const round = (calm: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(calm).map(([k, v]) => [k, k === 'peakRssBytes' ? `${Math.round(v / 2 ** 20)} MiB` : Math.round(v)]),
  );
for (const [name, url, probe] of [
  ['8 MB Markdown page', markdownPage, undefined],
  ['8 MB Markdown embed', `${markdownPage}.js`, undefined],
  ['1,040,000-byte JavaScript page (probe: sign-in page)', codePage, '/users/sign_in'],
] as const) {
  const { answer, calm } = await whileHostile(server, () => view(url), probe);
  console.log(name, JSON.stringify({ answer, calm: round(calm as unknown as Record<string, number>) }));
}

// The same page on the wire: node's http client, which decodes nothing, so the sizes are what was sent.
const http = await import('node:http');
const wire = (encoding: string) =>
  new Promise<{ encoding: string; bytes: number; decoded: number }>((resolve, reject) => {
    http
      .get(codePage, { headers: { 'accept-encoding': encoding } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const sent = res.headers['content-encoding'] ?? 'identity';
          const decoded =
            sent === 'br' ? zlib.brotliDecompressSync(body) : sent === 'gzip' ? zlib.gunzipSync(body) : body;
          resolve({ encoding: sent, bytes: body.length, decoded: decoded.length });
        });
      })
      .on('error', reject);
  });
for (const encoding of ['identity', 'gzip', 'br']) console.log('JavaScript page on the wire', await wire(encoding));

await stop();
