// Issue 28's push: a 1.5 GB file of zeros (1.5 MB once packed) pushed to one's own project and to a snippet,
// while cheap requests go on (test/stall.ts): the server's peak memory, its longest event-loop delay and the
// cheap requests' worst latency, and what the client was told. Too slow for the suite (test/git/push-limits
// pushes 256 MiB); run it by hand:
//
//   npx tsx bench/huge-push.ts [--size-mib 1536] [--cli <path to a tree's src/cli.ts>]
//
// By default it runs the compiled CLI of this tree; `--cli` runs another tree's source through tsx (an older
// commit, for a before figure). Takes a few minutes, most of it git hashing and packing the file.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { compiledCli, spawnServer } from '../scripts/spawn-server.ts';
import { type Calm, MiB, whileHostile } from '../test/stall.ts';

const { values } = parseArgs({ options: { 'size-mib': { type: 'string' }, cli: { type: 'string' } } });
const size = Number(values['size-mib'] ?? 1536) * MiB;
const TOKEN = 'glpat-huge-push-bench-token';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-huge-push-'));
const env = { PATH: process.env.PATH, HOME: dataDir, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };

function git(args: string[], cwd = dataDir): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', ['-c', 'user.name=B', '-c', 'user.email=b@example.com', ...args], { cwd, env });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.resume();
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

async function must(args: string[], cwd?: string): Promise<void> {
  const r = await git(args, cwd);
  if (r.code !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

const server = await spawnServer(
  {
    ...process.env,
    SNIPPETD_DATA_DIR: dataDir,
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
    // A 1.5 GB file is 1.5 MB packed: the request body limit is not what is measured.
  },
  values.cli ? [values.cli, 'serve', '--port', '0'] : [compiledCli(), 'serve', '--port', '0'],
);
const api = async (method: string, url: string, body: unknown) => {
  const res = await fetch(`${server.url}/api/v4${url}`, {
    method,
    headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
};

try {
  const project = await api('POST', '/projects', { path: 'huge', initialize_with_readme: true });
  const snippet = await api('POST', `/projects/${project.id}/snippets`, {
    title: 'huge',
    visibility: 'private',
    files: [{ file_path: 'a.txt', content: 'a\n' }],
  });
  const host = new URL(server.url).host;
  const targets = [
    { name: 'project', repo: 'root/huge', ref: 'HEAD:main' },
    { name: 'snippet', repo: `root/huge/snippets/${snippet.id}`, ref: 'HEAD:main' },
  ];
  const report = (name: string, seconds: number, calm: Calm, answers: { code: number | null; stderr: string }[]) =>
    console.log(
      JSON.stringify({
        target: name,
        fileMiB: size / MiB,
        pushExits: answers.map((a) => a.code),
        seconds: Number(seconds.toFixed(1)),
        peakRssMiB: Math.round(calm.peakRssBytes / MiB),
        loopDelayMaxMs: Math.round(calm.loopDelayMaxMs),
        cheapNormalMs: Number(calm.normalMs.toFixed(1)),
        cheapWorstMs: Math.round(calm.worstMs),
        cheapAnswered: calm.answered,
        told: answers.flatMap((a) =>
          a.stderr
            .split('\n')
            .filter((line) => /remote:|\[remote rejected\]|error:|fatal:/.test(line))
            .map((line) => line.trim()),
        ),
      }),
    );
  for (const target of targets) {
    const dir = path.join(dataDir, target.name);
    await must(['clone', '-q', `http://oauth2:${TOKEN}@${host}/${target.repo}.git`, dir]);
    // A sparse file: git reads zeros, the disk holds nothing.
    const file = path.join(dir, 'zeros.bin');
    fs.writeFileSync(file, '');
    fs.truncateSync(file, size);
    await must(['add', 'zeros.bin'], dir);
    await must(['commit', '-qm', 'zeros'], dir);
    fs.rmSync(file);
    const started = performance.now();
    const { answer, calm } = await whileHostile(server, () => git(['push', 'origin', target.ref], dir));
    report(target.name, (performance.now() - started) / 1000, calm, [answer]);
  }
  // The worst case: two such pushes at once (before, each took the server to about 5 GB).
  const started = performance.now();
  const { answer, calm } = await whileHostile(server, () =>
    Promise.all(targets.map((target) => git(['push', 'origin', target.ref], path.join(dataDir, target.name)))),
  );
  report('project and snippet at once', (performance.now() - started) / 1000, calm, answer);
} finally {
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.on('exit', resolve));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
