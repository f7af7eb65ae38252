// Test harness: a real app over a real database. SNIPPETD_TEST_DB=sqlite (default) gives each app its
// own SQLite file in a temporary directory; SNIPPETD_TEST_DB=postgres gives each app its own schema in
// the PostgreSQL server named by SNIPPETD_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { execFileSync, spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import pino, { type Logger } from 'pino';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Insertable, Kysely } from 'kysely';
import type { Database, SnippetsTable } from '../src/storage/db/schema.ts';
import { exited, spawnServer } from '../scripts/spawn-server.ts';
import { defaults, type Config } from '../src/config.ts';

export const TEST_DB = (process.env.SNIPPETD_TEST_DB ?? 'sqlite') as 'sqlite' | 'postgres';
export const POSTGRES_URL = process.env.SNIPPETD_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const ROOT_TOKEN = 'root-token-for-tests-0123456789';

export type Response = LightMyRequestResponse & { json: any };
export type Headers = Record<string, string | undefined>;

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  /**
   * A bare git repository with what the database holds for a project's or a snippet's repository: this
   * node's serving cache, brought up to date from the rows (null when there is no such repository).
   */
  gitDir(kind: 'project' | 'snippet', ownerId: number): Promise<string | null>;
  /** Stores what git commands changed in gitDir()'s repository back into the rows (storage/git/import.ts). */
  importGitDir(kind: 'project' | 'snippet', ownerId: number): Promise<void>;
  /** app.inject with the JSON body parsed into `json` (undefined when the body is not JSON). */
  request(options: InjectOptions & { token?: string | null }): Promise<Response>;
  /**
   * A request to /api/v4<url> as the holder of `token` (null: anonymous). An object payload is sent as JSON;
   * a string payload is sent as it is (give its content-type in `headers`).
   */
  api(
    method: string,
    url: string,
    token: string | null,
    payload?: object | string,
    headers?: Headers,
  ): Promise<Response>;
  /** Like api(), asserting the status; answers the whole response. */
  expect(
    method: string,
    url: string,
    token: string | null,
    payload: object | string | undefined,
    status: number,
    headers?: Headers,
  ): Promise<Response>;
  /** Like api(), asserting the status; answers the parsed body. */
  ok(
    method: string,
    url: string,
    token: string | null,
    payload: object | string | undefined,
    status: number,
    headers?: Headers,
  ): Promise<any>;
  /** Like api(), asserting that the request succeeded (any 2xx); answers the parsed body. */
  must(method: string, url: string, token: string | null, payload?: object | string, headers?: Headers): Promise<any>;
  /**
   * Like api(), asserting a refusal: the status, the JSON body (deep-equal) and `Content-Type: application/json`
   * (docs/gitlab-compatibility.md#d11). Answers the whole response.
   */
  fails(
    method: string,
    url: string,
    token: string | null,
    payload: object | string | undefined,
    status: number,
    body: unknown,
  ): Promise<Response>;
  /**
   * A request over a real socket to the listening app (`app.listen` first), the path sent byte for byte:
   * app.inject, like fetch, parses the URL the WHATWG way and resolves '%2E%2E' and '%2E' segments away.
   * Headers come back exactly as Node received them; no token is added.
   */
  socket(method: string, path: string, headers?: Record<string, string>): Promise<SocketResponse>;
  /** Creates a user through the API (as root) and a personal access token for them. */
  user(
    username: string,
    opts?: { admin?: boolean; external?: boolean; scopes?: string[] },
  ): Promise<{ id: number; username: string; token: string }>;
  close(): Promise<void>;
}

export interface SocketResponse {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, undefined when it is not JSON. */
  json: any;
}

export const MULTIPART_BOUNDARY = '----snippetdTestBoundary7MA4YWxkTrZu0gW';

/** A multipart/form-data body built by hand, one text field per [name, value] pair, in order. */
export function multipart(fields: [string, string][], boundary = MULTIPART_BOUNDARY): string {
  const parts = fields.map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  return `${parts.join('')}--${boundary}--\r\n`;
}

function parseJson(body: string): unknown {
  try {
    return body ? JSON.parse(body) : undefined;
  } catch {
    return undefined;
  }
}

export async function postgresSchemaUrl(): Promise<{ url: string; drop: () => Promise<void> }> {
  const schema = `t_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: POSTGRES_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}

/**
 * A data directory and a database for a real snippetd process (or the CLI): a SQLite file inside the
 * directory, or a fresh PostgreSQL schema. `remove` drops both.
 */
export async function processStorage(
  prefix: string,
): Promise<{ dataDir: string; databaseUrl: string; remove: () => Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const schema = TEST_DB === 'postgres' ? await postgresSchemaUrl() : null;
  return {
    dataDir,
    databaseUrl: schema ? schema.url : `sqlite:${path.join(dataDir, 'snippetd.sqlite3')}`,
    remove: async () => {
      await schema?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A real `snippetd serve` process on storage of its own (processStorage), its administrator's token `token`,
 * logging at warn; `stop` ends it and removes the storage. `args`: another CLI to run, as spawnServer's.
 */
export async function processServer(prefix: string, token: string, env: NodeJS.ProcessEnv = {}, args?: string[]) {
  const storage = await processStorage(prefix);
  const serverEnv = {
    ...process.env,
    SNIPPETD_DATA_DIR: storage.dataDir,
    SNIPPETD_DATABASE_URL: storage.databaseUrl,
    SNIPPETD_INITIAL_ROOT_TOKEN: token,
    SNIPPETD_LOG_LEVEL: 'warn',
    ...env,
  };
  const server = await spawnServer(serverEnv, args).catch(async (error) => {
    await storage.remove();
    throw error;
  });
  return {
    server,
    /** The server's environment, for a CLI command on the same storage. */
    env: serverEnv,
    stop: async () => {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGTERM');
        await exited(server.child);
      }
      await storage.remove();
    },
  };
}

/**
 * The whole suite's log, for the check that tokens, passwords and session cookies are never logged: with
 * SNIPPETD_TEST_LOG_DIR set (scripts/test.mjs sets it), every test app logs at debug into that directory,
 * and every secret a test sends or is given is written beside the log; when the suite ends,
 * scripts/test.mjs greps the logs for each of them.
 */
const LOG_DIR = process.env.SNIPPETD_TEST_LOG_DIR;
let suiteLogger: Logger | undefined;
const recordedSecrets = new Set<string>();

async function suiteLog(): Promise<Logger | undefined> {
  if (!LOG_DIR) return undefined;
  const { createLogger } = await import('../src/logging.ts');
  suiteLogger ??= createLogger(
    'debug',
    pino.destination({ dest: path.join(LOG_DIR, `${process.pid}.log`), sync: true, mkdir: true }),
  );
  return suiteLogger;
}

/** Fields and query parameters whose values are secrets, in requests and in answers. */
const SECRET_NAMES = new Set([
  'password',
  'password_confirmation',
  'current_password',
  'new_password',
  'token',
  'private_token',
  'access_token',
  'job_token',
  'authenticity_token',
]);

/**
 * The secrets in a request a test sent and in the answer it got: header, cookie, query and body values. `body`:
 * the answer's body as request() parsed it once.
 */
function secretsOf(options: InjectOptions, res: LightMyRequestResponse, body: unknown): string[] {
  const found: string[] = [];
  // A walk with a list of its own, not recursion: tests send JSON nested 100,000 deep.
  const fromFields = (value: unknown): void => {
    const pending = [value];
    while (pending.length) {
      const v = pending.pop();
      if (!v || typeof v !== 'object') continue;
      for (const [key, field] of Object.entries(v)) {
        if (SECRET_NAMES.has(key) && typeof field === 'string') found.push(field);
        else pending.push(field);
      }
    }
  };
  const fromQuery = (text: string) => {
    for (const [key, v] of new URLSearchParams(text)) if (SECRET_NAMES.has(key)) found.push(v);
  };
  // A Cookie header holds name=value pairs; each Set-Cookie line one, then its attributes (Path=…).
  const cookieValues = (pairs: string[]) => {
    for (const pair of pairs) found.push(pair.slice(pair.indexOf('=') + 1).trim());
  };
  const headers = (options.headers ?? {}) as Record<string, unknown>;
  for (const name of ['private-token', 'job-token']) if (typeof headers[name] === 'string') found.push(headers[name]);
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const [scheme, credentials = ''] = authorization.split(' ');
    found.push(credentials);
    if (scheme.toLowerCase() === 'basic') {
      const pair = Buffer.from(credentials, 'base64').toString();
      found.push(pair.slice(pair.indexOf(':') + 1));
    }
  }
  if (typeof headers.cookie === 'string') cookieValues(headers.cookie.split(';'));
  for (const line of [res.headers['set-cookie'] ?? []].flat()) cookieValues([line.split(';')[0]]);
  const url = String(options.url ?? '');
  if (url.includes('?')) fromQuery(url.slice(url.indexOf('?') + 1));
  const payload = options.payload;
  if (typeof payload === 'string') {
    const parsed = parseJson(payload);
    if (parsed !== undefined) fromFields(parsed);
    else if (!payload.includes('\n')) fromQuery(payload);
  } else if (payload && !Buffer.isBuffer(payload)) fromFields(payload);
  fromFields(body);
  return found;
}

/**
 * Writes down secrets not seen before, each also as JSON and a URL would escape it (how a log line would
 * carry it); short values (a test's "x") would match log lines by chance.
 */
function recordSecrets(found: string[]): void {
  if (!LOG_DIR) return;
  const forms = found.flatMap((v) => [v, JSON.stringify(v).slice(1, -1), encodeURIComponent(v)]);
  const fresh = [...new Set(forms)].filter((v) => v.length >= 8 && !/[\r\n]/.test(v) && !recordedSecrets.has(v));
  if (!fresh.length) return;
  for (const v of fresh) recordedSecrets.add(v);
  fs.appendFileSync(path.join(LOG_DIR, `${process.pid}.secrets`), fresh.map((v) => `${v}\n`).join(''));
}

/**
 * The app's modules, loaded when a test first builds an app: a test that only starts servers of its own never
 * needs them, and loading them through tsx's module hooks costs a process about two seconds of CPU.
 */
const appModules = () => Promise.all([import('../src/app.ts'), import('../src/domain/bootstrap.ts')]);

export async function createTestApp(overrides: Partial<Config> = {}): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-test-'));
  const pgSchema = TEST_DB === 'postgres' ? await postgresSchemaUrl() : null;
  const config: Config = {
    ...defaults(dataDir),
    databaseUrl: pgSchema ? pgSchema.url : `sqlite:${path.join(dataDir, 'test.sqlite3')}`,
    logLevel: 'silent',
    initialRootToken: ROOT_TOKEN,
    ...overrides,
  };
  let built: FastifyInstance;
  try {
    const [{ buildApp }, { bootstrapRoot }] = await appModules();
    built = await buildApp(config, overrides.logLevel ? undefined : await suiteLog());
    await bootstrapRoot(built.store, config);
  } catch (error) {
    await pgSchema?.drop();
    throw error;
  }
  // Let go of once closed (below): the in-process test files share a process, and each file's tests keep their
  // TestApp reachable to the end of it, with all the app held (its caches, its kept answers, its pools' threads).
  let live: FastifyInstance | null = built;
  const appOf = (): FastifyInstance => {
    if (!live) throw new Error('this test app is closed');
    return live;
  };

  const request: TestApp['request'] = async ({ token = ROOT_TOKEN, headers, ...options }) => {
    const sent = { ...options, headers: { ...(token ? { 'private-token': token } : {}), ...headers } };
    const res = await appOf().inject(sent);
    // Parsed once, for the test and for the secrets in it; looked through only when the log check runs.
    const json = parseJson(res.body);
    if (LOG_DIR) recordSecrets(secretsOf(sent, res, json));
    return Object.assign(res, { json });
  };

  const api: TestApp['api'] = (method, url, token, payload, headers) =>
    request({
      method: method as InjectOptions['method'],
      url: `/api/v4${url}`,
      token,
      ...(headers && { headers: headers as InjectOptions['headers'] }),
      ...(payload !== undefined && { payload: payload as InjectOptions['payload'] }),
    });
  const expect: TestApp['expect'] = async (method, url, token, payload, status, headers) => {
    const res = await api(method, url, token, payload, headers);
    assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
    return res;
  };
  const ok: TestApp['ok'] = async (...args) => (await expect(...args)).json;
  const must: TestApp['must'] = async (method, url, token, payload, headers) => {
    const res = await api(method, url, token, payload, headers);
    assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json;
  };
  const fails: TestApp['fails'] = async (method, url, token, payload, status, body) => {
    const res = await api(method, url, token, payload);
    const what = `${method} ${url}${typeof payload === 'object' ? ` ${JSON.stringify(payload)}` : ''}`;
    assert.equal(res.statusCode, status, `${what}: ${res.body}`);
    assert.deepEqual(res.json, body, what);
    assert.equal(res.headers['content-type'], 'application/json', what);
    return res;
  };
  const socket: TestApp['socket'] = (method, urlPath, headers = {}) =>
    new Promise((resolve, reject) => {
      const { port } = appOf().server.address() as AddressInfo;
      const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body, json: parseJson(body) });
        });
      });
      req.on('error', reject);
      req.end();
    });

  const user: TestApp['user'] = async (username, opts = {}) => {
    const created = await request({
      method: 'POST',
      url: '/api/v4/users',
      payload: {
        username,
        email: `${username}@example.com`,
        name: username.toUpperCase(),
        admin: opts.admin ?? false,
        external: opts.external ?? false,
      },
    });
    if (created.statusCode !== 201) throw new Error(`creating ${username}: ${created.statusCode} ${created.body}`);
    const token = await request({
      method: 'POST',
      url: `/api/v4/users/${created.json.id}/personal_access_tokens`,
      payload: { name: 'test', scopes: opts.scopes ?? ['api'] },
    });
    if (token.statusCode !== 201) throw new Error(`token for ${username}: ${token.statusCode} ${token.body}`);
    return { id: created.json.id, username, token: token.json.token };
  };

  const gitDir: TestApp['gitDir'] = async (kind, ownerId) => {
    const app = appOf();
    const repo = await app.store.git.find(kind, ownerId);
    return repo && app.gitNode.caches.exclusive(repo.id, () => app.gitNode.caches.refresh(repo));
  };

  const importGitDir: TestApp['importGitDir'] = async (kind, ownerId) => {
    const app = appOf();
    const repo = (await app.store.git.find(kind, ownerId))!;
    const { importDirectory } = await import('../src/storage/git/import.ts');
    await app.store.transaction((tx) => importDirectory(repo.on(tx.kysely), app.gitNode.caches.dirOf(repo.id)));
  };

  return {
    get app() {
      return appOf();
    },
    config,
    gitDir,
    importGitDir,
    request,
    api,
    expect,
    ok,
    must,
    fails,
    socket,
    user,
    close: async () => {
      await appOf().close();
      live = null;
      await pgSchema?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs in to the pages through the sign-in form, as a browser does; answers the session cookie. */
export async function signInCookie(t: TestApp, login: string, password: string): Promise<string> {
  const form = await t.request({ method: 'GET', url: '/users/sign_in', token: null });
  const token = /name="authenticity_token" value="([^"]+)"/.exec(form.body)?.[1];
  const res = await t.request({
    method: 'POST',
    url: '/users/sign_in',
    token: null,
    headers: { cookie: `_snippetd_sign_in=${token}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ authenticity_token: token ?? '', login, password }).toString(),
  });
  assert.equal(res.statusCode, 303, res.body);
  const cookies = [res.headers['set-cookie']].flat() as string[];
  return cookies.find((c) => c.startsWith('_snippetd_session='))!.split(';')[0];
}

export interface GitRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** git's environment in tests: no prompt, no configuration of the machine's, one author and committer. */
const GIT_TEST_ENV = {
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Pusher',
  GIT_AUTHOR_EMAIL: 'pusher@example.com',
  GIT_COMMITTER_NAME: 'Pusher',
  GIT_COMMITTER_EMAIL: 'pusher@example.com',
};

/**
 * git in `dir` (a repository of gitDir(), say), run to its end with `input` on its stdin; its output, trimmed.
 * For a test's setup only: the test's own server must not be what git talks to (this waits for git).
 */
export const gitSync = (dir: string) => {
  // Without a directory git would run in this process's own: a test's update-ref once moved the project's main branch.
  if (!dir) throw new Error('gitSync needs a repository directory');
  return (args: string[], input?: string | Buffer): string =>
    execFileSync('git', args, { cwd: dir, input, encoding: 'utf8', env: GIT_TEST_ENV }).trim();
};
/**
 * The git client, asynchronously (a server in this process must keep answering meanwhile), as a fixed
 * author, never prompting and reading no user or system configuration.
 */
export function runGit(args: string[], cwd?: string): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: GIT_TEST_ENV });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const CHANGE_KINDS: Record<string, string> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  T: 'type changed',
};

/**
 * The oracle of the revisions list: each commit of the repository at `gitDir` (newest first) with its files as
 * the list words them, from `git log --raw --numstat -M` (a merge by its first parent).
 */
export async function gitLogChanges(gitDir: string): Promise<{ id: string; changes: string[] }[]> {
  const log = await runGit([
    '--git-dir',
    gitDir,
    'log',
    '--format=%x01%H',
    '--raw',
    '--numstat',
    '-M',
    '--diff-merges=first-parent',
    'HEAD',
  ]);
  return log.stdout
    .split('\x01')
    .slice(1)
    .map((entry) => {
      const lines = entry.trim().split('\n').filter(Boolean);
      const raw = lines.filter((l) => l.startsWith(':'));
      const stats = lines.slice(1 + raw.length);
      return {
        id: lines[0],
        changes: raw.map((line, i) => {
          const [meta, ...paths] = line.split('\t');
          const status = meta.split(' ')[4];
          const [added, deleted] = stats[i].split('\t');
          const similar = Number(status.slice(1));
          const similarity = status[0] === 'R' && similar < 100 ? ` (${similar}% similar)` : '';
          const name = paths.length === 2 ? `${paths[0]} → ${paths[1]}` : paths[0];
          return `${CHANGE_KINDS[status[0]]}${similarity} ${name} ${added === '-' ? 'binary' : `+${added} −${deleted}`}`;
        }),
      };
    });
}

/** A project of `token`'s holder (`repo`, a README on main) whose branch `side` is one commit ahead, adding a.txt. */
export async function projectWithSideBranch(t: TestApp, token: string): Promise<number> {
  const id = (await t.ok('POST', '/projects', token, { path: 'repo', initialize_with_readme: true }, 201)).id;
  await t.ok('POST', `/projects/${id}/repository/branches`, token, { branch: 'side', ref: 'main' }, 201);
  await t.ok(
    'POST',
    `/projects/${id}/repository/commits`,
    token,
    { branch: 'side', commit_message: 'a', actions: [{ action: 'create', file_path: 'a.txt', content: 'a\n' }] },
    201,
  );
  return id;
}

/** A project's ref row (its repository and commit), for tests that add ref rows straight, as a push leaves them. */
export function projectRefRow(t: TestApp, projectId: number, name = 'refs/heads/main') {
  return t.app.store.kysely
    .selectFrom('git_refs')
    .innerJoin('git_repositories', 'git_repositories.id', 'git_refs.repository_id')
    .select(['git_refs.repository_id', 'git_refs.oid'])
    .where('git_repositories.kind', '=', 'project')
    .where('git_repositories.owner_id', '=', projectId)
    .where('git_refs.name', '=', name)
    .executeTakeFirstOrThrow();
}

/** A user row written straight into a database, for tests of migrations and of storage below the domain. */
export async function insertUserRow(kysely: Kysely<Database>, createdAt: string): Promise<{ id: number }> {
  return kysely
    .insertInto('users')
    .values({
      username: 'u',
      email: 'u@x',
      name: 'U',
      state: 'active',
      admin: 0,
      external: 0,
      bot: 0,
      created_at: createdAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/**
 * A snippets row without files, as tests that insert many rows straight into the database write it (a list or
 * a title search reads rows, not git); `fields` replace the defaults (a public personal snippet).
 */
export function snippetRow(
  authorId: number,
  createdAt: string,
  fields: Partial<Omit<Insertable<SnippetsTable>, 'author_id'>> = {},
): Insertable<SnippetsTable> {
  return {
    project_id: null,
    author_id: authorId,
    title: 'row',
    description: null,
    visibility: 'public',
    file_name: '',
    content: '',
    head_commit: null,
    default_branch: 'main',
    created_at: createdAt,
    updated_at: createdAt,
    ...fields,
  };
}

/**
 * Until SQLite's search indexer has emptied its queue (storage/db/search-indexing.ts), within `ms`: what a test
 * of the index's own state waits for (searches answer the same before). PostgreSQL indexes with the rows.
 */
export async function untilSearchIndexed(db: Kysely<Database>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  const { sql } = await import('kysely');
  for (;;) {
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM search_index_queue`.execute(db);
    if (Number(rows[0].n) === 0) return;
    assert.ok(Date.now() < deadline, `the search index still has ${rows[0].n} sources queued`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** runGit that must succeed: its output, trimmed. */
export async function mustGit(args: string[], cwd?: string): Promise<string> {
  const r = await runGit(args, cwd);
  assert.equal(r.code, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** What a refused push prints: the client saw the branch move first, or the server's compare-and-swap lost. */
export const REFUSED_PUSH =
  /! \[rejected\] +main -> main \((fetch first|non-fast-forward)\)|remote: snippetd: the repository changed during the push; fetch and push again\s[\s\S]*! \[remote rejected\] main -> main \(pre-receive hook declined\)/;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** After `n` turns of the event loop: requests started a few turns apart, so that some land in a race's gap. */
export const turns = (n: number) =>
  Array.from({ length: n }).reduce<Promise<void>>(
    (p) => p.then(() => new Promise((resolve) => setImmediate(resolve))),
    Promise.resolve(),
  );

/**
 * A page the visitor may not see, as GitLab answers it: a 404 page to someone signed in; a visitor who is not
 * signed in is sent to sign in and then back (told nothing about whether the page exists).
 */
export function assertHiddenPage(res: Response, url: string, signedIn: boolean): void {
  const path = url.startsWith('http') ? new URL(url).pathname + new URL(url).search : url;
  if (signedIn) {
    assert.equal(res.statusCode, 404, `${path}: ${res.body.slice(0, 200)}`);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8', path);
    return;
  }
  assert.equal(res.statusCode, 302, `${path}: ${res.body.slice(0, 200)}`);
  assert.equal(res.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent(path)}`, path);
}

/**
 * Waits, when the wall clock is within `marginSeconds` of a minute's end, for the next minute. Rate limits count
 * in windows of a minute from the minute's start (storage/rate-counters.ts, as GitLab's), so a test whose
 * requests must fall into one window starts here: a window that ended halfway would let the last one through.
 */
export async function awayFromMinuteEnd(marginSeconds = 10): Promise<void> {
  const intoMinute = (Date.now() / 1000) % 60;
  if (60 - intoMinute < marginSeconds)
    await new Promise((resolve) => setTimeout(resolve, (60 - intoMinute) * 1000 + 50));
}
