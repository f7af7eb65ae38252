// kill -9 in the middle of API writes and git pushes, again and again: after each restart every acknowledged
// create, update and push is there (a write in flight may or may not be), the API's raw of every file equals
// a fresh clone's, fresh clones pass `git fsck --strict`, `snippetd fsck` finds nothing, and the snippets take
// new writes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { TEST_DB, postgresSchemaUrl, runGit } from '../helper.ts';
import { type Spawned, spawnServer } from '../../scripts/spawn-server.ts';

const TOKEN = 'durability-root-token-0123456789';
const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };
const KILLS = 5;
const run = promisify(execFile);

interface Tracked {
  id: number;
  kind: 'api' | 'push';
  acknowledged: string;
  inFlight: string | null;
  commits: number;
}

const git = runGit;

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

  it(`loses nothing that was acknowledged across ${KILLS} kills during API writes and pushes`, async () => {
    let server = await spawnServer(env);
    const project = (await (
      await fetch(`${server.url}/api/v4/projects`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ path: 'durable' }),
      })
    ).json()) as { id: number; path_with_namespace: string };
    const tracked: Tracked[] = [];
    for (let w = 0; w < 4; w++) {
      const kind = w < 2 ? 'api' : 'push';
      const content = `${kind} ${w} created`;
      const res = await fetch(`${server.url}/api/v4/projects/${project.id}/snippets`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          title: `w${w}`,
          files: [
            { file_path: 'a.txt', content },
            { file_path: 'dir/b.txt', content: 'b' },
          ],
        }),
      });
      assert.equal(res.status, 201);
      tracked.push({
        id: ((await res.json()) as { id: number }).id,
        kind,
        acknowledged: content,
        inFlight: null,
        commits: 1,
      });
    }
    const remote = (s: Spawned, id: number) =>
      `${s.url.replace('://', `://root:${TOKEN}@`)}/${project.path_with_namespace}/snippets/${id}.git`;

    let writes = 0;
    for (let round = 0; round < KILLS; round++) {
      let stop = false;
      const current = server;
      const apiWriter = async (entry: Tracked) => {
        for (let i = 0; !stop; i++) {
          const next = `api ${entry.id} round ${round} version ${i}`;
          entry.inFlight = next;
          const r = await fetch(`${current.url}/api/v4/projects/${project.id}/snippets/${entry.id}`, {
            method: 'PUT',
            headers,
            body: JSON.stringify({ files: [{ action: 'update', file_path: 'a.txt', content: next }] }),
          }).catch(() => null);
          if (!r) return; // the server was killed with this write in flight
          assert.equal(r.status, 200, await r.text());
          entry.acknowledged = next;
          entry.inFlight = null;
          entry.commits++;
          writes++;
        }
      };
      const pushWriter = async (entry: Tracked) => {
        const work = fs.mkdtempSync(path.join(dataDir, 'work-'));
        if ((await git(['clone', '-q', remote(current, entry.id), work])).code !== 0) return;
        for (let i = 0; !stop; i++) {
          const next = `push ${entry.id} round ${round} version ${i}`;
          fs.writeFileSync(path.join(work, 'a.txt'), next);
          await git(['commit', '-qam', next], work);
          entry.inFlight = next;
          const pushed = await git(['push', '-q', 'origin', 'HEAD:main'], work);
          if (pushed.code !== 0) return; // killed mid-push (the only writer of this snippet)
          entry.acknowledged = next;
          entry.inFlight = null;
          entry.commits++;
          writes++;
        }
      };
      const writers = tracked.map((e) => (e.kind === 'api' ? apiWriter(e) : pushWriter(e)));
      await new Promise((r) => setTimeout(r, 700 + 150 * round));
      stop = true;
      current.child.kill('SIGKILL');
      await Promise.all(writers);

      server = await spawnServer(env);
      for (const entry of tracked) {
        const api = `${server.url}/api/v4/projects/${project.id}/snippets/${entry.id}`;
        const snippet = (await (await fetch(api, { headers })).json()) as { files: { path: string }[] };
        assert.deepEqual(
          snippet.files.map((f) => f.path),
          ['a.txt', 'dir/b.txt'],
        );
        const raw = await (await fetch(`${api}/files/main/a.txt/raw`, { headers })).text();
        assert.ok(
          raw === entry.acknowledged || raw === entry.inFlight,
          `snippet ${entry.id} after kill ${round + 1}: "${raw}" is neither acknowledged ("${entry.acknowledged}") nor in flight`,
        );
        const clone = fs.mkdtempSync(path.join(dataDir, 'clone-'));
        assert.equal((await git(['clone', '-q', '--bare', remote(server, entry.id), clone])).code, 0);
        const fsck = await git(['--git-dir', clone, 'fsck', '--strict']);
        assert.equal(fsck.code, 0, fsck.stderr);
        assert.equal(
          (await git(['--git-dir', clone, 'show', 'main:a.txt'])).stdout,
          raw,
          "the API's raw is the clone's",
        );
        const commits = Number((await git(['--git-dir', clone, 'rev-list', '--count', 'main'])).stdout.trim());
        const inFlightLanded = raw !== entry.acknowledged;
        assert.equal(commits, entry.commits + (inFlightLanded ? 1 : 0), `snippet ${entry.id}: commits`);
        entry.acknowledged = raw;
        entry.commits = commits;
        entry.inFlight = null;
        fs.rmSync(clone, { recursive: true, force: true });
      }
    }
    assert.ok(writes > KILLS * tracked.length, `the writers made progress (${writes} acknowledged writes)`);

    // Every object and ref in the database is sound and reachable; the snippets take new writes.
    const fsck = await run(process.execPath, ['--import', 'tsx', path.resolve('src/cli.ts'), 'fsck'], { env });
    assert.match(fsck.stdout, /0 problems/);
    const after = await fetch(`${server.url}/api/v4/projects/${project.id}/snippets/${tracked[0].id}`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ files: [{ action: 'update', file_path: 'a.txt', content: 'after the kills' }] }),
    });
    assert.equal(after.status, 200);
    server.child.kill('SIGTERM');
  });
});
