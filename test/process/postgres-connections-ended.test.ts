// PostgreSQL ends connections (a restart, a failover, an administrator, a proxy's idle timeout): the pool hears
// it, drops them and opens others. Unheard, the pool's error event stopped the process at once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { processStorage, TEST_DB } from '../helper.ts';
import { exited, spawnServer, type Spawned } from '../../scripts/spawn-server.ts';

const TOKEN = 'pg-ended-root-token-0123456789';
const skip = TEST_DB !== 'postgres' && 'PostgreSQL only';
const APPLICATION = `snippetd-ended-${process.pid}`;

describe('a real server whose PostgreSQL connections are ended', { skip }, () => {
  let server: Spawned;
  let remove: () => Promise<void>;
  let databaseUrl: string;

  before(async () => {
    const storage = await processStorage('snippetd-pg-ended-');
    remove = storage.remove;
    databaseUrl = storage.databaseUrl;
    server = await spawnServer({
      ...process.env,
      SNIPPETD_DATA_DIR: storage.dataDir,
      SNIPPETD_DATABASE_URL: `${databaseUrl}${databaseUrl.includes('?') ? '&' : '?'}application_name=${APPLICATION}`,
      SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
      SNIPPETD_LOG_LEVEL: 'warn',
    });
  });
  after(async () => {
    if (server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
    await remove();
  });

  const snippets = () => fetch(`${server.url}/api/v4/snippets`, { headers: { 'PRIVATE-TOKEN': TOKEN } });

  it('keeps running, and answers again on new connections', async () => {
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 5; i++) assert.equal((await snippets()).status, 200);
      const admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      try {
        const { rows } = await admin.query(
          'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
          [APPLICATION],
        );
        assert.ok(rows[0].n > 0, 'the server had connections to end');
      } finally {
        await admin.end();
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(server.child.exitCode, null, `round ${round}: the process stopped`);
      let status = 0;
      for (let tries = 0; tries < 5 && status !== 200; tries++) status = (await snippets()).status;
      assert.equal(status, 200);
    }
  });
});
