// The CPU time of compressing one JSON answer, a page of 20 personal snippets as GET /snippets answers it
// (15 KB), at the levels http/plugins/compression.ts could use; in this process, two passes of 2,000 each.
//
//   npx tsx bench/json-encoders.ts
import zlib from 'node:zlib';

const snippet = (id: number) => ({
  id,
  title: `snippet ${id}`,
  description: null,
  visibility: 'public',
  author: {
    id: 1,
    username: 'root',
    public_email: null,
    name: 'Administrator',
    state: 'active',
    locked: false,
    avatar_url: 'https://www.gravatar.com/avatar/0123456789abcdef0123456789abcdef?s=80&d=identicon',
    web_url: 'http://127.0.0.1:4000/root',
  },
  created_at: '2026-11-26T17:00:00.000Z',
  updated_at: '2026-11-26T17:00:00.000Z',
  project_id: null,
  web_url: `http://127.0.0.1:4000/-/snippets/${id}`,
  raw_url: `http://127.0.0.1:4000/-/snippets/${id}/raw`,
  file_name: 'a.rb',
  files: [{ path: 'a.rb', raw_url: `http://127.0.0.1:4000/-/snippets/${id}/raw/main/a.rb` }],
  imported: false,
  imported_from: 'none',
  repository_storage: 'default',
  ssh_url_to_repo: `ssh://git@localhost/snippets/${id}.git`,
  http_url_to_repo: `http://127.0.0.1:4000/snippets/${id}.git`,
});
const body = Buffer.from(JSON.stringify(Array.from({ length: 20 }, (_, i) => snippet(1000 + i))));
const brotli = (quality: number) => ({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality } });
const ENCODERS: [string, () => Buffer][] = [
  ['gzip 6 (zlib default)', () => zlib.gzipSync(body)],
  ['gzip 1', () => zlib.gzipSync(body, { level: 1 })],
  ['brotli 4 (pages)', () => zlib.brotliCompressSync(body, brotli(4))],
  ['brotli 2', () => zlib.brotliCompressSync(body, brotli(2))],
  ['brotli 1', () => zlib.brotliCompressSync(body, brotli(1))],
];
const cpuMicros = (f: () => unknown, n = 2000) => {
  for (let i = 0; i < 200; i++) f();
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) f();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
};
console.log(`${body.length} bytes of JSON\n\n| encoder | bytes | pass 1 CPU µs | pass 2 CPU µs |\n|---|---|---|---|`);
const passes = ENCODERS.map(([, f]) => [cpuMicros(f)]);
for (const [i, [, f]] of ENCODERS.entries()) passes[i].push(cpuMicros(f));
for (const [i, [name, f]] of ENCODERS.entries())
  console.log(`| ${name} | ${f().length} | ${passes[i][0].toFixed(0)} | ${passes[i][1].toFixed(0)} |`);
