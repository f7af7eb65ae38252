// Where a test run's CPU goes: `npx tsx bench/suite-cpu.ts [--keep DIR] -- node scripts/test.mjs [args]` runs the
// command under Linux process accounting (root, Debian's `acct`: accton and dump-acct) and charges each process that
// ended meanwhile to the test file whose process started it, by parent chain. Accounting names no arguments, so
// /proc is read every 200 ms for command lines; a pid used twice is told apart by its start time. Processes of
// others (a second run beside this one) are left out: only this command's descendants count. Prints CPU seconds by
// kind of process, by pass (a `node --test` runner's SNIPPETD_TEST_DB) and by file.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

interface Ended {
  comm: string;
  user: number;
  sys: number;
  start: number;
  end: number;
  pid: number;
  ppid: number;
  cmd: string;
  file?: string;
}

const args = process.argv.slice(2);
const keep = args[0] === '--keep' ? args[1] : null;
const command = args.slice(args.indexOf('--') + 1);
if (!args.includes('--') || command.length === 0) {
  console.error('usage: npx tsx bench/suite-cpu.ts [--keep DIR] -- <command> [args]');
  process.exit(2);
}
const dir = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'suite-cpu-'));
fs.mkdirSync(dir, { recursive: true });
const pacct = path.join(dir, 'pacct');
fs.writeFileSync(pacct, '');
const bootSeconds = Number(/^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))![1]);
const ticks = 100; // USER_HZ, as /proc/<pid>/stat counts

/** Command lines seen, by pid: [start (epoch seconds), command line]. */
const seen = new Map<number, [number, string][]>();
const poll = () => {
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const start = bootSeconds + Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / ticks;
      const pid = Number(name);
      const known = seen.get(pid) ?? [];
      if (known.some(([s]) => s === start)) continue;
      let cmd = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 400);
      // A runner's pass, from its environment (scripts/test.mjs sets SNIPPETD_TEST_DB).
      if (/ --test /.test(cmd)) {
        const db = /(?:^|\0)SNIPPETD_TEST_DB=([^\0]*)/.exec(fs.readFileSync(`/proc/${name}/environ`, 'utf8'))?.[1];
        cmd = `${cmd} [pass ${db ?? '?'}]`;
      }
      seen.set(pid, [...known, [start, cmd]]);
    } catch {}
  }
};

if (spawnSync('accton', [pacct]).status !== 0) throw new Error('accton failed: install acct and run as root');
const polling = setInterval(poll, 200);
const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
const status: number = await new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
clearInterval(polling);
spawnSync('accton', ['off']);

// dump-acct: comm|version|utime|stime|etime|uid|gid|mem|io|pid|ppid|…|btime, times in ticks.
const ended: Ended[] = spawnSync('dump-acct', [pacct], { encoding: 'utf8', maxBuffer: 1 << 30 })
  .stdout.split('\n')
  .filter(Boolean)
  .map((line) => {
    const f = line.split('|').map((x) => x.trim());
    const start = Date.parse(`${f.at(-1)} UTC`) / 1000;
    const pid = Number(f[9]);
    const cmd = (seen.get(pid) ?? []).find(([s]) => Math.abs(s - start) <= 1.5)?.[1] ?? '';
    return {
      comm: f[0],
      user: Number(f[2]) / ticks,
      sys: Number(f[3]) / ticks,
      start,
      end: start + Number(f[4]) / ticks,
      pid,
      ppid: Number(f[10]),
      cmd,
    };
  });
const byPid = new Map<number, Ended[]>();
for (const e of ended) byPid.set(e.pid, [...(byPid.get(e.pid) ?? []), e]);
/** The process that was `e`'s parent: that pid, started before it and still there when it ended. */
const parentOf = (e: Ended) =>
  (byPid.get(e.ppid) ?? [])
    .filter((p) => p.start <= e.start + 1.5 && p.end >= e.end - 1.5)
    .sort((a, b) => b.start - a.start)[0];
const root = ended.find((e) => e.pid === child.pid);
if (!root) throw new Error('the command left no accounting record');
const runners = ended.filter((e) => / --test /.test(e.cmd) && parentOf(e) === root).sort((a, b) => a.start - b.start);
const testFile = (e: Ended) =>
  e.comm === 'node' && !/ --test /.test(e.cmd) ? /(\S+\.test\.m?[jt]s)/.exec(e.cmd)?.[1].split('/').at(-1) : undefined;

const add = (m: Map<string, [number, number]>, key: string, e: Ended) => {
  const [u, s] = m.get(key) ?? [0, 0];
  m.set(key, [u + e.user, s + e.sys]);
};
const byKind = new Map<string, [number, number]>();
const byPass = new Map<string, [number, number]>();
const byFile = new Map<string, [number, number]>();
for (const e of ended) {
  let file: string | undefined;
  let runner = -2;
  for (let p: Ended | undefined = e, n = 0; p && n < 60; p = parentOf(p), n++) {
    file ??= testFile(p);
    if (runners.includes(p)) {
      runner = runners.indexOf(p);
      break;
    }
    if (p === root) {
      runner = -1;
      break;
    }
  }
  if (runner === -2) continue;
  const pass = runner === -1 ? 'setup' : (/\[pass (\S+)\]/.exec(runners[runner].cmd)?.[1] ?? `runner ${runner}`);
  const kind = testFile(e)
    ? 'test file process'
    : e.comm === 'node' && /dist\/cli\.js/.test(e.cmd)
      ? `snippetd ${/cli\.js (\S+)/.exec(e.cmd)?.[1] ?? ''}`
      : e.comm;
  add(byKind, kind, e);
  add(byPass, pass, e);
  add(byFile, `${pass} ${runner === -1 ? '(type check, lint, build, log check)' : (file ?? '(runner)')}`, e);
}
const table = (title: string, m: Map<string, [number, number]>, rows = 40) => {
  console.log(`\n== ${title}: CPU s (user + sys)`);
  for (const [key, [u, s]] of [...m].sort((a, b) => b[1][0] + b[1][1] - a[1][0] - a[1][1]).slice(0, rows))
    console.log(`${(u + s).toFixed(1).padStart(8)} (${u.toFixed(1)} + ${s.toFixed(1)})  ${key}`);
};
table('by pass', byPass);
table('by kind of process', byKind, 25);
table('by file', byFile, 80);
if (!keep) fs.rmSync(dir, { recursive: true, force: true });
process.exitCode = status;
