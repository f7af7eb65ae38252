// The command line on a real process: --help, -h and --version print and exit 0 without starting anything;
// unknown commands, flags and arguments are one line naming them and exit 2; an invalid setting is named as
// given (flag or variable); `tokens create --expires-at` takes only a future YYYY-MM-DD.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cliCommand } from '../../scripts/spawn-server.ts';
import pkg from '../../package.json' with { type: 'json' };

let dataDir: string;
let env: NodeJS.ProcessEnv;

// A command that wrongly started the server would run until this timeout and fail with status null.
const run = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
  spawnSync(...cliCommand(...args), {
    env: { ...env, ...extra },
    encoding: 'utf8',
    timeout: 30_000,
  });

/** Exit status 2 and exactly one line on standard error, nothing on standard output. */
function usageError(args: string[], line: string) {
  const result = run(args);
  assert.equal(result.status, 2, result.stderr);
  assert.equal(result.stderr, `${line}\n`);
  assert.equal(result.stdout, '');
}

// Every command here uses its own SQLite file (or none) whatever SNIPPETD_TEST_DB says: once per `npm test`
// is enough.
const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'uses its own SQLite file: runs in the SQLite pass only';

describe('snippetd command line', { skip }, () => {
  before(() => {
    dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-cli-line-')), 'data');
    env = {
      ...process.env,
      SNIPPETD_DATA_DIR: dataDir,
      SNIPPETD_DATABASE_URL: `sqlite:${path.join(dataDir, 'snippetd.sqlite3')}`,
      SNIPPETD_LOG_LEVEL: 'warn',
      SNIPPETD_PORT: '0',
    };
  });
  after(() => fs.rmSync(path.dirname(dataDir), { recursive: true, force: true }));

  for (const args of [['--help'], ['-h'], ['users', '--help']]) {
    it(`${args.join(' ')} prints the usage of every command and exits 0`, () => {
      const result = run(args);
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stdout, /^usage: snippetd <command> \[options\]\n/);
      for (const command of ['serve', 'migrate', 'users create', 'tokens create', 'fsck', 'backup create'])
        assert.match(result.stdout, new RegExp(`\\n  ${command}`));
      assert.match(result.stdout, /--data-dir/);
      assert.equal(result.stderr, '');
    });
  }

  for (const [args, usage] of [
    [['serve', '--help'], 'usage: snippetd serve [configuration flags]'],
    [['serve', '-h', '--port', '9'], 'usage: snippetd serve [configuration flags]'],
    [['migrate', '-h'], 'usage: snippetd migrate [configuration flags]'],
    [['users', 'create', '--help'], 'usage: snippetd users create --username U --email E --name N'],
    [['tokens', 'create', '-h'], 'usage: snippetd tokens create --user U [--name N]'],
    [['fsck', '--help'], 'usage: snippetd fsck [--repair]'],
    [['backup', 'create', '--help'], 'usage: snippetd backup create FILE'],
    [['backup', 'restore', '-h'], 'usage: snippetd backup restore FILE'],
  ] as const) {
    it(`${args.join(' ')} prints that command's usage and exits 0`, () => {
      const result = run([...args]);
      assert.equal(result.status, 0, result.stderr);
      assert.ok(result.stdout.startsWith(usage), result.stdout);
      assert.match(result.stdout, /SNIPPETD_\* environment variables/);
    });
  }

  it('--version prints the version and exits 0, before any other checking', () => {
    for (const args of [['--version'], ['serve', '--version']]) {
      const result = run(args, { SNIPPETD_PORT: 'not a port' });
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.stdout, `snippetd ${pkg.version} (answers as GitLab 17.11.0)\n`);
    }
  });

  it('none of help and version touched the data directory', () => {
    assert.equal(fs.existsSync(dataDir), false);
  });

  it('an unknown command: one line naming it, exit 2', () => {
    usageError(['start'], 'snippetd: unknown command "start" (see snippetd --help)');
    usageError(
      ['users', 'delete', '--username', 'x'],
      'snippetd: unknown command "users delete" (see snippetd --help)',
    );
    usageError(['tokens'], 'snippetd: unknown command "tokens" (see snippetd --help)');
  });

  it('unknown flags: one line naming them, exit 2', () => {
    usageError(['serve', '--prot', '9000'], 'snippetd: unknown option --prot (see snippetd --help)');
    usageError(['--verbose', 'serve', '-x'], 'snippetd: unknown options --verbose, -x (see snippetd --help)');
    usageError(['serve', '--constructor'], 'snippetd: unknown option --constructor (see snippetd --help)');
    usageError(
      ['users', 'create', '--username', 'a', '--repair'],
      'snippetd: unknown option --repair for users create (see snippetd users create --help)',
    );
    usageError(['serve', '--admin'], 'snippetd: unknown option --admin for serve (see snippetd serve --help)');
  });

  it('flags without their value, values for switches, stray and missing arguments: exit 2', () => {
    usageError(['tokens', 'create', '--user'], 'snippetd: --user needs a value');
    usageError(['tokens', 'create', '--user', '--name', 'ci'], 'snippetd: --user needs a value');
    usageError(['fsck', '--repair=yes'], 'snippetd: --repair takes no value');
    usageError(['serve', 'now'], 'snippetd: unexpected argument "now" for serve (see snippetd serve --help)');
    usageError(['backup', 'create'], 'snippetd: backup create needs FILE (see snippetd backup create --help)');
    usageError(['users', 'create', '--email', 'a@example.com', '--name', 'A'], 'snippetd: --username is required');
  });

  it('an invalid setting is named by the flag when given as a flag, by the variable otherwise', () => {
    for (const [args, extra, line] of [
      [['serve', '--port', 'abc'], {}, 'snippetd: --port must be an integer, got "abc"'],
      [['serve', '--port=70000'], {}, 'snippetd: --port must be between 0 and 65535, got 70000'],
      [
        ['serve'],
        { SNIPPETD_MAX_BODY_BYTES: '12' },
        'snippetd: SNIPPETD_MAX_BODY_BYTES must be between 1024 and 1073741824, got 12',
      ],
      [
        ['serve', '--log-level', 'loud'],
        { SNIPPETD_LOG_LEVEL: 'info' },
        'snippetd: --log-level must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      ],
      [
        ['migrate', '--database-url', 'mysql://x'],
        {},
        'snippetd: --database-url must start with sqlite: or postgres://, got "mysql://x"',
      ],
      [
        ['serve', '--initial-root-token', 'short'],
        {},
        'snippetd: --initial-root-token must be at least 20 characters long',
      ],
      [
        ['serve', '--external-url', 'example.com'],
        {},
        'snippetd: --external-url must be an absolute http(s) URL, got "example.com"',
      ],
    ] as const) {
      const result = run([...args], extra);
      assert.equal(result.status, 1, result.stderr);
      assert.equal(result.stderr, `${line}\n`);
    }
  });

  it('tokens create --expires-at takes only a date (YYYY-MM-DD) in the future', () => {
    const user = run(['users', 'create', '--username', 'alice', '--email', 'alice@example.com', '--name', 'Alice']);
    assert.equal(user.status, 0, user.stderr);
    const today = new Date().toISOString().slice(0, 10);
    for (const value of ['tomorrow', '2099-02-30', '2099-2-1', '2099-01-01T00:00:00Z', '2020-01-01', today]) {
      const result = run(['tokens', 'create', '--user', 'alice', '--expires-at', value]);
      assert.equal(result.status, 1, `${value}: ${result.stderr}`);
      assert.equal(result.stderr, `snippetd: --expires-at must be a date (YYYY-MM-DD) in the future, got "${value}"\n`);
      assert.equal(result.stdout, '');
    }
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const ok = run(['tokens', 'create', '--user', 'alice', '--expires-at', tomorrow]);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /^glpat-\S+\n$/);
  });
});
