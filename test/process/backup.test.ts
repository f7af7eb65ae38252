// A restore drill: a server takes snippet creates, updates and git pushes without pause while
// `snippetd backup create` copies the database; the backup is restored into an empty database and served by
// another process with an empty data directory. Every write acknowledged before the backup started is
// there (raw of each file, the snippet's commits), fresh clones pass `git fsck --strict`, and restoring over
// a database that is not empty is refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { POSTGRES_URL, postgresSchemaUrl, TEST_DB } from '../helper.ts';
import { spawnServer, cliCommand } from '../../scripts/spawn-server.ts';

const run = promisify(execFile);
const TOKEN = 'backup-drill-root-token-0123456789';
const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };

interface Acknowledged {
  id: number;
  content: string;
  at: number;
}

/** Directories of a describe's own, removed after it, and a process environment on a data directory of them. */
function scratch() {
  const dirs: string[] = [];
  const tmp = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-backup-'));
    dirs.push(dir);
    return dir;
  };
  const envFor = (databaseUrl: string) => ({
    ...process.env,
    SNIPPETD_DATA_DIR: tmp(),
    SNIPPETD_DATABASE_URL: databaseUrl,
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
  });
  const remove = () => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  };
  return { dirs, tmp, envFor, remove };
}

describe('backup and restore while writes go on', () => {
  const { tmp, envFor, remove } = scratch();
  const cleanups: (() => Promise<void>)[] = [];
  let sourceUrl: string;
  let restoreUrl: string;

  before(async () => {
    if (TEST_DB === 'postgres') {
      const schema = await postgresSchemaUrl();
      sourceUrl = schema.url;
      cleanups.push(schema.drop);
      // The restore goes into a new, empty database; the dump recreates the schema there.
      const name = `snippetd_restore_${process.pid}_${Date.now()}`;
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const url = new URL(sourceUrl);
      url.pathname = `/${name}`;
      restoreUrl = url.toString();
      cleanups.push(async () => {
        const c = new pg.Client({ connectionString: POSTGRES_URL });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      });
    } else {
      sourceUrl = `sqlite:${path.join(tmp(), 'source.sqlite3')}`;
      restoreUrl = `sqlite:${path.join(tmp(), 'restored.sqlite3')}`;
    }
  });
  after(async () => {
    for (const c of cleanups) await c();
    remove();
  });

  const cli = (databaseUrl: string, args: string[]) => run(...cliCommand(...args), { env: envFor(databaseUrl) });

  it('restores every write acknowledged before the backup started', async () => {
    const server = await spawnServer(envFor(sourceUrl));
    const api = (p: string, init: RequestInit = {}) => fetch(`${server.url}/api/v4${p}`, { headers, ...init });
    try {
      const project = (await (
        await api('/projects', { method: 'POST', body: JSON.stringify({ path: 'drill', visibility: 'public' }) })
      ).json()) as { id: number; path_with_namespace: string };
      const acknowledged: Acknowledged[] = [];
      let stop = false;
      // One writer creates and updates snippets through the API, another pushes to the first snippet.
      const apiWriter = (async () => {
        for (let n = 0; !stop && n < 400; n++) {
          const content = `api write ${n}`;
          const res =
            n % 3 === 0 || acknowledged.length === 0
              ? await api(`/projects/${project.id}/snippets`, {
                  method: 'POST',
                  body: JSON.stringify({ title: `s${n}`, files: [{ file_path: 'a.txt', content }] }),
                })
              : await api(`/projects/${project.id}/snippets/${acknowledged[n % acknowledged.length].id}`, {
                  method: 'PUT',
                  body: JSON.stringify({ files: [{ action: 'update', file_path: 'a.txt', content }] }),
                });
          const body = await res.text();
          assert.ok(res.ok, `${res.status} ${body}`);
          const { id } = JSON.parse(body) as { id: number };
          acknowledged.push({ id, content, at: Date.now() });
        }
      })();
      while (acknowledged.length < 5) await new Promise((r) => setTimeout(r, 20));
      const pushed = acknowledged[0].id;
      const work = tmp();
      const remote = `${server.url.replace('://', `://root:${TOKEN}@`)}/${project.path_with_namespace}/snippets/${pushed}.git`;
      // Run without blocking this process, so that the API writer and the backup go on meanwhile.
      const git = (...args: string[]) =>
        run('git', ['-C', work, ...args], {
          env: {
            ...process.env,
            GIT_AUTHOR_NAME: 'P',
            GIT_AUTHOR_EMAIL: 'p@e',
            GIT_COMMITTER_NAME: 'P',
            GIT_COMMITTER_EMAIL: 'p@e',
          },
        }).then(
          () => true,
          () => false,
        );
      assert.equal(spawnSync('git', ['clone', '-q', remote, work]).status, 0);
      const pushWriter = (async () => {
        for (let n = 0; !stop && n < 60; n++) {
          fs.writeFileSync(path.join(work, 'a.txt'), `push ${n}`);
          assert.ok(await git('commit', '-qam', `push ${n}`));
          // A push racing the API writer may lose its compare-and-swap: then it is refused and we catch up.
          if (await git('push', '-q', 'origin', 'HEAD:main'))
            acknowledged.push({ id: pushed, content: `push ${n}`, at: Date.now() });
          else {
            assert.ok(await git('fetch', '-q', 'origin'));
            assert.ok(await git('reset', '-q', '--hard', 'origin/main'));
          }
          await new Promise((r) => setTimeout(r, 5));
        }
      })();

      await new Promise((r) => setTimeout(r, 300));
      const backupFile = path.join(tmp(), 'snippetd.backup');
      const startedAt = Date.now();
      await cli(sourceUrl, ['backup', 'create', backupFile]);
      const endedAt = Date.now();
      // It holds password hashes and private snippets: its owner's alone (pg_dump's file or SQLite's copy).
      assert.equal(fs.statSync(backupFile).mode & 0o777, 0o600);
      await new Promise((r) => setTimeout(r, 200));
      stop = true;
      await Promise.all([apiWriter, pushWriter]);
      const during = acknowledged.filter((a) => a.at >= startedAt && a.at <= endedAt);
      assert.ok(during.length > 0, 'writes were acknowledged while the backup ran');

      // Restoring over a database that is not empty is refused.
      await assert.rejects(cli(sourceUrl, ['backup', 'restore', backupFile]), /not empty|exists already/);
      await cli(restoreUrl, ['backup', 'restore', backupFile]);
      if (TEST_DB === 'postgres') {
        // The backup held this instance's schema alone, not the others of the database it shares.
        const restored = new pg.Client({ connectionString: restoreUrl });
        await restored.connect();
        try {
          const { rows } = await restored.query(String.raw`SELECT nspname FROM pg_namespace WHERE nspname ~ '^t_\d+_'`);
          const own = new URL(sourceUrl).searchParams.get('options')!.replace('-c search_path=', '');
          assert.deepEqual(rows, [{ nspname: own }]);
        } finally {
          await restored.end();
        }
      }
      const restored = await spawnServer(envFor(restoreUrl));
      try {
        // The last write acknowledged before the backup started, per snippet, must be what it holds now or an
        // older state must not be: each such snippet's history contains that content.
        const latestBefore = new Map<number, Acknowledged>();
        for (const a of acknowledged) if (a.at < startedAt) latestBefore.set(a.id, a);
        assert.ok(latestBefore.size >= 2);
        for (const [id, a] of latestBefore) {
          const url = `${restored.url}/${project.path_with_namespace}/snippets/${id}.git`.replace(
            '://',
            `://root:${TOKEN}@`,
          );
          const clone = tmp();
          assert.equal(spawnSync('git', ['clone', '-q', '--bare', url, clone]).status, 0, `clone of ${id}`);
          const fsck = spawnSync('git', ['--git-dir', clone, 'fsck', '--strict'], { encoding: 'utf8' });
          assert.equal(fsck.status, 0, fsck.stderr);
          const history = spawnSync('git', ['--git-dir', clone, 'log', '-p', 'main'], { encoding: 'utf8' }).stdout;
          // A whole added line: "api write 1" must not be found in "api write 10".
          assert.ok(history.split('\n').includes(`+${a.content}`), `snippet ${id} has "${a.content}"`);
          const raw = await fetch(`${restored.url}/api/v4/projects/${project.id}/snippets/${id}/files/main/a.txt/raw`, {
            headers,
          });
          assert.equal(raw.status, 200);
          const shown = await raw.text();
          const tip = spawnSync('git', ['--git-dir', clone, 'show', 'main:a.txt'], { encoding: 'utf8' }).stdout;
          assert.equal(shown, tip, `snippet ${id}: the API's raw is the clone's file`);
        }
      } finally {
        restored.child.kill('SIGTERM');
      }
    } finally {
      server.child.kill('SIGTERM');
    }
  });
});

// SQLite's backup in steps started again at every write of another connection: on a 95 MB database written 18
// times a second it never ended (helper-77). And a damaged or cut backup file was restored and served.
describe('SQLite backups of a busy database, and damaged backup files', { skip: TEST_DB === 'postgres' }, () => {
  const { dirs, tmp, envFor, remove } = scratch();
  after(remove);
  const cli = (databaseUrl: string, args: string[]) =>
    run(...cliCommand(...args), { env: envFor(databaseUrl), timeout: 60_000 });
  const source = () => path.join(dirs[0], 'source.sqlite3');
  const backupFile = () => path.join(dirs[0], 'busy.backup');

  it('a backup of a large database written every 10 ms ends, and holds what was acknowledged before it', async () => {
    const dir = tmp();
    const server = await spawnServer(envFor(`sqlite:${path.join(dir, 'source.sqlite3')}`));
    const api = (p: string, init: RequestInit = {}) => fetch(`${server.url}/api/v4${p}`, { headers, ...init });
    try {
      // About 70 MB of rows (random text stays about as large deflated): its copy takes a few hundred steps.
      const ids: number[] = [];
      for (let i = 0; i < 12; i++) {
        const content = crypto.randomBytes(6_000_000).toString('base64');
        const res = await api('/snippets', {
          method: 'POST',
          body: JSON.stringify({
            title: `large ${i}`,
            visibility: 'private',
            files: [{ file_path: 'a.txt', content }],
          }),
        });
        assert.equal(res.status, 201, await res.clone().text());
        ids.push(((await res.json()) as { id: number }).id);
      }
      let stop = false;
      let titled = 0;
      const writer = (async () => {
        while (!stop) {
          const res = await api(`/snippets/${ids[0]}`, {
            method: 'PUT',
            body: JSON.stringify({ title: `t${titled + 1}` }),
          });
          assert.equal(res.status, 200);
          titled++;
          await new Promise((r) => setTimeout(r, 10));
        }
      })();
      await new Promise((r) => setTimeout(r, 200));
      const before = titled;
      await cli(`sqlite:${source()}`, ['backup', 'create', backupFile()]);
      const during = titled - before;
      stop = true;
      await writer;
      assert.ok(during > 0, 'writes went on while the backup ran');
      const restored = path.join(tmp(), 'restored.sqlite3');
      await cli(`sqlite:${restored}`, ['backup', 'restore', backupFile()]);
      const copy = await spawnServer(envFor(`sqlite:${restored}`));
      try {
        const res = await fetch(`${copy.url}/api/v4/snippets/${ids[0]}`, { headers });
        const { title } = (await res.json()) as { title: string };
        assert.ok(Number(title.slice(1)) >= before, `${title}: at least t${before}`);
      } finally {
        copy.child.kill('SIGTERM');
      }
    } finally {
      server.child.kill('SIGTERM');
    }
  });

  it('a damaged or cut backup file is refused, and leaves nothing behind', async () => {
    const good = fs.readFileSync(backupFile());
    const damaged = Buffer.from(good);
    for (let at = 8192; at < damaged.length; at += Math.floor(damaged.length / 30))
      crypto.randomFillSync(damaged, at, 64);
    const cut = good.subarray(0, 50);
    for (const [name, bytes, refusal] of [
      ['damaged', damaged, /is damaged/],
      ['cut', cut, /not a backup/],
    ] as const) {
      const file = path.join(tmp(), `${name}.backup`);
      fs.writeFileSync(file, bytes);
      const target = path.join(tmp(), 'restored.sqlite3');
      await assert.rejects(cli(`sqlite:${target}`, ['backup', 'restore', file]), refusal, name);
      assert.equal(fs.existsSync(target), false, `${name}: no database left behind`);
      // The good backup restores where the refused one was.
      await cli(`sqlite:${target}`, ['backup', 'restore', backupFile()]);
      assert.ok(fs.statSync(target).size > 60_000_000, name);
    }
  });
});

// pg_restore recreates the schema the dump names: restored into a database whose URL names another schema, it said
// "restored", and a server started there found that schema empty and served a new, empty instance.
describe('a PostgreSQL backup restored where the URL names another schema', {
  skip: TEST_DB === 'postgres' ? false : 'needs PostgreSQL',
}, () => {
  const { tmp, envFor, remove } = scratch();
  const cli = (databaseUrl: string, args: string[]) => run(...cliCommand(...args), { env: envFor(databaseUrl) });
  const database = `snippetd_restore_other_${process.pid}_${Date.now()}`;
  const admin = async (statement: string, url = POSTGRES_URL) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(statement)).rows;
    } finally {
      await client.end();
    }
  };
  let source: Awaited<ReturnType<typeof postgresSchemaUrl>>;
  before(async () => {
    source = await postgresSchemaUrl();
    await admin(`CREATE DATABASE ${database}`);
  });
  after(async () => {
    await source.drop();
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    remove();
  });

  it('is refused, naming the schema to restore with, and leaves the database empty', async () => {
    await cli(source.url, ['migrate']);
    const file = path.join(tmp(), 'schema.backup');
    await cli(source.url, ['backup', 'create', file]);
    const dumped = new URL(source.url).searchParams.get('options')!.replace('-c search_path=', '');
    const target = new URL(POSTGRES_URL);
    target.pathname = `/${database}`;
    const plain = target.toString();
    target.searchParams.set('options', '-c search_path=elsewhere');
    await assert.rejects(
      cli(target.toString(), ['backup', 'restore', file]),
      (error: { stderr: string }) =>
        error.stderr ===
        `snippetd: ${file} holds the schema ${dumped}, and SNIPPETD_DATABASE_URL uses the schema elsewhere; restore with search_path=${dumped} in its options\n`,
    );
    const tables = await admin(
      "SELECT table_schema FROM information_schema.tables WHERE table_schema <> 'pg_catalog' AND table_schema <> 'information_schema'",
      plain,
    );
    assert.deepEqual(tables, []);
  });
});
