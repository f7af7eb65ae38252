// Profiles one page: starts `snippetd serve` under `node --cpu-prof`, makes the snippets of bench/pages.ts
// (20 snippets, each one 200-line Ruby file), loads the newest one's page (or the project's list) with
// autocannon, then stops the server, which writes a .cpuprofile into --out. Open it in Chrome's DevTools or
// summarise it with `npx tsx bench/profile-summary.ts <file>`.
// Usage: npx tsx bench/profile-page.ts [--duration 5] [--out /tmp/prof] [--page snippet|list|raw|raw-file|api-raw|api-snippet|api-list]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { compiledCli, exited, spawnServer, withoutRateLimits } from '../scripts/spawn-server.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    out: { type: 'string', default: path.join(os.tmpdir(), 'snippetd-profile') },
    page: { type: 'string', default: 'snippet' },
  },
});
const TOKEN = 'bench-root-token-0123456789abcdef';
const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-profile-'));
const env = {
  ...process.env,
  SNIPPETD_DATA_DIR: dataDir,
  SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
  SNIPPETD_LOG_LEVEL: 'warn',
};
const server = await spawnServer(env, [
  '--cpu-prof',
  `--cpu-prof-dir=${values.out}`,
  compiledCli(),
  'serve',
  '--port',
  '0',
]);
await withoutRateLimits(server.url, TOKEN);

async function api(route: string, body: unknown) {
  const res = await fetch(`${server.url}/api/v4${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`${route}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
}

try {
  const ruby = Array.from({ length: 200 }, (_, i) => `  def method_${i}(x) = x * ${i} # line ${i}`).join('\n');
  const project = await api('/projects', { path: 'pages', visibility: 'public' });
  let snippet: any;
  for (let i = 0; i < 20; i++) {
    snippet = await api(`/projects/${project.id}/snippets`, {
      title: `Snippet ${i}`,
      visibility: 'public',
      files: [{ file_path: 'code.rb', content: `class Code${i}\n${ruby}\nend\n` }],
    });
  }
  const urls: Record<string, string> = {
    snippet: snippet.web_url,
    list: `${project.web_url}/-/snippets`,
    raw: snippet.raw_url,
    'raw-file': snippet.files[0].raw_url,
    'api-raw': `${new URL(snippet.web_url).origin}/api/v4/projects/${project.id}/snippets/${snippet.id}/raw`,
    'api-snippet': `${new URL(snippet.web_url).origin}/api/v4/projects/${project.id}/snippets/${snippet.id}`,
    'api-list': `${new URL(snippet.web_url).origin}/api/v4/projects/${project.id}/snippets?per_page=20`,
  };
  const url = urls[values.page];
  await fetch(url); // rendered once, so the profile shows the page as kept
  // The API's pages are asked with the token, as an API client asks them (the snippet list requires one).
  const r = await autocannon({
    url,
    connections: 10,
    duration: Number(values.duration),
    headers: values.page.startsWith('api-') ? { 'PRIVATE-TOKEN': TOKEN } : {},
  });
  console.log(`${url}: ${Math.round(r.requests.average)} req/s, ${r.non2xx} non-2xx`);
} finally {
  server.child.kill('SIGTERM');
  await exited(server.child);
}
console.log(`profile in ${values.out}`);
