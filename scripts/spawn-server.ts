// Starts an entry point (by default `snippetd serve` on a free port) as its own process and resolves once it
// prints "listening on <url> ". Shared by the process tests and the load scripts, which run the compiled CLI
// as operators do.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The CLI the process tests run: under `npm test`, which builds once before its passes
 * (SNIPPETD_TEST_BUILT=1), the compiled one operators run, which starts on a fifth of the CPU (from the
 * source through tsx, each of a pass's hundred-odd starts cost about 0.95 s of CPU); a test file run on
 * its own runs the source, so that it never runs a stale build.
 */
export const CLI =
  process.env.SNIPPETD_TEST_BUILT === '1' ? path.join(ROOT, 'dist', 'cli.js') : path.join(ROOT, 'src', 'cli.ts');

let built = false;
/**
 * The compiled CLI (`dist/cli.js`), built from the current source on first use: a load script measures what
 * `npm start` runs, not the development runner, and never a stale build.
 */
export function compiledCli(): string {
  if (!built) execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { stdio: 'ignore' });
  built = true;
  return path.join(ROOT, 'dist', 'cli.js');
}

/**
 * The node flags `npm start` runs the server with (package.json's start script): a load script runs the
 * compiled CLI with the same ones, so that it measures the process operators run.
 */
const START_FLAGS: string[] = (() => {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const flags = /\bnode((?: --\S+)*) dist\/cli\.js\b/.exec(scripts.start);
  if (!flags) throw new Error(`package.json's start script does not run node dist/cli.js: ${scripts.start}`);
  return flags[1].split(' ').filter(Boolean);
})();

export interface Spawned {
  url: string;
  child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output: () => string;
}

/** Node's arguments that run the source (through tsx) or the compiled CLI (with `npm start`'s flags). */
const nodeArgs = (typescript: boolean) => (typescript ? ['--import', 'tsx'] : START_FLAGS);

/** The command and arguments that run the CLI with `args` (for spawn, spawnSync and execFile). */
export const cliCommand = (...args: string[]): [string, string[]] => [
  process.execPath,
  [...nodeArgs(CLI.endsWith('.ts')), CLI, ...args],
];

/**
 * A `.ts` file among `args` runs through tsx; otherwise plain node runs them, with `npm start`'s flags.
 * `cpu`: run the process on that CPU alone (Linux `taskset`), as the load scripts do to keep client and
 * server apart.
 */
export function spawnServer(
  env: NodeJS.ProcessEnv,
  args: string[] = [CLI, 'serve', '--port', '0'],
  cpu?: number,
): Promise<Spawned> {
  const command = [process.execPath, ...nodeArgs(args.some((arg) => arg.endsWith('.ts'))), ...args];
  if (cpu !== undefined) command.unshift('taskset', '-c', String(cpu));
  // One process unless the caller asks for workers: a test's server starts fast and logs one stream.
  const child = spawn(command[0], command.slice(1), { env: { SNIPPETD_WORKERS: '1', ...env } });
  let out = '';
  let listening = false;
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      // Looked for until found: searching the whole output again for every chunk of a server that logs each
      // request kept this process too busy to read it, and the server's writes waited.
      if (listening) return;
      const m = /listening on (http:\/\/\S+) /.exec(out);
      if (m) {
        listening = true;
        resolve({ url: m[1], child, output: () => out });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

export const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

/**
 * Turns off the raw-file limits (on by default, 300 requests a minute per file): a load script measures
 * how fast the server answers, and would otherwise measure 429s after the first few hundred requests.
 */
export async function withoutRateLimits(url: string, token: string): Promise<void> {
  const res = await fetch(`${url}/api/v4/application/settings`, {
    method: 'PUT',
    headers: { 'private-token': token, 'content-type': 'application/json' },
    body: JSON.stringify({ raw_blob_request_limit: 0, raw_blob_request_limit_unauthenticated: 0 }),
  });
  if (res.status !== 200) throw new Error(`turning off the rate limits answered ${res.status}`);
}

/** `snippetd serve`, compiled, for a load script: a fresh data directory, a known root token, quiet logs, no rate limits. */
export async function startBenchServer(opts: {
  dataDir: string;
  token: string;
  databaseUrl?: string;
}): Promise<{ url: string; pid: number; stop: () => void }> {
  const env = {
    ...process.env,
    SNIPPETD_DATA_DIR: opts.dataDir,
    SNIPPETD_INITIAL_ROOT_TOKEN: opts.token,
    SNIPPETD_LOG_LEVEL: 'warn',
    ...(opts.databaseUrl ? { SNIPPETD_DATABASE_URL: opts.databaseUrl } : {}),
  };
  const { url, child } = await spawnServer(env, [compiledCli(), 'serve', '--port', '0']);
  await withoutRateLimits(url, opts.token);
  return { url, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}
