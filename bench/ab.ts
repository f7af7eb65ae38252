// Before/after on the same machine at the same moment: starts `snippetd serve` from two source trees
// (for example a worktree of an older commit and this one), both on CPU 1 with the load on CPU 0, and
// alternates rounds between them route by route, so a machine that speeds up or slows down mid-run
// weighs on both alike. Prints each route's median req/s for both and their ratio, and the median CPU time
// each server spent per request (Linux /proc), which another program on the machine disturbs less.
// Usage: npx tsx bench/ab.ts <before tree> <after tree> [--rounds 5] [--duration 2]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { spawnServer } from '../scripts/spawn-server.ts';
import { cpuMicros } from './process-cpu.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '5' }, duration: { type: 'string', default: '2' } },
});
if (positionals.length !== 2) throw new Error('usage: npx tsx bench/ab.ts <before tree> <after tree>');
const TOKEN = 'bench-root-token-0123456789abcdef';
const SERVER_CPU = 1;

async function start(tree: string) {
  const env = {
    ...process.env,
    SNIPPETD_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-ab-')),
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
  };
  const server = await spawnServer(env, [path.resolve(tree, 'src/cli.ts'), 'serve', '--port', '0'], SERVER_CPU);
  const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };
  const body = JSON.stringify({ path: 'bench', visibility: 'public' });
  const project = (await (await fetch(`${server.url}/api/v4/projects`, { method: 'POST', headers, body })).json()) as {
    id: number;
  };
  // The file of bench/pages.ts: 200 lines of Ruby, for the snippet page.
  const ruby = Array.from({ length: 200 }, (_, i) => `  def method_${i}(x) = x * ${i} # line ${i}`).join('\n');
  const snippet = JSON.stringify({
    title: 't',
    visibility: 'public',
    files: [{ file_path: 'a.rb', content: `class Code\n${ruby}\nend\n` }],
  });
  await fetch(`${server.url}/api/v4/projects/${project.id}/snippets`, { method: 'POST', headers, body: snippet });
  return server;
}

const ROUTES: [name: string, route: string, withToken: boolean][] = [
  ['GET /user (token)', '/api/v4/user', true],
  ['GET /projects/:id (anonymous)', '/api/v4/projects/1', false],
  ['GET /projects?per_page=20 (token)', '/api/v4/projects?per_page=20', true],
  ['GET /projects/:id/snippets/:id (token)', '/api/v4/projects/1/snippets/1', true],
  ['GET /projects/:id/templates/dockerfiles/Node', '/api/v4/projects/1/templates/dockerfiles/Node', false],
  ['snippet page, one 200-line file (anonymous)', '/root/bench/-/snippets/1', false],
  ['project snippet list page (anonymous)', '/root/bench/-/snippets', false],
];

const servers = [await start(positionals[0]), await start(positionals[1])];
try {
  console.log(
    '| route | before req/s | after req/s | after ÷ before | before CPU µs/req | after CPU µs/req | rounds before | rounds after |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [name, route, withToken] of ROUTES) {
    const rates: number[][] = [[], []];
    const cpus: number[][] = [[], []];
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const [i, server] of servers.entries()) {
        const cpuBefore = cpuMicros(server.child.pid!);
        const r = await autocannon({
          url: server.url + route,
          headers: withToken ? { 'PRIVATE-TOKEN': TOKEN } : {},
          connections: 10,
          duration: Number(values.duration),
        });
        if (r.non2xx || r.errors) throw new Error(`${route}: ${r.non2xx} non-2xx, ${r.errors} errors`);
        rates[i].push(Math.round(r.requests.average));
        cpus[i].push(Math.round((cpuMicros(server.child.pid!) - cpuBefore) / r.requests.total));
      }
    }
    const [before, after] = rates.map(median);
    const [cpuBefore, cpuAfter] = cpus.map(median);
    console.log(
      `| ${name} | ${before} | ${after} | ${(after / before).toFixed(2)} | ${cpuBefore} | ${cpuAfter} | ${rates[0].join(', ')} | ${rates[1].join(', ')} |`,
    );
  }
} finally {
  for (const server of servers) server.child.kill('SIGTERM');
}
