// kill -9 in the middle of writes: after a restart every acknowledged create and update is there, with
// its files and content, fresh clones pass `git fsck --strict`, and the snippets take new updates.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TEST_DB, postgresSchemaUrl } from '../helper.ts';
import { spawnServer } from '../../scripts/spawn-server.ts';

const TOKEN = 'durability-root-token-0123456789';
const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };

const serve = (env: NodeJS.ProcessEnv) => spawnServer(env);

type Files = Record<string, string>;
interface Tracked {
  id: number;
  acknowledged: Files;
  inFlight: Files | null;
  commits: number;
}

describe('durability under kill -9', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-kill-'));
    let databaseUrl = `sqlite:${path.join(dataDir, 'db.sqlite3')}`;
    if (TEST_DB === 'postgres') {
      const schema = await postgresSchemaUrl();
      databaseUrl = schema.url;
      drop = schema.drop;
    }
    env = {
      ...process.env,
      SNIPPETD_DATA_DIR: dataDir,
      SNIPPETD_DATABASE_URL: databaseUrl,
      SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
      SNIPPETD_LOG_LEVEL: 'warn',
    };
  });
  after(async () => {
    await drop?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses nothing that was acknowledged', async () => {
    let server = await serve(env);
    const project = (await (
      await fetch(`${server.url}/api/v4/projects`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ path: 'durable' }),
      })
    ).json()) as { id: number; path_with_namespace: string };
    const base = `${server.url}/api/v4/projects/${project.id}/snippets`;
    const tracked: Tracked[] = [];
    let stop = false;

    // Each worker creates a snippet and then keeps rewriting it, one request at a time.
    const worker = async (w: number) => {
      const files: Files = { 'a.txt': `worker ${w}`, 'dir/b.txt': 'b' };
      let res: Response;
      try {
        res = await fetch(base, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            title: `w${w}`,
            files: Object.entries(files).map(([file_path, content]) => ({ file_path, content })),
          }),
        });
      } catch {
        return;
      }
      if (res.status !== 201) throw new Error(`create ${res.status}`);
      const entry: Tracked = {
        id: ((await res.json()) as { id: number }).id,
        acknowledged: files,
        inFlight: null,
        commits: 1,
      };
      tracked.push(entry);
      for (let i = 0; !stop; i++) {
        const next = { ...entry.acknowledged, 'a.txt': `worker ${w} version ${i}` };
        entry.inFlight = next;
        try {
          const r = await fetch(`${base}/${entry.id}`, {
            method: 'PUT',
            headers,
            body: JSON.stringify({ files: [{ action: 'update', file_path: 'a.txt', content: next['a.txt'] }] }),
          });
          if (r.status !== 200) throw new Error(`update ${r.status}`);
          await r.arrayBuffer();
        } catch (e) {
          if (stop) return;
          throw e;
        }
        entry.acknowledged = next;
        entry.inFlight = null;
        entry.commits++;
      }
    };
    const workers = Array.from({ length: 4 }, (_, w) => worker(w).catch((e) => (stop ? undefined : Promise.reject(e))));
    await new Promise((r) => setTimeout(r, 1500));
    stop = true;
    server.child.kill('SIGKILL');
    await Promise.all(workers);
    assert.ok(tracked.length > 0 && tracked.some((e) => e.commits > 2), 'the writers made progress before the kill');

    server = await serve(env);
    try {
      for (const entry of tracked) {
        const url = `${server.url}/api/v4/projects/${project.id}/snippets/${entry.id}`;
        const snippet = (await (await fetch(url, { headers })).json()) as { files: { path: string }[] };
        const content = await (await fetch(`${url}/files/main/a.txt/raw`, { headers })).text();
        const candidates = [entry.acknowledged, entry.inFlight].filter(Boolean) as Files[];
        assert.ok(
          candidates.some((c) => c['a.txt'] === content),
          `snippet ${entry.id}: ${content} is neither acknowledged nor in flight`,
        );
        assert.deepEqual(
          snippet.files.map((f) => f.path),
          ['a.txt', 'dir/b.txt'],
        );
        // A fresh clone (the node builds it from the rows) passes git's strictest check.
        const cloned = path.join(dataDir, `clone-${entry.id}`);
        const cloneUrl = `${server.url.replace('://', `://root:${TOKEN}@`)}/${project.path_with_namespace}/snippets/${entry.id}.git`;
        const clone = spawnSync('git', ['clone', '--bare', '-q', cloneUrl, cloned], { encoding: 'utf8' });
        assert.equal(clone.status, 0, clone.stderr);
        const fsck = spawnSync('git', ['--git-dir', cloned, 'fsck', '--strict'], { encoding: 'utf8' });
        assert.equal(fsck.status, 0, fsck.stderr);
        // The snippet takes new writes after the crash, and its history keeps every acknowledged commit.
        const after = await fetch(url, {
          method: 'PUT',
          headers,
          body: JSON.stringify({ files: [{ action: 'update', file_path: 'a.txt', content: 'after restart' }] }),
        });
        assert.equal(after.status, 200);
        assert.equal(spawnSync('git', ['--git-dir', cloned, 'fetch', '-q', 'origin', 'main:main']).status, 0);
        const commits = Number(
          spawnSync('git', ['--git-dir', cloned, 'rev-list', '--count', 'main'], { encoding: 'utf8' }).stdout.trim(),
        );
        assert.ok(
          commits === entry.commits + 1 || commits === entry.commits + 2,
          `snippet ${entry.id}: ${commits} commits, ${entry.commits} acknowledged`,
        );
      }
    } finally {
      server.child.kill('SIGTERM');
    }
  });
});
