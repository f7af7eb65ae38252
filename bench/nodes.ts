// Read throughput of one node against three nodes on one PostgreSQL database: a snippet GET and its raw,
// with autocannon against one node, then against three at once (one autocannon per node, figures summed).
// On a 2-core machine the three nodes, PostgreSQL and the load generator share two cores, so this shows that
// nodes serve the same data correctly side by side and what the database allows, not scale-out itself.
// Usage: npx tsx bench/nodes.ts [--duration 5] [--connections 10] [--database-url postgres://…/test]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { compiledCli, type Spawned, spawnServer, withoutRateLimits } from '../scripts/spawn-server.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
  },
});
const TOKEN = 'bench-root-token-0123456789abcdef';
const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };

async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `benchnodes_${process.pid}`;
  const admin = new pg.Client({ connectionString: values['database-url'] });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(values['database-url']!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: values['database-url'] });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

const load = (url: string) =>
  autocannon({
    url,
    headers: { 'PRIVATE-TOKEN': TOKEN },
    connections: Number(values.connections),
    duration: Number(values.duration),
  });

async function main() {
  const db = await freshDatabase();
  const nodes: Spawned[] = [];
  const dirs: string[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `snippetd-node${i}-`));
      dirs.push(dataDir);
      nodes.push(
        await spawnServer(
          {
            ...process.env,
            SNIPPETD_DATA_DIR: dataDir,
            SNIPPETD_DATABASE_URL: db.url,
            SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
            SNIPPETD_LOG_LEVEL: 'warn',
          },
          [compiledCli(), 'serve', '--port', '0'],
        ),
      );
    }
    await withoutRateLimits(nodes[0].url, TOKEN);
    const project = (await (
      await fetch(`${nodes[0].url}/api/v4/projects`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ path: 'nodes', visibility: 'public' }),
      })
    ).json()) as { id: number };
    const snippet = (await (
      await fetch(`${nodes[0].url}/api/v4/projects/${project.id}/snippets`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          title: 'bench',
          visibility: 'public',
          files: [{ file_path: 'a.rb', content: 'puts 1\n'.repeat(30) }],
        }),
      })
    ).json()) as { id: number };
    console.log(`PostgreSQL, ${values.connections} connections a node, ${values.duration} s each:`);
    console.log('| route | one node req/s (p99 ms) | three nodes, summed req/s (p99 ms of each) |');
    console.log('|---|---|---|');
    for (const [name, route] of [
      ['GET snippet', `/api/v4/projects/${project.id}/snippets/${snippet.id}`],
      ['GET raw', `/api/v4/projects/${project.id}/snippets/${snippet.id}/raw`],
    ]) {
      await load(`${nodes[0].url}${route}`); // warm-up
      const one = await load(`${nodes[0].url}${route}`);
      const three = await Promise.all(nodes.map((n) => load(`${n.url}${route}`)));
      const failed = [one, ...three].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
      console.log(
        `| ${name} | ${Math.round(one.requests.average)} (${one.latency.p99}) | ${Math.round(
          three.reduce((sum, r) => sum + r.requests.average, 0),
        )} (${three.map((r) => r.latency.p99).join(', ')}) |${failed ? ` ${failed} failed` : ''}`,
      );
    }
  } finally {
    for (const n of nodes) n.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await db.drop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

await main();
