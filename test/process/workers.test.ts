// `snippetd serve --workers 2` (cluster.ts) on the test database: one port answered by both workers; what
// one worker writes the other reads at once (the read cache's change epoch); racing API updates and git
// pushes through both keep every acknowledged write and refuse the losers whole (on SQLite the workers share
// one file); a rate limit and the protected paths throttle count the requests of both; root's token is made
// and told once; a worker killed with -9 is replaced while the port keeps answering, and /-/readiness fails
// until both serve again; SIGTERM lets a request in flight finish before everything exits; /-/metrics sums
// both workers. Ephemeral mode keeps one process.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { awayFromMinuteEnd, TEST_DB, postgresSchemaUrl, runGit, mustGit, REFUSED_PUSH, sleep } from '../helper.ts';
import { CLI, exited, spawnServer, type Spawned } from '../../scripts/spawn-server.ts';

/** Root's token, as the first start made it (the first test reads it); what requests send unless told. */
let rootToken = '';

interface Answer {
  status: number;
  text: string;
  json: any;
  headers: http.IncomingHttpHeaders;
}

let requests = 0;
/**
 * One request on a connection of its own (the primary hands each new connection to the next worker), with
 * an X-Request-Id the test can find in the log; `body` may be written in parts, the last after `between`.
 */
function call(
  base: string,
  method: string,
  url: string,
  options: { body?: object; token?: string | null; between?: () => Promise<void>; timeoutMs?: number } = {},
): Promise<Answer & { id: string }> {
  const id = `w-${process.pid}-${requests++}`;
  const { body, token = rootToken } = options;
  const text = body === undefined ? '' : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${url}`,
      {
        method,
        agent: false,
        headers: {
          'x-request-id': id,
          ...(token && { 'private-token': token }),
          ...(body !== undefined && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }),
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (data += chunk));
        res.on('end', () => {
          let json: any;
          try {
            json = JSON.parse(data);
          } catch {}
          resolve({ status: res.statusCode!, text: data, json, headers: res.headers, id });
        });
      },
    );
    req.on('error', reject);
    // A request never answered fails the test instead of hanging it.
    const timeout = options.timeoutMs ?? 30_000;
    req.setTimeout(timeout, () => req.destroy(new Error(`${method} ${url} (${id}): no answer in ${timeout} ms`)));
    if (options.between) {
      req.write(text.slice(0, 5));
      options.between().then(() => req.end(text.slice(5)), reject);
    } else req.end(text);
  });
}

/** The JSON log lines a server printed so far. */
const logLines = (server: Spawned) =>
  server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));

/** The worker (its id in the log) that answered the request with this X-Request-Id; its line may come later. */
const workerOf = (server: Spawned, requestId: string): Promise<number> =>
  until(
    `the log of ${requestId}`,
    () => logLines(server).find((line) => line.reqId === requestId && line.msg === 'request completed')?.worker,
  );

/** The pid of each worker serving now, by worker id, from the lines they logged. */
function workerPids(server: Spawned): Map<number, number> {
  const pids = new Map<number, number>();
  for (const line of logLines(server)) if (line.worker !== undefined) pids.set(line.worker, line.pid);
  return pids;
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe(`two workers on one ${TEST_DB} database`, () => {
  let tmp: string;
  let server: Spawned;
  let drop: (() => Promise<void>) | undefined;
  let clones = 0;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-workers-'));
    const schema = TEST_DB === 'postgres' ? await postgresSchemaUrl() : null;
    drop = schema?.drop;
    server = await spawnServer({
      ...process.env,
      SNIPPETD_DATA_DIR: path.join(tmp, 'data'),
      ...(schema && { SNIPPETD_DATABASE_URL: schema.url }),
      SNIPPETD_LOG_LEVEL: 'info',
      SNIPPETD_WORKERS: '2',
    });
  });

  after(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
    await drop?.();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('starts once: one listening line naming the workers, root and its token made and told once', async () => {
    const lines = logLines(server);
    const listening = lines.filter((line) => String(line.msg).startsWith('listening on'));
    assert.equal(listening.length, 1);
    assert.match(
      listening[0].msg,
      /^listening on http:\/\/127\.0\.0\.1:\d+ \(API at .*\/api\/v4, database .*, 2 workers\)$/,
    );
    assert.equal(listening[0].worker, undefined, 'the primary says it');
    const created = lines.filter((line) => String(line.msg).startsWith('created administrator'));
    assert.deepEqual(
      created.map((line) => line.msg),
      [`created administrator "root"; its token is in ${path.join(tmp, 'data', 'initial_root_token')}`],
    );
    const token = fs.readFileSync(path.join(tmp, 'data', 'initial_root_token'), 'utf8').trim();
    const me = await call(server.url, 'GET', '/api/v4/user', { token });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.json.username, 'root');
    rootToken = token;
    const ready = await call(server.url, 'GET', '/-/readiness?all=1', { token: null });
    assert.equal(ready.status, 200, ready.text);
    assert.deepEqual(ready.json, {
      status: 'ok',
      db_check: [{ status: 'ok' }],
      storage_check: [{ status: 'ok' }],
      master_check: [{ status: 'ok' }],
    });
  });

  it('what one worker writes the other answers at once, a visibility change included', async () => {
    const created = await call(server.url, 'POST', '/api/v4/snippets', {
      body: { title: 'shared', visibility: 'public', files: [{ file_path: 'a.txt', content: 'alpha\n' }] },
    });
    assert.equal(created.status, 201, created.text);
    const url = `/api/v4/snippets/${created.json.id}`;
    const seen = new Set<number>();
    for (let round = 0; round < 3; round++) {
      const content = `alpha ${round}\n`;
      const updated = await call(server.url, 'PUT', url, {
        body: { title: `round ${round}`, files: [{ action: 'update', file_path: 'a.txt', content }] },
      });
      assert.equal(updated.status, 200, updated.text);
      seen.add(await workerOf(server, updated.id));
      // Each read on a new connection: the two workers take turns.
      for (let i = 0; i < 4; i++) {
        const [snippet, raw] = [
          await call(server.url, 'GET', url),
          await call(server.url, 'GET', `${url}/raw`, { token: null }),
        ];
        assert.equal(snippet.status, 200, snippet.text);
        assert.deepEqual(snippet.json, updated.json);
        assert.equal(raw.status, 200, raw.text);
        assert.equal(raw.text, content);
        seen.add(await workerOf(server, snippet.id));
        seen.add(await workerOf(server, raw.id));
      }
    }
    assert.deepEqual([...seen].sort(), [1, 2], 'both workers answered');
    // A push through one worker: both answer what it changed, each having kept its answers from before.
    const dir = path.join(tmp, `clone-${clones++}`);
    await mustGit(['clone', '-q', created.json.http_url_to_repo.replace('://', `://root:${rootToken}@`), dir]);
    fs.writeFileSync(path.join(dir, 'a.txt'), 'pushed\n');
    fs.writeFileSync(path.join(dir, 'b.txt'), 'new\n');
    await mustGit(['add', '.'], dir);
    await mustGit(['commit', '-q', '-m', 'pushed'], dir);
    await mustGit(['push', '-q', 'origin', 'main'], dir);
    for (let i = 0; i < 4; i++) {
      const [snippet, raw] = [await call(server.url, 'GET', url), await call(server.url, 'GET', `${url}/raw`)];
      assert.deepEqual(
        snippet.json.files.map((f: { path: string }) => f.path),
        ['a.txt', 'b.txt'],
      );
      assert.equal(raw.text, 'pushed\n');
    }
    const hidden = await call(server.url, 'PUT', url, { body: { visibility: 'private' } });
    assert.equal(hidden.status, 200, hidden.text);
    for (let i = 0; i < 4; i++) {
      const anonymous = await call(server.url, 'GET', `${url}/raw`, { token: null });
      assert.equal(anonymous.status, 404, anonymous.text);
      assert.deepEqual(anonymous.json, { message: '404 Snippet Not Found' });
    }
  });

  it('racing API updates and git pushes through both workers: every acknowledged write kept, losers refused whole', async () => {
    const created = await call(server.url, 'POST', '/api/v4/snippets', {
      body: { title: 'race', visibility: 'private', files: [{ file_path: 'base.txt', content: 'base\n' }] },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.json.id;
    const repo = created.json.http_url_to_repo.replace('://', `://root:${rootToken}@`);
    const clone = async () => {
      const dir = path.join(tmp, `clone-${clones++}`);
      await mustGit(['clone', '-q', repo, dir]);
      return dir;
    };
    const apiAcked: string[] = [];
    const refused: string[] = [];
    const pushAcked: { sha: string; content: string }[] = [];
    const pushRefused: string[] = [];
    const workers = new Set<number>();
    const trees = await Promise.all([clone(), clone()]);

    const apiWriter = async (w: number) => {
      for (let r = 0; r < 4; r++) {
        const content = `api ${w} round ${r}`;
        const res = await call(server.url, 'PUT', `/api/v4/snippets/${id}`, {
          body: { files: [{ action: r === 0 ? 'create' : 'update', file_path: `api-${w}.txt`, content }] },
        });
        workers.add(await workerOf(server, res.id));
        if (res.status === 200) apiAcked.push(content);
        else refused.push(`${res.status} ${res.text}`);
      }
    };
    const pusher = async (p: number) => {
      const dir = trees[p];
      for (let k = 0; k < 4; k++) {
        const content = `push ${p} attempt ${k}\n`;
        fs.writeFileSync(path.join(dir, `push-${p}.txt`), content);
        await mustGit(['add', '.'], dir);
        await mustGit(['commit', '-q', '-m', content], dir);
        const sha = await mustGit(['rev-parse', 'HEAD'], dir);
        const pushed = await runGit(['push', 'origin', 'main'], dir);
        if (pushed.code === 0) pushAcked.push({ sha, content });
        else {
          assert.match(pushed.stderr, REFUSED_PUSH, pushed.stderr);
          pushRefused.push(sha);
        }
        await mustGit(['fetch', '-q', 'origin'], dir);
        await mustGit(['reset', '-q', '--hard', 'origin/main'], dir);
      }
    };
    await Promise.all([0, 1, 2].map(apiWriter).concat([0, 1].map(pusher)));

    // API updates build on the head they find: none is refused, whichever worker took it.
    assert.deepEqual(refused, []);
    assert.equal(apiAcked.length, 12);
    assert.deepEqual([...workers].sort(), [1, 2]);
    assert.ok(pushAcked.length > 0, 'some push was taken');
    const dir = await clone();
    assert.equal(Number(await mustGit(['rev-list', '--count', 'main'], dir)), 1 + apiAcked.length + pushAcked.length);
    const log = await mustGit(['log', '-p', 'main'], dir);
    for (const content of apiAcked) assert.ok(log.includes(`\n+${content}\n`), `"${content}" kept`);
    for (const ack of pushAcked)
      assert.equal((await runGit(['merge-base', '--is-ancestor', ack.sha, 'main'], dir)).code, 0, ack.content);
    for (const sha of pushRefused) assert.notEqual((await runGit(['cat-file', '-e', sha], dir)).code, 0, sha);
    const fsck = await runGit(['fsck', '--strict'], dir);
    assert.equal(fsck.code, 0, fsck.stderr);
    const snippet = await call(server.url, 'GET', `/api/v4/snippets/${id}`);
    assert.deepEqual(
      snippet.json.files.map((f: { path: string }) => f.path).sort(),
      (await mustGit(['ls-files'], dir)).split('\n').sort(),
    );
  });

  it('a rate limit counts the requests both workers answer', async () => {
    const limit = 6;
    const set = await call(server.url, 'PUT', '/api/v4/application/settings', {
      body: { raw_blob_request_limit: limit },
    });
    assert.equal(set.status, 200, set.text);
    const created = await call(server.url, 'POST', '/api/v4/snippets', {
      body: { title: 'limited', visibility: 'public', files: [{ file_path: 'l.txt', content: 'limited\n' }] },
    });
    assert.equal(created.status, 201, created.text);
    // Within one window (a minute): the limit's requests pass, whichever worker answers, the next is refused.
    await awayFromMinuteEnd();
    const statuses: number[] = [];
    const workers = new Set<number>();
    for (let i = 0; i <= limit; i++) {
      const raw = await call(server.url, 'GET', `/api/v4/snippets/${created.json.id}/files/main/l.txt/raw`, {
        token: null,
      });
      statuses.push(raw.status);
      workers.add(await workerOf(server, raw.id));
      if (i === limit) {
        assert.deepEqual(raw.json, {
          message: { error: 'This endpoint has been requested too many times. Try again later.' },
        });
        assert.ok(Number(raw.headers['retry-after']) > 0);
      }
    }
    assert.deepEqual(statuses, [...Array(limit).fill(200), 429]);
    assert.deepEqual([...workers].sort(), [1, 2]);
    const off = await call(server.url, 'PUT', '/api/v4/application/settings', {
      body: { raw_blob_request_limit: 0 },
    });
    assert.equal(off.status, 200, off.text);
  });

  it('the protected paths throttle counts the POSTs both workers answer', async () => {
    const limit = 4;
    const set = await call(server.url, 'PUT', '/api/v4/application/settings', {
      body: { throttle_protected_paths_enabled: true, throttle_protected_paths_requests_per_period: limit },
    });
    assert.equal(set.status, 200, set.text);
    // Within one window (a minute): GitLab's API session path, which nothing serves here, from one address.
    await awayFromMinuteEnd();
    const statuses: number[] = [];
    const workers = new Set<number>();
    for (let i = 0; i <= limit; i++) {
      const post = await call(server.url, 'POST', '/api/v4/session', { token: null });
      statuses.push(post.status);
      workers.add(await workerOf(server, post.id));
      if (i === limit) {
        assert.equal(post.text, 'Retry later\n');
        assert.equal(post.headers['ratelimit-name'], 'throttle_unauthenticated_protected_paths');
        assert.equal(post.headers['ratelimit-observed'], String(limit + 1));
        assert.ok(Number(post.headers['retry-after']) > 0);
      }
    }
    assert.deepEqual(statuses, [...Array(limit).fill(404), 429]);
    assert.deepEqual([...workers].sort(), [1, 2]);
    const off = await call(server.url, 'PUT', '/api/v4/application/settings', {
      body: { throttle_protected_paths_enabled: false },
    });
    assert.equal(off.status, 200, off.text);
  });

  it('a scrape of /-/metrics answers for both workers: their counts summed, whichever worker it reaches', async () => {
    const versionRequests = async () => {
      const scrape = await call(server.url, 'GET', '/-/metrics', { token: null });
      assert.equal(scrape.status, 200, scrape.text);
      const line = scrape.text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('snippetd_http_requests_total{') &&
            l.includes('route="/api/v4/version"') &&
            l.includes('status="200"'),
        );
      return { count: line ? Number(line.split(' ').pop()) : 0, worker: await workerOf(server, scrape.id) };
    };
    const before = await versionRequests();
    const answeredBy = new Set<number>();
    for (let i = 0; i < 10; i++) {
      const version = await call(server.url, 'GET', '/api/v4/version');
      assert.equal(version.status, 200);
      answeredBy.add(await workerOf(server, version.id));
    }
    assert.deepEqual([...answeredBy].sort(), [1, 2]);
    // Scraped on each worker in turn (each scrape a new connection): the same sum from both.
    const scrapes = [await versionRequests(), await versionRequests(), await versionRequests()];
    assert.deepEqual(new Set(scrapes.map((s) => s.worker)).size, 2);
    for (const scrape of scrapes) assert.equal(scrape.count, before.count + 10);
  });

  it('a worker killed with -9 is replaced while the port keeps answering; readiness fails until both serve', async () => {
    const before = workerPids(server);
    assert.equal(before.size, 2);
    const victim = before.get(1)!;
    process.kill(victim, 'SIGKILL');
    // The port answers all along, from the worker left, and readiness says a worker is missing until its
    // replacement serves. Probes start once the primary has seen the death (its log line): a connection it
    // handed to the worker as it died would be lost with it (Node's round-robin hand-off has no reply then),
    // and a replacement of the compiled CLI serves within a few hundred milliseconds, which a probe waiting
    // out such a loss could miss whole. The primary tells the workers before it logs, on the channel it hands
    // them connections on, so the next probe's worker knows.
    const replaced = await until('a replacement worker', () =>
      logLines(server).find((line) => line.worker === undefined && /^worker 1 \(pid \d+\) exited/.test(line.msg)),
    );
    assert.equal(replaced.msg, `worker 1 (pid ${victim}) exited (SIGKILL); replacing it`);
    const lost: string[] = [];
    const probe = (url: string) =>
      call(server.url, 'GET', url, { token: null, timeoutMs: 500 }).catch((error) => {
        lost.push(error.message);
        return undefined;
      });
    const missing = await until('readiness to fail', async () => {
      const ready = await probe('/-/readiness?all=1');
      return ready?.status === 503 ? ready : undefined;
    });
    assert.deepEqual(missing.json, {
      status: 'failed',
      db_check: [{ status: 'ok' }],
      storage_check: [{ status: 'ok' }],
      master_check: [{ status: 'failed', message: 'unexpected Master check result: 1 of 2 workers serve' }],
    });
    assert.equal(missing.headers['x-gitlab-custom-error'], '1');
    await until('readiness to pass', async () => ((await probe('/-/readiness'))?.status === 200 ? true : undefined));
    assert.deepEqual(lost, []);
    const after = workerPids(server);
    assert.equal(after.size, 3, 'worker 3 replaced worker 1');
    assert.notEqual(after.get(3), victim);
    // Both serve: the new one answers too.
    const seen = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const res = await call(server.url, 'GET', '/api/v4/version');
      assert.equal(res.status, 200, res.text);
      seen.add(await workerOf(server, res.id));
    }
    assert.deepEqual([...seen].sort(), [2, 3]);
  });

  it('SIGTERM: a request in flight finishes, then every worker and the primary exit 0', async () => {
    const pids = [...workerPids(server).values()];
    let exitCode: number | null = null;
    const answer = await call(server.url, 'POST', '/api/v4/snippets', {
      body: { title: 'last', visibility: 'private', files: [{ file_path: 'z.txt', content: 'last\n' }] },
      // Half a body arrives, then the stop, then the rest.
      between: async () => {
        await sleep(300);
        server.child.kill('SIGTERM');
        await until(
          'the stop to be logged',
          () => logLines(server).some((line) => line.msg === 'SIGTERM received, closing 2 workers') || undefined,
        );
        await sleep(300);
      },
    });
    assert.equal(answer.status, 201, answer.text);
    assert.equal(answer.json.title, 'last');
    exitCode = await exited(server.child);
    assert.equal(exitCode, 0);
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `worker ${pid} is gone`);
  });
});

describe('ephemeral mode keeps one process', { skip: TEST_DB === 'postgres' && 'no database of its own' }, () => {
  it('serves from one process whatever the CPUs, and refuses --workers 2', async () => {
    // Not set: one worker per CPU, but not for ephemeral mode.
    const env = { ...process.env, SNIPPETD_WORKERS: '' };
    const server = await spawnServer(env, [CLI, 'serve', '--ephemeral', '--port', '0']);
    try {
      assert.match(server.output(), /"msg":"listening on \S+ \(API at \S+, database in memory \(ephemeral\)\)"\}\n/);
      assert.ok(!server.output().includes('"worker"'), 'no worker lines');
      const ready = await call(server.url, 'GET', '/-/readiness?all=1', { token: null });
      assert.deepEqual(ready.json, { status: 'ok', db_check: [{ status: 'ok' }], storage_check: [{ status: 'ok' }] });
    } finally {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
    await assert.rejects(spawnServer(env, [CLI, 'serve', '--ephemeral', '--port', '0', '--workers', '2']), {
      message:
        "exited 1: snippetd: --workers cannot be more than 1 with --ephemeral, whose database is in one process's memory\n",
    });
  });
});

// Each worker opened a database of its own in its memory: two snippets both had id 1, and a read saw either.
describe('an in-memory SQLite database keeps one process', {
  skip: TEST_DB === 'postgres' && 'no database of its own',
}, () => {
  it('serves from one process whatever the CPUs, and refuses --workers 2', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-workers-memory-'));
    // SNIPPETD_WORKERS not set: one worker per CPU, but not for a database in one process's memory.
    const env = {
      ...process.env,
      SNIPPETD_DATA_DIR: dataDir,
      SNIPPETD_DATABASE_URL: 'sqlite::memory:',
      SNIPPETD_WORKERS: '',
      SNIPPETD_INITIAL_ROOT_TOKEN: 'in-memory-root-token-0123456789',
    };
    try {
      const server = await spawnServer(env, [CLI, 'serve', '--port', '0']);
      try {
        assert.ok(!server.output().includes('"worker"'), 'no worker lines');
        const token = 'in-memory-root-token-0123456789';
        const body = { title: 'm', visibility: 'public', files: [{ file_path: 'a.txt', content: 'm\n' }] };
        const ids = [];
        for (let i = 0; i < 4; i++)
          ids.push((await call(server.url, 'POST', '/api/v4/snippets', { body, token })).json.id);
        assert.deepEqual(ids, [1, 2, 3, 4]);
      } finally {
        server.child.kill('SIGTERM');
        await exited(server.child);
      }
      await assert.rejects(spawnServer(env, [CLI, 'serve', '--port', '0', '--workers', '2']), {
        message:
          "exited 1: snippetd: --workers cannot be more than 1 with an in-memory database (SNIPPETD_DATABASE_URL), which is in one process's memory\n",
      });
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a cluster that cannot start', { skip: TEST_DB === 'postgres' && 'no database of its own' }, () => {
  it('exits non-zero when its workers cannot listen (the port taken), as one process does', async () => {
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as import('node:net').AddressInfo;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-workers-taken-'));
    try {
      const env = { ...process.env, SNIPPETD_DATA_DIR: dataDir, SNIPPETD_DATABASE_URL: '', SNIPPETD_WORKERS: '2' };
      await assert.rejects(
        spawnServer(env, [CLI, 'serve', '--host', '127.0.0.1', '--port', String(port)]),
        (error: Error) => {
          assert.match(error.message, /^exited [1-9]\d*:/, error.message);
          assert.match(error.message, /exited before it served/);
          return true;
        },
      );
    } finally {
      taken.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a stop while a crashed worker waits to be replaced', {
  skip: TEST_DB === 'postgres' && 'no database of its own',
}, () => {
  it('exits 0 without starting the replacement', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-workers-delay-'));
    const server = await spawnServer({
      ...process.env,
      SNIPPETD_DATA_DIR: dataDir,
      SNIPPETD_DATABASE_URL: '',
      SNIPPETD_LOG_LEVEL: 'info',
      SNIPPETD_WORKERS: '2',
    });
    const primary = server.child.pid!;
    const children = () =>
      new Set(
        fs.readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
      );
    try {
      const token = fs.readFileSync(path.join(dataDir, 'initial_root_token'), 'utf8').trim();
      const first = children();
      process.kill(Math.min(...first), 'SIGKILL');
      // Its replacement, killed as soon as it is there: one that dies that young is replaced after a second.
      const young = await until('a replacement worker', () => [...children()].find((pid) => !first.has(pid)));
      process.kill(young, 'SIGKILL');
      await until(
        'the second death to be logged',
        () => logLines(server).find((line) => line.msg?.startsWith(`worker 3 (pid ${young}) exited`)) || undefined,
      );
      // A write in flight on the one worker left keeps the stop waiting past the replacement's second.
      const answer = await call(server.url, 'POST', '/api/v4/snippets', {
        token,
        body: { title: 'in flight', visibility: 'private', files: [{ file_path: 'a.txt', content: 'a\n' }] },
        between: async () => {
          await sleep(100); // the connection handed to the worker, well within the replacement's second
          server.child.kill('SIGTERM');
          await sleep(2000);
        },
      });
      assert.equal(answer.status, 201, answer.text);
      // The replacement's timer was left running: a fourth worker started, and the primary never exited.
      assert.equal(await Promise.race([exited(server.child), sleep(10_000).then(() => 'still running')]), 0);
      assert.ok(!logLines(server).some((line) => line.worker === 4), 'no worker 4 started');
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
