// A real `snippetd serve` at log level debug (issue 16, Operators: logs): stdout is one JSON line per
// entry, every line of a request carries its id (the client's X-Request-Id when well-formed), and no
// secret a client sent — in a header, the query, a JSON or form body, a cookie, git's basic auth, or
// a session the server handed out — appears anywhere in the whole output. Git operations are counted
// in /-/metrics.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processStorage } from '../helper.ts';
import { exited, spawnServer, type Spawned } from '../../scripts/spawn-server.ts';

const secret = (what: string) => `${what}-${crypto.randomBytes(12).toString('hex')}`;
const ROOT_TOKEN = secret('root-token');
const SECRETS = {
  root: ROOT_TOKEN,
  privateTokenHeader: secret('private-token-header'),
  bearer: secret('bearer'),
  basic: secret('basic'),
  jobToken: secret('job-token'),
  queryPrivateToken: secret('query-private-token'),
  queryAccessToken: secret('query-access-token'),
  queryPassword: secret('query-password'),
  encodedNamePrivateToken: secret('encoded-name-private-token'),
  encodedNameAccessToken: secret('encoded-name-access-token'),
  cookie: secret('cookie'),
  jsonPassword: `Pw1-${secret('json-password')}`,
  formPassword: `Pw2-${secret('form-password')}`,
  multipartPassword: `Pw3-${secret('multipart-password')}`,
  signInPassword: `Pw4-${secret('sign-in-password')}`,
};

/** Tokens the test has the server make (and their encoded spellings): none may be logged either. */
const SECRETS_MADE: string[] = [];

function git(args: string[], cwd: string, home: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', args, {
      cwd,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        GIT_TERMINAL_PROMPT: '0',
        GIT_CONFIG_NOSYSTEM: '1',
      },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('logs of a real process', () => {
  let server: Spawned;
  let remove: () => Promise<void>;
  let work: string;
  before(async () => {
    const storage = await processStorage('snippetd-logs-');
    remove = storage.remove;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-logs-git-'));
    fs.writeFileSync(
      path.join(work, '.gitconfig'),
      '[user]\n\tname = T\n\temail = t@example.com\n[credential]\n\thelper =\n[init]\n\tdefaultBranch = main\n',
    );
    server = await spawnServer({
      ...process.env,
      SNIPPETD_DATA_DIR: storage.dataDir,
      SNIPPETD_DATABASE_URL: storage.databaseUrl,
      SNIPPETD_INITIAL_ROOT_TOKEN: ROOT_TOKEN,
      SNIPPETD_LOG_LEVEL: 'debug',
    });
  });
  after(async () => {
    if (server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
    fs.rmSync(work, { recursive: true, force: true });
    await remove();
  });

  it('writes JSON lines with request ids, and never a secret', async () => {
    const api = (url: string, init: RequestInit = {}) => fetch(`${server.url}/api/v4${url}`, init);
    const asRoot = { 'private-token': ROOT_TOKEN };
    const json = { ...asRoot, 'content-type': 'application/json' };

    // Headers.
    await api('/user', { headers: { 'private-token': SECRETS.privateTokenHeader, 'x-request-id': 'req-a' } });
    await api('/user', { headers: { authorization: `Bearer ${SECRETS.bearer}` } });
    await api('/user', {
      headers: { authorization: `Basic ${Buffer.from(`root:${SECRETS.basic}`).toString('base64')}` },
    });
    await api('/user', { headers: { 'job-token': SECRETS.jobToken } });
    await api('/user', { headers: { cookie: `_snippetd_session=${SECRETS.cookie}` } });
    // The query.
    await api(`/user?private_token=${SECRETS.queryPrivateToken}`);
    await api(`/user?per_page=1&access_token=${SECRETS.queryAccessToken}`);
    await api(`/users?password=${SECRETS.queryPassword}`, { headers: asRoot });
    // The query with names and values percent-encoded: tokens that authenticate (so the server reads them
    // as private_token and access_token), masked in the log however they were spelled.
    const everyByteEncoded = (text: string) =>
      [...Buffer.from(text)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
    const root = await (await api('/user', { headers: asRoot })).json();
    for (const [name, token] of [
      ['private_%74oken', SECRETS.encodedNamePrivateToken],
      ['%61ccess%5Ftoken', SECRETS.encodedNameAccessToken],
    ]) {
      const created = await api(`/users/${root.id}/personal_access_tokens`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ name: 'encoded', scopes: ['api'] }),
      });
      assert.equal(created.status, 201, await created.clone().text());
      const { token: made } = await created.json();
      SECRETS_MADE.push(made, everyByteEncoded(made));
      const asUser = await api(`/user?${name}=${everyByteEncoded(made)}`);
      assert.equal(asUser.status, 200, `${name}: ${await asUser.clone().text()}`);
      assert.equal((await asUser.json()).username, 'root');
      await api(`/user?${name}=${everyByteEncoded(token)}`);
      // Answered by no route (404), and by the pages: logged the same way.
      await api(`/no-such-route?${name}=${token}`);
      await fetch(`${server.url}/explore/snippets?${name}=${token}`);
    }
    // Bodies: JSON, form, multipart.
    const created = await api('/users', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ username: 'alice', email: 'a@example.com', name: 'A', password: SECRETS.jsonPassword }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const form = await api('/users', {
      method: 'POST',
      headers: { ...asRoot, 'content-type': 'application/x-www-form-urlencoded' },
      body: `username=bob&email=b%40example.com&name=B&password=${SECRETS.formPassword}`,
    });
    assert.equal(form.status, 201);
    const multipart = new FormData();
    for (const [k, v] of Object.entries({ username: 'carol', email: 'c@example.com', name: 'C' })) multipart.set(k, v);
    multipart.set('password', SECRETS.multipartPassword);
    assert.equal((await api('/users', { method: 'POST', headers: asRoot, body: multipart })).status, 201);
    const dave = await (
      await api('/users', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ username: 'dave', email: 'd@example.com', name: 'D', password: SECRETS.signInPassword }),
      })
    ).json();
    assert.ok(dave.id);

    // The sign-in page: its form token, the password, and the session cookie it hands out, used after.
    const page = await fetch(`${server.url}/users/sign_in`);
    const formCookie = String(page.headers.get('set-cookie')).split(';')[0];
    const formToken = /name="authenticity_token" value="([^"]+)"/.exec(await page.text())![1];
    const signIn = await fetch(`${server.url}/users/sign_in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie },
      body: `authenticity_token=${encodeURIComponent(formToken)}&login=dave&password=${SECRETS.signInPassword}`,
    });
    assert.equal(signIn.status, 303);
    const session = /_snippetd_session=([^;]+)/.exec(signIn.headers.getSetCookie().join('\n'))![1];
    assert.equal((await fetch(`${server.url}/`, { headers: { cookie: `_snippetd_session=${session}` } })).status, 200);

    // Git over HTTP with the root token as the basic-auth password: a clone and a push of a snippet.
    const project = await (await api('/projects', { method: 'POST', headers: json, body: '{"name":"logs"}' })).json();
    const snippet = await (
      await api(`/projects/${project.id}/snippets`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ title: 't', files: [{ file_path: 'a.txt', content: 'a' }] }),
      })
    ).json();
    const remote = `${server.url.replace('http://', `http://root:${ROOT_TOKEN}@`)}/${project.path_with_namespace}/snippets/${snippet.id}.git`;
    const clone = await git(['clone', remote, 'clone'], work, work);
    assert.equal(clone.code, 0, clone.out);
    fs.writeFileSync(path.join(work, 'clone', 'a.txt'), 'b');
    assert.equal((await git(['commit', '-qam', 'b'], path.join(work, 'clone'), work)).code, 0);
    const push = await git(['push', 'origin', 'HEAD'], path.join(work, 'clone'), work);
    assert.equal(push.code, 0, push.out);

    const metrics = await (await fetch(`${server.url}/-/metrics`)).text();
    assert.match(metrics, /^snippetd_git_operations_total\{operation="fetch",status="200"\} 1$/m);
    assert.match(metrics, /^snippetd_git_operations_total\{operation="push",status="200"\} 1$/m);
    // git asks without credentials first: that 401 is an operation refused.
    assert.match(metrics, /^snippetd_git_operations_total\{operation="fetch",status="401"\} 1$/m);
    assert.match(metrics, /^snippetd_git_pack_duration_seconds_count\{operation="push"\} 1$/m);
    assert.match(metrics, /^snippetd_git_pack_duration_seconds_count\{operation="fetch"\} [12]$/m);
    assert.match(metrics, /^snippetd_snippet_writes_total\{action="create"\} 1$/m);
    // The snippet's serving repository was built from the rows once, then found on disk by the later requests.
    assert.match(metrics, /^snippetd_cache_requests_total\{cache="git_serving",result="miss"\} 1$/m);
    assert.match(metrics, /^snippetd_cache_requests_total\{cache="git_serving",result="hit"\} [1-9]\d*$/m);

    // Requests that end without a route's answer: a URL Fastify refuses, a client that goes away mid-body.
    const { hostname, port } = new URL(server.url);
    const raw = async (request: string, closeAfterMs: number) => {
      const socket = net.connect(Number(port), hostname);
      await once(socket, 'connect');
      socket.write(request);
      await new Promise((resolve) => setTimeout(resolve, closeAfterMs));
      socket.destroy();
    };
    await raw('GET /api/v4/%zz HTTP/1.1\r\nHost: x\r\nX-Request-Id: bad-url\r\n\r\n', 300);
    const body = 'POST /api/v4/snippets HTTP/1.1\r\nHost: x\r\nX-Request-Id: went-away\r\n';
    await raw(`${body}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"ti`, 300);
    await new Promise((resolve) => setTimeout(resolve, 300));

    server.child.kill('SIGTERM');
    assert.equal(await exited(server.child), 0);
    const output = server.output();

    for (const [name, value] of Object.entries({ ...SECRETS, session, formToken })) {
      assert.ok(!output.includes(value), `${name} appears in the log`);
    }
    for (const value of SECRETS_MADE) assert.ok(!output.includes(value), `${value} appears in the log`);
    const lines = output.split('\n').filter(Boolean);
    const entries = lines.map((line) => JSON.parse(line) as Record<string, any>);
    // Every line of a request carries its id; the client's well-formed one is used.
    const requestLines = entries.filter((e) => e.req || e.res || e.err);
    assert.ok(requestLines.length > 20); // one line a request
    for (const e of requestLines) assert.equal(typeof e.reqId, 'string', JSON.stringify(e));
    // One line a request, once it is answered: what was asked, the answer's status and how long it took.
    const [answered, ...more] = entries.filter((e) => e.reqId === 'req-a');
    assert.deepEqual(more, []);
    assert.equal(answered.msg, 'request completed');
    assert.deepEqual(
      [answered.req.method, answered.req.url, answered.res],
      ['GET', '/api/v4/user', { statusCode: 401 }],
    );
    assert.equal(typeof answered.responseTime, 'number');
    const lineOf = (reqId: string) => entries.filter((e) => e.reqId === reqId).map((e) => [e.msg, e.req, e.res]);
    assert.deepEqual(lineOf('bad-url'), [
      ['request completed', { method: 'GET', url: '/api/v4/%zz', remoteAddress: '127.0.0.1' }, { statusCode: 400 }],
    ]);
    assert.deepEqual(lineOf('went-away'), [
      ['request aborted', { method: 'POST', url: '/api/v4/snippets' }, undefined],
    ]);
    assert.ok(entries.some((e) => e.req?.url === '/api/v4/user?private_token=[REDACTED]'));
    assert.ok(entries.some((e) => e.req?.url === '/api/v4/users?password=[REDACTED]'));
    assert.ok(entries.some((e) => e.req?.url === '/api/v4/user?private_%74oken=[REDACTED]'));
    assert.ok(entries.some((e) => e.req?.url === '/api/v4/user?%61ccess%5Ftoken=[REDACTED]'));
    // The start-up and shut-down lines are log lines too.
    assert.ok(entries.some((e) => e.level === 30 && e.msg.startsWith(`listening on ${server.url} (API at `)));
    assert.ok(entries.some((e) => e.msg === 'SIGTERM received, closing'));
  });
});
