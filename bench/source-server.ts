// A snippetd of a checkout run from source on a fresh SQLite data directory with a root token, for the benches
// that send it requests from outside (test/stall.ts measures the others' waits meanwhile).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exited, spawnServer } from '../scripts/spawn-server.ts';

export async function sourceServer(checkout: string, token: string, prefix: string, env: NodeJS.ProcessEnv = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const server = await spawnServer(
    {
      ...process.env,
      SNIPPETD_DATA_DIR: dataDir,
      SNIPPETD_DATABASE_URL: `sqlite:${path.join(dataDir, 'db.sqlite3')}`,
      SNIPPETD_INITIAL_ROOT_TOKEN: token,
      SNIPPETD_LOG_LEVEL: 'warn',
      ...env,
    },
    [path.join(checkout, 'src', 'cli.ts'), 'serve', '--port', '0'],
  );
  /** An API call as the root token; the answer's JSON, or an error for any status but 2xx. */
  async function api(method: string, url: string, body: unknown) {
    const res = await fetch(`${server.url}/api/v4${url}`, {
      method,
      headers: { 'PRIVATE-TOKEN': token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  }
  async function stop() {
    server.child.kill('SIGTERM');
    await exited(server.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return { server, api, stop };
}
