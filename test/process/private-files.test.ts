// What snippetd keeps on disk is for its own user alone (issue 28): a real `snippetd serve` makes its data
// directory 0700, its SQLite database files 0600 and its git caches 0700/0600, and tightens a data
// directory and database an earlier version left readable; `snippetd backup create` writes 0600; and the
// PostgreSQL password reaches pg_dump and pg_restore in their environment, never on their command line
// (which every user of the machine sees in `ps`).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { POSTGRES_URL, postgresSchemaUrl, TEST_DB } from '../helper.ts';
import { exited, spawnServer, cliCommand } from '../../scripts/spawn-server.ts';

const run = promisify(execFile);
const TOKEN = 'private-files-root-token-0123456789';
const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

/**
 * Every directory and file below `dir` with its mode, as `path 700`. One the server removes between the listing and
 * its look (a push's temporary folder) is passed over: gone, it holds nothing.
 */
function modesBelow(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).flatMap((name) => {
    try {
      return [`${name} ${modeOf(path.join(dir, name)).toString(8)}`];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  });
}

describe('files on disk are private to the service', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-modes-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  // The default start: SQLite in the data directory, whichever database the rest of the run uses. The tests of
  // SQLite files run in the SQLite pass only: once per `npm test` is enough.
  const sqliteFiles = 'SQLite files whatever the pass: runs in the SQLite pass only';
  const serve = (dataDir: string) => {
    const { SNIPPETD_DATABASE_URL: _, ...env } = process.env;
    return spawnServer({
      ...env,
      SNIPPETD_DATA_DIR: dataDir,
      SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
      SNIPPETD_LOG_LEVEL: 'warn',
    });
  };

  it('a default start makes the data directory 0700, the database 0600 and the git caches 0700/0600', async (t) => {
    if (TEST_DB === 'postgres') return t.skip(sqliteFiles);
    const dataDir = path.join(tmp(), 'data');
    const server = await serve(dataDir);
    try {
      const headers = { 'private-token': TOKEN, 'content-type': 'application/json' };
      const api = (p: string, body: object) =>
        fetch(`${server.url}/api/v4${p}`, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) =>
          r.json(),
        );
      const project = await api('/projects', { name: 'modes' });
      const snippet = await api(`/projects/${project.id}/snippets`, {
        title: 't',
        files: [{ file_path: 'a.txt', content: 'private' }],
      });
      // A clone builds the snippet's serving cache on disk.
      const remote = `${server.url.replace('://', `://root:${TOKEN}@`)}/${project.path_with_namespace}/snippets/${snippet.id}.git`;
      const clone = spawnSync('git', ['clone', '-q', remote, path.join(tmp(), 'clone')], { encoding: 'utf8' });
      assert.equal(clone.status, 0, clone.stderr);

      assert.equal(modeOf(dataDir), 0o700);
      const modes = modesBelow(dataDir);
      for (const f of ['snippetd.sqlite3', 'snippetd.sqlite3-wal', 'snippetd.sqlite3-shm'])
        assert.ok(modes.includes(`${f} 600`), `${f} in ${modes}`);
      assert.ok(
        modes.some((m) => /^cache\/git\/[^/]+\/\d+\.git\/objects\/pack\/pack-\w+\.pack 600$/.test(m)),
        String(modes),
      );
      const loose = modes.filter((m) => {
        const isDir = fs.statSync(path.join(dataDir, m.split(' ')[0])).isDirectory();
        return !m.endsWith(isDir ? ' 700' : ' 600');
      });
      assert.deepEqual(loose, []);
    } finally {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
  });

  it('tightens a data directory and a database an earlier version left readable to others', async (t) => {
    if (TEST_DB === 'postgres') return t.skip(sqliteFiles);
    const dataDir = tmp();
    fs.chmodSync(dataDir, 0o755);
    const database = path.join(dataDir, 'snippetd.sqlite3');
    fs.writeFileSync(database, '', { mode: 0o644 });
    fs.chmodSync(database, 0o644);
    const server = await serve(dataDir);
    try {
      assert.equal(modeOf(dataDir), 0o700);
      assert.equal(modeOf(database), 0o600);
      assert.equal(modeOf(`${database}-wal`), 0o600);
    } finally {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
  });

  it('backup create writes a file only its owner may read, and restore a database only its owner may read', async (t) => {
    if (TEST_DB === 'postgres') return t.skip(sqliteFiles);
    const dataDir = tmp();
    const databaseUrl = `sqlite:${path.join(dataDir, 'snippetd.sqlite3')}`;
    const env = { ...process.env, SNIPPETD_DATA_DIR: dataDir, SNIPPETD_DATABASE_URL: databaseUrl };
    const user = ['users', 'create', '--username', 'u', '--email', 'u@example.com', '--name', 'U'];
    await run(...cliCommand(...user), { env });
    const backup = path.join(tmp(), 'snippetd.backup');
    await run(...cliCommand('backup', 'create', backup), { env });
    assert.equal(modeOf(backup), 0o600);
    assert.ok(fs.statSync(backup).size > 0);
    const restored = path.join(tmp(), 'new', 'restored.sqlite3');
    await run(...cliCommand('backup', 'restore', backup), {
      env: { ...env, SNIPPETD_DATABASE_URL: `sqlite:${restored}` },
    });
    assert.equal(modeOf(path.dirname(restored)), 0o700);
    assert.equal(modeOf(restored), 0o600);
  });

  it('the PostgreSQL password reaches pg_dump and pg_restore in their environment, never their arguments', {
    skip: TEST_DB !== 'postgres' && 'needs the PostgreSQL server',
  }, async () => {
    // Programs of our own named pg_dump and pg_restore, first on the PATH: each writes down what it was given.
    const bin = tmp();
    const seen = tmp();
    // The server lets any password in (trust), so the restore's own check that the database is empty runs.
    const schema = await postgresSchemaUrl();
    const schemaName = /search_path=(\S+)/.exec(new URL(schema.url).searchParams.get('options') ?? '')![1];
    for (const tool of ['pg_dump', 'pg_restore']) {
      // The restore first reads the dump's table of contents for the schema its tables are in (backup.ts).
      fs.writeFileSync(
        path.join(bin, tool),
        `#!/bin/sh
if [ "$1" = "--list" ]; then echo '215; 1259 16390 TABLE ${schemaName} snippetd_migrations postgres'; exit 0; fi
printf '%s\\n' "$@" > "${seen}/${tool}.args"
printf '%s' "$PGPASSWORD" > "${seen}/${tool}.password"
for a in "$@"; do case "$a" in --file=*) printf 'dump' > "\${a#--file=}";; esac; done
`,
        { mode: 0o755 },
      );
    }
    const password = 'pg-password-that-ps-must-not-show';
    try {
      const url = new URL(schema.url);
      url.password = password;
      const env = {
        ...process.env,
        PATH: `${bin}${path.delimiter}${process.env.PATH}`,
        SNIPPETD_DATA_DIR: tmp(),
        SNIPPETD_DATABASE_URL: url.toString(),
      };
      const backup = path.join(tmp(), 'snippetd.backup');
      await run(...cliCommand('backup', 'create', backup), { env });
      assert.equal(modeOf(backup), 0o600);
      await run(...cliCommand('backup', 'restore', backup), { env });
      for (const tool of ['pg_dump', 'pg_restore']) {
        const args = fs.readFileSync(path.join(seen, `${tool}.args`), 'utf8');
        assert.ok(!args.includes(password), `${tool} was given the password in its arguments: ${args}`);
        assert.match(args, new RegExp(`^--dbname=postgres://postgres@${new URL(POSTGRES_URL).host}/`, 'm'));
        assert.equal(fs.readFileSync(path.join(seen, `${tool}.password`), 'utf8'), password, tool);
      }
    } finally {
      await schema.drop();
    }
  });
});
