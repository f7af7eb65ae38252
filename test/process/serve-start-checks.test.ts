// `serve` stops at start, with one line saying which and exit 1, when the data directory or the SQLite
// database is not writable or git is not on the PATH (it used to start and answer 500 to every write).
// Root may write anywhere, so under root the server runs as nobody (65534) to meet the permissions.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI } from '../../scripts/spawn-server.ts';

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
let dir: string;

function serve(dataDir: string, extra: { env?: NodeJS.ProcessEnv; unprivileged?: boolean } = {}) {
  return spawnSync(process.execPath, ['--import', 'tsx', CLI, 'serve', '--port', '0'], {
    env: {
      ...process.env,
      SNIPPETD_DATA_DIR: dataDir,
      SNIPPETD_DATABASE_URL: `sqlite:${path.join(dataDir, 'snippetd.sqlite3')}`,
      SNIPPETD_LOG_LEVEL: 'warn',
      ...extra.env,
    },
    encoding: 'utf8',
    // A server that started anyway would run until this timeout: status null, and the test fails.
    timeout: 30_000,
    ...(extra.unprivileged && asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
  });
}

describe('serve start-up checks', () => {
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-start-checks-'));
    fs.chmodSync(dir, 0o755); // nobody must reach what is inside
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a data directory that is not writable', () => {
    const dataDir = path.join(dir, 'read-only');
    fs.mkdirSync(dataDir, { mode: 0o555 });
    const result = serve(dataDir, { unprivileged: true });
    assert.equal(result.status, 1, result.stderr);
    assert.equal(result.stderr, `snippetd: the data directory ${dataDir} (SNIPPETD_DATA_DIR) is not writable\n`);
  });

  it('a data directory that cannot be created', () => {
    const dataDir = path.join(dir, 'a-file', 'data');
    fs.writeFileSync(path.join(dir, 'a-file'), '');
    const result = serve(dataDir);
    assert.equal(result.status, 1, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(`^snippetd: the data directory ${dataDir} \\(SNIPPETD_DATA_DIR\\) cannot be created: ENOTDIR.*\\n$`),
    );
  });

  it('a SQLite database file that is not writable', () => {
    const dataDir = path.join(dir, 'read-only-database');
    fs.mkdirSync(dataDir);
    if (asRoot) fs.chownSync(dataDir, NOBODY, NOBODY);
    const file = path.join(dataDir, 'snippetd.sqlite3');
    fs.writeFileSync(file, ''); // an empty file is an empty SQLite database
    fs.chmodSync(file, 0o444);
    const result = serve(dataDir, { unprivileged: true });
    assert.equal(result.status, 1, result.stderr);
    assert.equal(result.stderr, `snippetd: the database ${file} (SNIPPETD_DATABASE_URL) is not writable\n`);
  });

  it('git not on the PATH', () => {
    const empty = path.join(dir, 'empty-path');
    fs.mkdirSync(empty);
    const result = serve(path.join(dir, 'no-git'), { env: { PATH: empty } });
    assert.equal(result.status, 1, result.stderr);
    assert.equal(result.stderr, 'snippetd: git is not found on the PATH; snippetd runs it for every clone and push\n');
  });

  it('with all of them, it starts', async () => {
    // The checks must not refuse what works: a fresh directory, as the unprivileged user where there is one.
    const dataDir = path.join(dir, 'fine');
    fs.mkdirSync(dataDir);
    if (asRoot) fs.chownSync(dataDir, NOBODY, NOBODY);
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', '--port', '0'], {
      env: { ...process.env, SNIPPETD_DATA_DIR: dataDir, SNIPPETD_DATABASE_URL: '', SNIPPETD_LOG_LEVEL: 'warn' },
      ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    let out = '';
    child.stderr.on('data', (chunk) => (out += chunk));
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        if (/listening on http:\/\//.test(out)) resolve();
      });
      child.on('exit', () => reject(new Error(out)));
    });
    child.kill('SIGTERM');
    assert.equal(await exit, 0);
  });
});
