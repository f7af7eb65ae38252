// Three `snippetd serve` nodes on one PostgreSQL schema (two of them with two workers each, one a single
// process), each with its own empty data directory, behind a
// round-robin HTTP proxy: what one node writes the others read at once; racing API updates and `git push`es
// through different nodes keep every acknowledged write and refuse the losers whole; each node in turn is
// killed with -9 in the middle of answering and replaced by a new one, while the others keep serving and
// nothing acknowledged is lost; a node started later still with an empty data directory serves every
// repository from the rows alone.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TEST_DB, postgresSchemaUrl, runGit, mustGit, REFUSED_PUSH, sleep } from '../helper.ts';
import { exited, spawnServer, type Spawned } from '../../scripts/spawn-server.ts';

const TOKEN = 'three-nodes-root-token-0123456789';
const JSON_HEADERS = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };

/** Hop-by-hop headers a proxy does not pass on (RFC 9110 §7.6.1), and Expect, which this proxy answers itself. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'expect'];

interface Proxy {
  url: string;
  /** The nodes requests go to, in turn; a test takes a dead node out as a load balancer's health check would. */
  backends: string[];
  /** Requests sent to each node (by URL). */
  sent: Map<string, number>;
  /** Requests each node (by URL) has not finished answering. */
  active: Map<string, number>;
  close(): Promise<void>;
}

/** A round-robin reverse proxy: method, path, headers and the streamed body to the next node in turn. */
async function startProxy(backends: string[]): Promise<Proxy> {
  let turn = 0;
  const proxy: Proxy = { url: '', backends: [...backends], sent: new Map(), active: new Map(), close: async () => {} };
  const server = http.createServer((req, res) => {
    const backend = proxy.backends[turn++ % proxy.backends.length];
    proxy.sent.set(backend, (proxy.sent.get(backend) ?? 0) + 1);
    proxy.active.set(backend, (proxy.active.get(backend) ?? 0) + 1);
    res.on('close', () => proxy.active.set(backend, proxy.active.get(backend)! - 1));
    const target = new URL(backend);
    const headers = { ...req.headers };
    for (const h of HOP_BY_HOP) delete headers[h];
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent: false },
      (up) => {
        const back = { ...up.headers };
        for (const h of HOP_BY_HOP) delete back[h];
        res.writeHead(up.statusCode ?? 502, back);
        up.pipe(res);
        up.on('error', () => res.destroy());
        up.on('aborted', () => res.destroy());
      },
    );
    upstream.on('error', () => {
      // The node went away: before an answer began, a 502 as a load balancer gives; after, the connection.
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain', 'x-dead-node': backend }).end();
      else res.destroy();
    });
    req.on('aborted', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}

interface Answer {
  status: number;
  text: string;
  json: any;
  headers: Headers;
}

async function call(base: string, method: string, url: string, body?: object): Promise<Answer> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: JSON_HEADERS,
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

/** Every absolute URL the API handed out, with its scheme and host replaced: nodes answer with their own. */
const hostless = (value: unknown) =>
  JSON.parse(
    JSON.stringify(value)
      .replace(/http:\/\/127\.0\.0\.1:\d+/g, 'BASE')
      .replace(/git@[^:"]+:/g, 'git@HOST:'),
  );

const git = runGit;

describe('three nodes on one PostgreSQL database', {
  skip: TEST_DB === 'postgres' ? false : 'needs PostgreSQL: several nodes share one database',
}, () => {
  let tmp: string;
  const nodes: Spawned[] = [];
  let drop: (() => Promise<void>) | undefined;
  let databaseUrl: string;
  let proxy: Proxy;
  let project: { id: number; path_with_namespace: string };
  /** Every snippet the tests made, for the node started last to serve. */
  const snippetIds: number[] = [];
  let clones = 0;

  const env = (dataDir: string): NodeJS.ProcessEnv => ({
    ...process.env,
    SNIPPETD_DATA_DIR: dataDir,
    SNIPPETD_DATABASE_URL: databaseUrl,
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
  });
  /**
   * A node as operators run it: two workers (`serve`'s default on a machine of two CPUs), or one process;
   * the tests mix both.
   */
  const startNode = async (name: string, workers: 1 | 2) => {
    const dataDir = path.join(tmp, `node-${name}`);
    fs.mkdirSync(dataDir);
    const node = await spawnServer({ ...env(dataDir), SNIPPETD_WORKERS: String(workers) });
    nodes.push(node);
    return { node, dataDir };
  };
  const repoUrl = (base: string, id: number) =>
    `${base.replace('://', `://root:${TOKEN}@`)}/${project.path_with_namespace}/snippets/${id}.git`;
  const snippetUrl = (id: number) => `/api/v4/projects/${project.id}/snippets/${id}`;
  /** A fresh clone (non-bare, main checked out) of a snippet through `base`. */
  const freshClone = async (base: string, id: number) => {
    const dir = path.join(tmp, `clone-${clones++}`);
    await mustGit(['clone', '-q', repoUrl(base, id), dir]);
    return dir;
  };
  const createSnippet = async (base: string, files: Record<string, string>, visibility = 'private') => {
    const res = await call(base, 'POST', `/api/v4/projects/${project.id}/snippets`, {
      title: 'shared',
      visibility,
      files: Object.entries(files).map(([file_path, content]) => ({ file_path, content })),
    });
    assert.equal(res.status, 201, res.text);
    snippetIds.push(res.json.id);
    return res.json;
  };
  /** The fresh clone agrees with the API: the same paths, each file's raw at main byte for byte. */
  const assertApiMatchesClone = async (base: string, id: number, dir: string) => {
    const files = (await mustGit(['ls-files'], dir)).split('\n').sort();
    const snippet = await call(base, 'GET', snippetUrl(id));
    assert.equal(snippet.status, 200, snippet.text);
    assert.deepEqual(snippet.json.files.map((f: { path: string }) => f.path).sort(), files);
    for (const file of files) {
      const raw = await fetch(`${base}${snippetUrl(id)}/files/main/${encodeURIComponent(file)}/raw`, {
        headers: JSON_HEADERS,
      });
      assert.equal(raw.status, 200, file);
      assert.deepEqual(Buffer.from(await raw.arrayBuffer()), fs.readFileSync(path.join(dir, file)), file);
    }
  };

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-three-nodes-'));
    const schema = await postgresSchemaUrl();
    databaseUrl = schema.url;
    drop = schema.drop;
    // The first node migrates the empty schema and creates root; the next two start together on it.
    const a = await startNode('a', 2);
    await Promise.all([startNode('b', 1), startNode('c', 2)]);
    proxy = await startProxy(nodes.map((n) => n.url));
    const res = await call(a.node.url, 'POST', '/api/v4/projects', { path: 'shared', visibility: 'public' });
    assert.equal(res.status, 201, res.text);
    project = res.json;
  });

  after(async () => {
    await proxy?.close();
    for (const node of nodes) {
      if (node.child.exitCode === null && node.child.signalCode === null) {
        node.child.kill('SIGTERM');
        await exited(node.child);
      }
    }
    await drop?.();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('a snippet created through node A is read through nodes B and C at once', async () => {
    const [a, b, c] = nodes;
    const created = await createSnippet(
      a.url,
      { 'a.txt': 'alpha\n', 'dir/b.txt': 'beta\n', 'z.md': '# zed\n' },
      'public',
    );
    const rawPath = new URL(created.raw_url).pathname;
    assert.equal(rawPath, `/${project.path_with_namespace}/-/snippets/${created.id}/raw`);
    const readThrough = async (base: string) => {
      const [snippet, raw, fileRaw, webRaw] = await Promise.all([
        call(base, 'GET', snippetUrl(created.id)),
        call(base, 'GET', `${snippetUrl(created.id)}/raw`),
        call(base, 'GET', `${snippetUrl(created.id)}/files/main/dir%2Fb.txt/raw`),
        fetch(`${base}${rawPath}`),
      ]);
      assert.equal(snippet.status, 200, snippet.text);
      assert.deepEqual(hostless(snippet.json), hostless(created));
      assert.deepEqual(
        snippet.json.files.map((f: { path: string }) => f.path),
        ['a.txt', 'dir/b.txt', 'z.md'],
      );
      assert.equal(raw.status, 200);
      assert.equal(raw.text, 'alpha\n');
      assert.equal(fileRaw.status, 200);
      assert.equal(fileRaw.text, 'beta\n');
      assert.equal(webRaw.status, 200);
      assert.equal(webRaw.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.equal(await webRaw.text(), 'alpha\n');
    };
    await Promise.all([readThrough(b.url), readThrough(c.url)]);

    // A write through one node is what the others answer next, the access it changes included.
    const updated = await call(b.url, 'PUT', snippetUrl(created.id), {
      title: 'renamed',
      files: [{ action: 'update', file_path: 'a.txt', content: 'alpha 2\n' }],
    });
    assert.equal(updated.status, 200, updated.text);
    await Promise.all(
      [a.url, c.url].map(async (base) => {
        const [snippet, raw, webRaw] = await Promise.all([
          call(base, 'GET', snippetUrl(created.id)),
          call(base, 'GET', `${snippetUrl(created.id)}/raw`),
          fetch(`${base}${rawPath}`),
        ]);
        assert.equal(snippet.status, 200, snippet.text);
        assert.deepEqual(hostless(snippet.json), hostless(updated.json));
        assert.equal(snippet.json.title, 'renamed');
        assert.equal(raw.text, 'alpha 2\n');
        assert.equal(webRaw.status, 200);
        assert.equal(await webRaw.text(), 'alpha 2\n');
      }),
    );
    const hidden = await call(c.url, 'PUT', snippetUrl(created.id), { visibility: 'private' });
    assert.equal(hidden.status, 200, hidden.text);
    await Promise.all(
      [a.url, b.url].map(async (base) => {
        const anonymous = await fetch(`${base}/api/v4/projects/${project.id}/snippets/${created.id}/raw`);
        assert.equal(anonymous.status, 404);
        assert.deepEqual(await anonymous.json(), { message: '404 Snippet Not Found' });
        // Hidden from a visitor, the web raw sends them to sign in, as every hidden page does.
        const webRaw = await fetch(`${base}${rawPath}`, { redirect: 'manual' });
        assert.equal(webRaw.status, 302);
        assert.equal(webRaw.headers.get('location'), `/users/sign_in?redirect_to=${encodeURIComponent(rawPath)}`);
      }),
    );
  });

  it('racing API updates and git pushes through different nodes: every acknowledged write kept, losers refused whole', async () => {
    const snippet = await createSnippet(proxy.url, { 'base.txt': 'base\n' });
    const WORKERS = 3;
    const ROUNDS = 4;
    const PUSHERS = 3;
    const ATTEMPTS = 5;
    const apiAcked: string[] = [];
    const apiRefused: { content: string; status: number; body: string }[] = [];
    const lastApi = new Map<string, string>();
    const pushAcked: { sha: string; file: string; content: string }[] = [];
    const pushRefused: { sha: string; content: string }[] = [];
    const lastPush = new Map<string, string>();

    // Every pusher starts from a clone of the same commit, so their first pushes race on the server.
    const workTrees = await Promise.all(Array.from({ length: PUSHERS }, () => freshClone(proxy.url, snippet.id)));

    const apiWorker = async (w: number) => {
      const file = `api-${w}.txt`;
      for (let r = 0; r < ROUNDS; r++) {
        const content = `api ${w} round ${r}`;
        const res = await call(proxy.url, 'PUT', snippetUrl(snippet.id), {
          files: [{ action: r === 0 ? 'create' : 'update', file_path: file, content }],
        });
        if (res.status >= 200 && res.status < 300) {
          assert.equal(res.status, 200, res.text);
          assert.equal(res.json.id, snippet.id);
          assert.ok(
            res.json.files.some((f: { path: string }) => f.path === file),
            res.text,
          );
          apiAcked.push(content);
          lastApi.set(file, content);
        } else {
          apiRefused.push({ content, status: res.status, body: res.text });
          if (r === 0) return; // the file was never created: its updates would be refused too
        }
      }
    };

    const pusher = async (p: number) => {
      const dir = workTrees[p];
      const file = `push-${p}.txt`;
      for (let k = 0; k < ATTEMPTS; k++) {
        const content = `push ${p} attempt ${k}`;
        fs.writeFileSync(path.join(dir, file), `${content}\n`);
        await mustGit(['add', file], dir);
        await mustGit(['commit', '-q', '-m', content], dir);
        const sha = await mustGit(['rev-parse', 'HEAD'], dir);
        const pushed = await git(['push', 'origin', 'main'], dir);
        if (pushed.code === 0) {
          pushAcked.push({ sha, file, content: `${content}\n` });
          lastPush.set(file, `${content}\n`);
          if (pushAcked.filter((a) => a.file === file).length === 2) return;
        } else {
          assert.match(pushed.stderr, REFUSED_PUSH, `push ${p} attempt ${k} failed otherwise: ${pushed.stderr}`);
          pushRefused.push({ sha, content });
        }
        await mustGit(['fetch', '-q', 'origin'], dir);
        await mustGit(['reset', '-q', '--hard', 'origin/main'], dir);
      }
    };

    await Promise.all([
      ...Array.from({ length: WORKERS }, (_, w) => apiWorker(w)),
      ...Array.from({ length: PUSHERS }, (_, p) => pusher(p)),
    ]);

    // API updates serialise on the snippet's row lock and build on the head they find: none loses.
    assert.deepEqual(apiRefused, []);
    assert.equal(apiAcked.length, WORKERS * ROUNDS);
    assert.ok(pushAcked.length > 0, 'some push was taken');
    for (const node of nodes) assert.ok((proxy.sent.get(node.url) ?? 0) > 0, `${node.url} served requests`);

    const dir = await freshClone(proxy.url, snippet.id);
    const commits = Number(await mustGit(['rev-list', '--count', 'main'], dir));
    assert.equal(
      commits,
      1 + apiAcked.length + pushAcked.length,
      `${apiAcked.length} API updates and ${pushAcked.length} pushes acknowledged (${pushRefused.length} pushes refused)`,
    );
    assert.equal(await mustGit(['rev-list', '--merges', '--count', 'main'], dir), '0');
    const log = await mustGit(['log', '-p', 'main'], dir);
    for (const content of apiAcked)
      assert.ok(log.includes(`\n+${content}\n`), `acknowledged "${content}" is in the log`);
    for (const ack of pushAcked) {
      assert.equal((await git(['merge-base', '--is-ancestor', ack.sha, 'main'], dir)).code, 0, ack.content);
      const raw = await call(proxy.url, 'GET', `${snippetUrl(snippet.id)}/files/${ack.sha}/${ack.file}/raw`);
      assert.equal(raw.status, 200, raw.text);
      assert.equal(raw.text, ack.content);
    }
    // A refused push left nothing: its commit is not in a fresh clone, its content in no commit.
    for (const lost of pushRefused) {
      assert.notEqual((await git(['cat-file', '-e', lost.sha], dir)).code, 0, `refused ${lost.sha} is not there`);
      assert.ok(!log.includes(`\n+${lost.content}\n`), `refused "${lost.content}" is in no commit`);
      const raw = await call(proxy.url, 'GET', `${snippetUrl(snippet.id)}/files/${lost.sha}/base.txt/raw`);
      assert.equal(raw.status, 404, raw.text);
      assert.deepEqual(raw.json, { message: '404 Reference Not Found' });
    }
    const fsck = await git(['fsck', '--strict'], dir);
    assert.equal(fsck.code, 0, fsck.stderr);
    // Each writer's last acknowledged content is the file's content now.
    for (const [file, content] of [...lastApi, ...lastPush])
      assert.equal(fs.readFileSync(path.join(dir, file), 'utf8'), content, file);
    await assertApiMatchesClone(proxy.url, snippet.id, dir);
  });

  it('kill -9 of each node in turn during concurrent writes, each replaced by a new one: the others keep serving, nothing acknowledged is lost', async () => {
    const [a, b, c] = nodes;
    interface Tracked {
      id: number;
      acked: string[];
      /** What a.txt may hold now: the last acknowledged content and whatever was in flight after it. */
      possible: Set<string>;
      /** Writes whose outcome is unknown: in flight when a node died. */
      unknown: number;
      /** Acknowledged writes by how many kills had happened when they were sent. */
      ackedByPhase: number[];
    }
    const FILE = 'a.txt';
    const WORKERS = 3;
    const tracked: Tracked[] = [];
    for (let w = 0; w < WORKERS; w++) {
      const s = await createSnippet(proxy.url, { [FILE]: `worker ${w}`, 'keep.txt': 'kept\n' });
      tracked.push({ id: s.id, acked: [], possible: new Set([`worker ${w}`]), unknown: 0, ackedByPhase: [0, 0, 0, 0] });
    }
    const pushed = await createSnippet(proxy.url, { 'p.txt': 'start\n' });
    const pushTrees = await Promise.all([freshClone(proxy.url, pushed.id), freshClone(proxy.url, pushed.id)]);
    const pushAcked: { sha: string; content: string }[] = [];
    let pushUnknown = 0;

    // A request sent while no node was dying, and answered before the next kill, went to live nodes only:
    // it must succeed (a push may only lose its race). Any other may have met a dying node.
    let kills = 0;
    let dying = false;
    const sent = () => (dying ? -1 : kills);
    const clean = (phase: number) => phase >= 0 && !dying && phase === kills;
    let stop = false;
    const failuresThroughLiveNodes: string[] = [];

    const worker = async (w: number) => {
      const entry = tracked[w];
      for (let i = 0; !stop && i < 5000; i++) {
        const content = `worker ${w} version ${i}`;
        const phase = sent();
        let res: Answer | null = null;
        let error: unknown = null;
        try {
          res = await call(proxy.url, 'PUT', snippetUrl(entry.id), {
            files: [{ action: 'update', file_path: FILE, content }],
          });
        } catch (e) {
          error = e;
        }
        if (res?.status === 200) {
          entry.acked.push(content);
          entry.possible = new Set([content]);
          if (phase >= 0) entry.ackedByPhase[phase]++;
        } else if (clean(phase)) {
          failuresThroughLiveNodes.push(`PUT ${entry.id}: ${res ? `${res.status} ${res.text}` : error}`);
        } else {
          // A request a dying node dropped may or may not have committed.
          entry.unknown++;
          entry.possible.add(content);
        }
      }
    };
    const pusher = async (p: number) => {
      const dir = pushTrees[p];
      for (let k = 0; !stop && k < 100; k++) {
        const content = `pusher ${p} push ${k}\n`;
        fs.writeFileSync(path.join(dir, 'p.txt'), content);
        await mustGit(['commit', '-q', '-am', content], dir);
        const sha = await mustGit(['rev-parse', 'HEAD'], dir);
        const phase = sent();
        const r = await git(['push', 'origin', 'main'], dir);
        if (r.code === 0) pushAcked.push({ sha, content });
        else if (clean(phase)) {
          // Through live nodes a push fails only by losing its race.
          if (!REFUSED_PUSH.test(r.stderr)) failuresThroughLiveNodes.push(`push: ${r.stderr}`);
        } else pushUnknown++;
        let synced = false;
        for (let attempt = 0; attempt < 5 && !synced; attempt++) {
          const fetchPhase = sent();
          const fetched = await git(['fetch', '-q', 'origin'], dir);
          synced = fetched.code === 0;
          if (!synced && clean(fetchPhase)) failuresThroughLiveNodes.push(`fetch: ${fetched.stderr}`);
        }
        assert.ok(synced, 'fetch through the live nodes works');
        await mustGit(['reset', '-q', '--hard', 'origin/main'], dir);
      }
    };

    const running = [...Array.from({ length: WORKERS }, (_, w) => worker(w)), ...pushTrees.map((_, p) => pusher(p))];
    await sleep(1500);
    let live = [a, b, c];
    const inFlightAtKill: number[] = [];
    // C, then A (the node that migrated the schema), then B; each replaced by a new node before the next kill.
    for (const [k, victim] of [c, a, b].entries()) {
      // Killed in the middle of answering: wait (a bounded while) for a request to be in flight on it.
      for (let i = 0; i < 200 && !proxy.active.get(victim.url); i++) await sleep(5);
      inFlightAtKill.push(proxy.active.get(victim.url) ?? 0);
      dying = true;
      victim.child.kill('SIGKILL');
      // The proxy's health check notices at once: from now on only the others get requests.
      live = live.filter((node) => node !== victim);
      proxy.backends = live.map((node) => node.url);
      await exited(victim.child);
      kills++;
      dying = false;
      // Its replacement: a new process with an empty data directory of its own, taken into the rotation.
      const { node } = await startNode(`replacement-${k}`, k % 2 === 0 ? 2 : 1);
      live.push(node);
      proxy.backends = live.map((n) => n.url);
      await sleep(1000);
    }
    stop = true;
    await Promise.all(running);

    assert.deepEqual(failuresThroughLiveNodes, [], 'every request through live nodes alone succeeded');
    for (const entry of tracked)
      assert.ok(
        entry.ackedByPhase.every((n) => n > 0),
        `snippet ${entry.id}: writes acknowledged before the kills and after each (${entry.ackedByPhase})`,
      );
    assert.ok(pushAcked.length > 0, 'pushes were taken');
    assert.ok(
      inFlightAtKill.every((n) => n > 0),
      `each node died with requests in flight (${inFlightAtKill})`,
    );

    // The nodes now serving answer directly, too.
    for (const node of live) {
      const res = await call(node.url, 'GET', snippetUrl(tracked[0].id));
      assert.equal(res.status, 200, res.text);
    }
    for (const entry of tracked) {
      const dir = await freshClone(proxy.url, entry.id);
      const commits = Number(await mustGit(['rev-list', '--count', 'main'], dir));
      assert.ok(
        commits >= 1 + entry.acked.length && commits <= 1 + entry.acked.length + entry.unknown,
        `snippet ${entry.id}: ${commits} commits, ${entry.acked.length} acknowledged, ${entry.unknown} unknown`,
      );
      const log = await mustGit(['log', '-p', 'main'], dir);
      for (const content of entry.acked) assert.ok(log.includes(`\n+${content}\n`), `"${content}" kept`);
      const now = fs.readFileSync(path.join(dir, FILE), 'utf8');
      assert.ok(entry.possible.has(now), `snippet ${entry.id}: "${now}" was never the latest write`);
      assert.equal(fs.readFileSync(path.join(dir, 'keep.txt'), 'utf8'), 'kept\n');
      const fsck = await git(['fsck', '--strict'], dir);
      assert.equal(fsck.code, 0, fsck.stderr);
      await assertApiMatchesClone(proxy.url, entry.id, dir);
    }
    const dir = await freshClone(proxy.url, pushed.id);
    const commits = Number(await mustGit(['rev-list', '--count', 'main'], dir));
    assert.ok(
      commits >= 1 + pushAcked.length && commits <= 1 + pushAcked.length + pushUnknown,
      `${commits} commits, ${pushAcked.length} pushes acknowledged, ${pushUnknown} unknown`,
    );
    for (const ack of pushAcked)
      assert.equal((await git(['merge-base', '--is-ancestor', ack.sha, 'main'], dir)).code, 0, ack.content);
    const fsck = await git(['fsck', '--strict'], dir);
    assert.equal(fsck.code, 0, fsck.stderr);
    await assertApiMatchesClone(proxy.url, pushed.id, dir);
  });

  it('a node started later still, with an empty data directory, serves every snippet, copying no files', async () => {
    const { node: d, dataDir } = await startNode('d', 2);
    for (const id of snippetIds) {
      const [viaD, viaProxy] = await Promise.all([
        call(d.url, 'GET', snippetUrl(id)),
        call(proxy.url, 'GET', snippetUrl(id)),
      ]);
      assert.equal(viaD.status, 200, viaD.text);
      assert.deepEqual(hostless(viaD.json), hostless(viaProxy.json));
      const dir = await freshClone(d.url, id);
      const reference = await freshClone(proxy.url, id);
      assert.equal(await mustGit(['rev-parse', 'main'], dir), await mustGit(['rev-parse', 'main'], reference));
      const fsck = await git(['fsck', '--strict'], dir);
      assert.equal(fsck.code, 0, fsck.stderr);
      await assertApiMatchesClone(d.url, id, dir);
    }
    // All the new node keeps on disk is its own serving caches, built from the rows.
    assert.deepEqual(fs.readdirSync(dataDir), ['cache']);
    assert.deepEqual(fs.readdirSync(path.join(dataDir, 'cache')), ['git']);
  });
});
