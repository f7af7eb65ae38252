// What compressing JSON answers costs (issue 28; http/plugins/compression.ts): `snippetd serve` (compiled)
// with 20 personal snippets, and bare Fastify's constant route (bench/constant-server.ts) in the same run,
// both on CPU 1 (autocannon runs in this process). Each route is asked with no Accept-Encoding, with `gzip, deflate`
// (python-gitlab's and Node's fetch) and with `gzip, deflate, br` (browsers, curl --compressed), in
// alternated rounds; each row gives the median requests a second, the server's median CPU time per request
// (Linux /proc) and the bytes of one answer. The single snippet's JSON is under the threshold (sent as it
// is whatever the client accepts); the one with a long description passes it, to show what compressing
// a small answer would cost.
//
//   npx tsx bench/json-compression.ts [--rounds 5] [--duration 2] [--connections 10]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { compiledCli, spawnServer, withoutRateLimits } from '../scripts/spawn-server.ts';
import { cpuMicros } from './process-cpu.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' },
  },
});
const TOKEN = 'bench-root-token-0123456789abcdef';
const SERVER_CPU = 1;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-json-'));
const env = {
  ...process.env,
  SNIPPETD_DATA_DIR: dataDir,
  SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
  SNIPPETD_LOG_LEVEL: 'warn',
};
const snippetd = await spawnServer(env, [compiledCli(), 'serve', '--port', '0'], SERVER_CPU);
const bare = await spawnServer(process.env, ['bench/constant-server.ts'], SERVER_CPU);
try {
  await withoutRateLimits(snippetd.url, TOKEN);
  const headers = { 'private-token': TOKEN, 'content-type': 'application/json' };
  const create = async (body: object) => {
    const res = await fetch(`${snippetd.url}/api/v4/snippets`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: number }).id;
  };
  let last = 0;
  for (let i = 0; i < 20; i++)
    last = await create({
      title: `snippet ${i}`,
      visibility: 'public',
      files: [{ file_path: `s${i}.rb`, content: `puts ${i}\n` }],
    });
  const described = await create({
    title: 'described',
    description: 'A snippet with a longer description. '.repeat(20),
    visibility: 'public',
    files: [{ file_path: 'd.rb', content: 'puts 1\n' }],
  });

  const ROUTES: [name: string, url: string, auth: boolean][] = [
    ['bare Fastify, constant JSON', `${bare.url}/constant`, false],
    ['GET /snippets/:id', `${snippetd.url}/api/v4/snippets/${last}`, true],
    ['GET /snippets/:id, 0.7 KB description', `${snippetd.url}/api/v4/snippets/${described}`, true],
    ['GET /snippets?per_page=20', `${snippetd.url}/api/v4/snippets?per_page=20`, true],
  ];
  const ENCODINGS: [name: string, header: string | null][] = [
    ['none', null],
    ['gzip', 'gzip, deflate'],
    ['br', 'gzip, deflate, br'],
  ];
  console.log(
    `${values.rounds} rounds of ${values.duration} s, ${values.connections} connections; load ${os.loadavg()[0].toFixed(1)}\n`,
  );
  console.log('| route | Accept-Encoding | answer bytes | req/s | CPU µs/req |\n|---|---|---|---|---|');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [name, url, auth] of ROUTES) {
    const pid = (url.startsWith(bare.url) ? bare : snippetd).child.pid!;
    const encodings = url.startsWith(bare.url) ? ENCODINGS.slice(0, 1) : ENCODINGS;
    const rates = encodings.map(() => [] as number[]);
    const cpus = encodings.map(() => [] as number[]);
    const sizes: number[] = [];
    for (const [i, [, accept]] of encodings.entries()) {
      const res = await fetch(url, {
        headers: { ...(auth ? { 'private-token': TOKEN } : {}), 'accept-encoding': accept ?? 'identity' },
      });
      sizes[i] = Number(res.headers.get('content-length'));
      await res.arrayBuffer();
    }
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const [i, [, accept]] of encodings.entries()) {
        const before = cpuMicros(pid);
        const r = await autocannon({
          url,
          headers: { ...(auth ? { 'private-token': TOKEN } : {}), ...(accept ? { 'accept-encoding': accept } : {}) },
          connections: Number(values.connections),
          duration: Number(values.duration),
        });
        if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
        rates[i].push(Math.round(r.requests.average));
        cpus[i].push(Math.round((cpuMicros(pid) - before) / r.requests.total));
      }
    }
    for (const [i, [encoding]] of encodings.entries())
      console.log(`| ${name} | ${encoding} | ${sizes[i]} | ${median(rates[i])} | ${median(cpus[i])} |`);
  }
} finally {
  snippetd.child.kill('SIGTERM');
  bare.child.kill('SIGTERM');
  setTimeout(() => fs.rmSync(dataDir, { recursive: true, force: true }), 500);
}
