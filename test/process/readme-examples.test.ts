// The README's examples for tool authors, run as written against a real `serve --ephemeral --seed`: its
// seed file, its curl lines (their output compared with what the README says they print) and its
// python-gitlab script (Debian's python3-gitlab, which .ci/run installs). Only the URL is replaced by the
// test server's. The database is in memory whatever SNIPPETD_TEST_DB says: SQLite pass only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, spawnServer, type Spawned } from '../../scripts/spawn-server.ts';

const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'the database is in memory: runs in the SQLite pass only';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const README_URL = 'http://127.0.0.1:8080';
/** Debian's interpreter, where python3-gitlab is installed (a pyenv `python3` may come first on the PATH). */
const PYTHON = '/usr/bin/python3';

/** The code blocks of the README's section for tool authors, with their languages. */
function examples(): { lang: string; code: string }[] {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('## For tool authors');
  assert.ok(start >= 0, 'the README has a section for tool authors');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], code: m[2] }));
}

describe('the README examples for tool authors', { skip }, () => {
  let dir: string;
  let server: Spawned;
  const blocks = examples();
  const [start, curl] = blocks.filter((b) => b.lang === 'sh');
  const python = blocks.find((b) => b.lang === 'python')!;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-readme-'));
    // The first block writes seed.yaml and starts the server: the same, from the sources, on a free port.
    const seed = /<<'YAML'\n([\s\S]*?)\nYAML\n/.exec(start.code)?.[1];
    assert.ok(seed, start.code);
    fs.writeFileSync(path.join(dir, 'seed.yaml'), `${seed}\n`);
    const command = start.code.trim().split('\n').at(-1)!;
    const token = /^SNIPPETD_INITIAL_ROOT_TOKEN=(\S+) npx snippetd serve --ephemeral --seed seed\.yaml &$/.exec(
      command,
    );
    assert.ok(token, command);
    server = await spawnServer({ ...process.env, SNIPPETD_INITIAL_ROOT_TOKEN: token[1], SNIPPETD_LOG_LEVEL: 'warn' }, [
      CLI,
      'serve',
      '--ephemeral',
      '--seed',
      path.join(dir, 'seed.yaml'),
      '--port',
      '0',
    ]);
  });
  after(() => {
    server?.child.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the curl lines print what the README says', () => {
    const result = spawnSync('bash', ['-euo', 'pipefail', '-c', curl.code.replaceAll(README_URL, server.url)], {
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    const printed = /^# (\{.*\})$/m.exec(curl.code)?.[1];
    assert.ok(printed, 'the README shows what the seed endpoint answers');
    assert.equal(result.stdout, `echo hello\n${printed}`);
  });

  it('the python-gitlab script runs to its end', () => {
    const result = spawnSync(PYTHON, ['-c', python.code.replaceAll(README_URL, server.url)], { encoding: 'utf8' });
    assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
  });
});
