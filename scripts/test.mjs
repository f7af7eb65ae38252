#!/usr/bin/env node
// `npm test`: type check, format and lint, then the whole suite on SQLite, then again on PostgreSQL.
// `npm run test:quick`: the HTTP and unit tests on SQLite only, for after each change.
// Each run builds dist/ first: the process tests start the compiled CLI (scripts/spawn-server.ts, CLI).
// A PostgreSQL run that cannot happen is never skipped silently: with CI=true it fails the run; on a
// developer machine it prints a loud warning and exits non-zero unless SNIPPETD_ALLOW_SKIP_POSTGRES=1.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const args = process.argv.slice(2);
const only = args.includes('--db') ? args[args.indexOf('--db') + 1] : null;
const files = args.filter((a, i) => a.endsWith('.ts') && args[i - 1] !== '--db');
const postgresUrl = process.env.SNIPPETD_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function findTests(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return findTests(full);
    return entry.name.endsWith('.test.ts') ? [path.relative(root, full)] : [];
  });
}

function run(cmd, cmdArgs, env = {}) {
  const result = spawnSync(cmd, cmdArgs, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return result.status ?? 1;
}

async function postgresReachable() {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Test apps use one schema each (t_<pid>_<random>); drop those left by runs that were killed. */
async function dropStaleSchemas() {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      String.raw`SELECT nspname FROM pg_namespace WHERE nspname ~ '^t_\d+_[0-9a-f]+$'`,
    );
    for (const { nspname } of rows) {
      if (!alive(Number(nspname.split('_')[1]))) await client.query(`DROP SCHEMA ${nspname} CASCADE`);
    }
  } finally {
    await client.end();
  }
}

/**
 * Tokens, passwords and session cookies are never logged: in a whole run, every test app logs at debug into
 * one directory, where test/helper.ts also writes every secret a test sent or was given; afterwards one
 * `grep -F` looks for all of them in all the logs. A run that logged or recorded almost nothing proves
 * nothing, and fails too.
 */
function secretsLogged(dir) {
  const names = fs.readdirSync(dir);
  const logs = names.filter((f) => f.endsWith('.log')).map((f) => path.join(dir, f));
  const secrets = new Set(
    names
      .filter((f) => f.endsWith('.secrets'))
      .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n'))
      .filter(Boolean),
  );
  const lines = logs.reduce((n, f) => n + fs.readFileSync(f, 'utf8').split('\n').length - 1, 0);
  if (secrets.size < 100 || lines < 10_000) {
    console.error(
      `!! the log check saw ${secrets.size} secrets and ${lines} log lines in ${dir}: too few to prove anything`,
    );
    return true;
  }
  const list = path.join(dir, 'all.secrets-list');
  fs.writeFileSync(list, `${[...secrets].join('\n')}\n`);
  const grep = spawnSync('grep', ['-F', '-H', '-o', '-f', list, ...logs], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (grep.status === 1) {
    console.log(`== none of ${secrets.size} secrets is in the ${lines} lines the test apps logged`);
    fs.rmSync(dir, { recursive: true, force: true });
    return false;
  }
  const found = grep.stdout.split('\n').filter(Boolean);
  console.error(`!! ${found.length} secrets in the log (${dir}), for example:`);
  // Each match is `<file>.log:<secret>`: the file and the secret's first four characters.
  for (const line of found.slice(0, 10)) console.error(`   ${line.slice(0, line.indexOf('.log:') + 9)}…`);
  if (grep.status !== 0) console.error(grep.stderr);
  return true;
}

// --quick: the tier to run after each change, the HTTP and unit tests on SQLite (no type check, lint or log check).
const quick = args.includes('--quick');
const tests = files.length
  ? files
  : quick
    ? [...findTests(path.join(root, 'test', 'unit')), ...findTests(path.join(root, 'test', 'http'))].sort()
    : findTests(path.join(root, 'test')).sort();
/** Tests that run in the test's own process (an app built in it, no server of their own to start). */
const IN_PROCESS = ['unit', 'http', 'property'].map((dir) => `test${path.sep}${dir}${path.sep}`);
/** Processes the in-process tests share, as many as run at once. */
const GROUPS = 2;

/**
 * The files node --test runs: the in-process tests imported by GROUPS files of their own, each one process.
 * A process loads the source through tsx first, which costs about a second of CPU: once per group, not once per
 * file (the quick tier's 73 files then: 77 s → 38 s). Their tests run one after another in their group, as each
 * file's did in its process; failures still name the test and its file.
 */
function grouped(files) {
  // A file that is not there is left to node --test, which says so (in a group it fails the group's import).
  // One of the LONGEST runs in a process of its own, started early, rather than lengthen its group by as much.
  const shared = files.filter(
    (f) =>
      IN_PROCESS.some((dir) => f.startsWith(dir)) &&
      !LONGEST.includes(path.basename(f)) &&
      fs.existsSync(path.join(root, f)),
  );
  if (shared.length < 2) return files;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-test-groups-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const groups = Array.from({ length: GROUPS }, (_, i) => path.join(dir, `in-process-tests-${i + 1}.test.mjs`));
  groups.forEach((group, i) => {
    const imports = shared
      .filter((_, j) => j % GROUPS === i)
      .map((f) => `import ${JSON.stringify(path.join(root, f))};`);
    fs.writeFileSync(group, `${imports.join('\n')}\n`);
  });
  return [...groups, ...files.filter((f) => !shared.includes(f))].sort((a, b) => rank(a) - rank(b));
}

/**
 * The files that take the longest, longest first, started before all others in that order: one that starts late
 * ends a pass alone, with a core idle. Seconds each took in a CI dry run (2026-11-27), SQLite / PostgreSQL;
 * `in-process-tests` stands for the groups. API updates and pushes at random runs in a process of its own: in a
 * group it made that group twice as long as the other.
 */
const LONGEST = [
  'installed-package.test.ts', // 101 / -
  'git-http.test.ts', // 80 / 100
  'snippet-pages.test.ts', // 78 / -
  'three-nodes.test.ts', // - / 75
  'in-process-tests', // about 90 each
  'updates-and-pushes.test.ts', // 44 / 41
  'revisions-pages.test.ts', // 40 / -
  'workers.test.ts', // 21 / 38
  'snippet-forms.test.ts', // 37 / -
  'kill.test.ts', // 32 / 33
  'snippet-editor.test.ts', // 27 / -
  // Measured one file at a time, both databases' files at once on a loaded machine (2026-11-29): these four
  // were not listed and, under test/process/, started among the last files of a pass.
  'repository-stalls.test.ts', // 36 / 47
  'search-indexing.test.ts', // 20 / 49
  'hostile-bodies.test.ts', // 31 / 33
  'backup.test.ts', // 20 / 10
  'first-clone.test.ts', // 16 / 15 (run alone, 2026-11-28)
  'many-refs.test.ts', // 14 / - (run alone, 2026-11-28)
];
const rank = (file) => {
  const name = path.basename(file);
  const at = LONGEST.indexOf(name.startsWith('in-process-tests-') ? 'in-process-tests' : name);
  return at === -1 ? LONGEST.length : at;
};

/**
 * Files run after the others, one at a time. Their stall bounds (test/stall.ts) time the server's event loop
 * while git packs and unpacks a large file beside it. On a busy day a CPU-heavy neighbour file held that loop
 * for 0.5-1 s twice in five runs; alone it stayed at 16-28 ms. The server waits on no system call then: its
 * git requests' own few milliseconds stretch while git and the neighbours take both cores (bench/RESULTS.md,
 * 2026-11-27). Same assertions, measured without a neighbour. Large writes too: its creates of ten large or
 * deeply nested files are CPU-heavy neighbours themselves, and in two CI dry runs (2026-11-28) the raw-never-read
 * test beside them missed its bounds (a probe waited 271 ms; then its memory bound). Large answers (40 MB
 * templates and files, 120 MB of JSON) too: beside neighbours, on a slow afternoon's dry run, 257 and 469 ms.
 * And hostile pages: their renderings in worker threads beside neighbours held the server's own turns 321-784 ms
 * in a later one.
 */
const ALONE = ['push-limits.test.ts', 'large-writes.test.ts', 'large-answers.test.ts', 'page-rendering-stalls.test.ts'];

/**
 * The tests' temporary files (each app's SQLite database and serving caches, each server's data directory, git's
 * working copies) go to a directory of this run's on tmpfs when the machine has one that runs programs (git's
 * hooks, a built client): on disk, each SQLite commit (synchronous = FULL) waited for its fsync, and the in-process
 * tests, one after another in their group, waited for all of them. Nothing a test asserts is about the disk
 * (a kill -9 loses no page cache); the logs and failures stay in os.tmpdir(). Removed when the run ends, and
 * those of runs that were killed (memory, on tmpfs) at the next run's start. SNIPPETD_TEST_TMPDIR=disk keeps them
 * in os.tmpdir().
 */
function tmpfsDir() {
  const shm = '/dev/shm';
  try {
    if (fs.statfsSync(shm).type !== 0x01021994) return null; // TMPFS_MAGIC
    for (const name of fs.readdirSync(shm)) {
      const pid = /^snippetd-test-(\d+)-/.exec(name)?.[1];
      if (pid && !alive(Number(pid))) fs.rmSync(path.join(shm, name), { recursive: true, force: true });
    }
    const dir = fs.mkdtempSync(path.join(shm, `snippetd-test-${process.pid}-`));
    fs.chmodSync(dir, 0o1777); // as /tmp: a test's unprivileged process reaches its own directory in it
    process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    const probe = path.join(dir, 'probe');
    fs.writeFileSync(probe, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    if (spawnSync(probe).status === 0) return dir;
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {}
  return null;
}
const testTmp = process.env.SNIPPETD_TEST_TMPDIR === 'disk' ? null : tmpfsDir();

/** What each pass's failures reporter wrote, printed again at the very end where a log's tail shows it. */
const failedTests = [];

const nodeTest = (db) => {
  const logDir = files.length || quick ? null : fs.mkdtempSync(path.join(os.tmpdir(), `snippetd-test-log-${db}-`));
  const env = {
    SNIPPETD_TEST_DB: db,
    // Servers the tests start serve from one process (fast to start, one log), unless a test asks for workers.
    SNIPPETD_WORKERS: '1',
    SNIPPETD_TEST_BUILT: '1',
    ...(testTmp && { TMPDIR: testTmp }),
    ...(logDir && { SNIPPETD_TEST_LOG_DIR: logDir }),
  };
  const alone = tests.filter((f) => ALONE.includes(path.basename(f)));
  const together = tests.filter((f) => !alone.includes(f));
  // TAP on stdout as before, and the failures alone into a file each run, printed again after the pass.
  const failuresDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-test-failures-'));
  const nodeTestOf = (concurrency, list) => {
    if (!list.length) return 0;
    const reporters = [
      '--test-reporter=tap',
      '--test-reporter-destination=stdout',
      `--test-reporter=${path.join(root, 'scripts', 'failures-reporter.mjs')}`,
      `--test-reporter-destination=${path.join(failuresDir, `concurrency-${concurrency}`)}`,
    ];
    const testArgs = ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...reporters, ...list];
    return run(process.execPath, testArgs, env);
  };
  const statuses = [nodeTestOf(2, grouped(together)), nodeTestOf(1, alone)];
  const failures = fs.readdirSync(failuresDir).map((f) => fs.readFileSync(path.join(failuresDir, f), 'utf8'));
  if (failures.join('')) failedTests.push(`== tests that failed on ${db}\n${failures.join('')}`);
  fs.rmSync(failuresDir, { recursive: true, force: true });
  return logDir && secretsLogged(logDir) ? 1 : Math.max(...statuses);
};

if (!files.length && !quick) {
  console.log('== type check (tsc --noEmit)');
  if (run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', root]) !== 0)
    process.exit(1);
  console.log('== format and lint (biome check)');
  if (
    run(process.execPath, [
      path.join(root, 'node_modules/@biomejs/biome/bin/biome'),
      'check',
      '--error-on-warnings',
      root,
    ]) !== 0
  )
    process.exit(1);
}

console.log('== build (dist/, for the process tests)');
if (run(process.execPath, [path.join(root, 'scripts', 'build.mjs')]) !== 0) process.exit(1);

let failed = false;
if (only !== 'postgres') {
  console.log(`== tests on SQLite (${tests.length} files)`);
  failed = nodeTest('sqlite') !== 0 || failed;
}
if (only !== 'sqlite' && !quick) {
  if (await postgresReachable()) {
    await dropStaleSchemas();
    console.log(`== tests on PostgreSQL at ${postgresUrl} (${tests.length} files)`);
    failed = nodeTest('postgres') !== 0 || failed;
  } else {
    const line = '!'.repeat(78);
    console.error(
      `\n${line}\n!! PostgreSQL at ${postgresUrl} is NOT reachable: the PostgreSQL run did NOT happen.\n` +
        `!! Start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) and run npm test again.\n${line}\n`,
    );
    if (process.env.CI === 'true' || process.env.SNIPPETD_ALLOW_SKIP_POSTGRES !== '1') failed = true;
  }
}
if (failedTests.length) console.error(`\n${failedTests.join('\n')}`);
process.exit(failed ? 1 : 0);
