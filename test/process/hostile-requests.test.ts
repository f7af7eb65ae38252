// On a real `snippetd serve` process: anonymous malformed bodies (the request that used to end the
// process), a body that is never finished while other requests go on, and a setting stored invalid by
// an earlier version, which start-up repairs with one line.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { processStorage } from '../helper.ts';
import { exited, spawnServer, type Spawned } from '../../scripts/spawn-server.ts';
import { openDatabase } from '../../src/storage/db/database.ts';
import { migrateToLatest } from '../../src/storage/db/migrate.ts';
import { createStore } from '../../src/storage/db/store.ts';

const TOKEN = 'hostile-requests-root-token-0123';
const FILE_PART = '--XX\r\nContent-Disposition: form-data; name="a"; filename="a"\r\n\r\n';

describe('a real server under hostile requests', () => {
  let dataDir: string;
  let databaseUrl: string;
  let remove: () => Promise<void>;
  let server: Spawned;
  const env = () => ({
    ...process.env,
    SNIPPETD_DATA_DIR: dataDir,
    SNIPPETD_DATABASE_URL: databaseUrl,
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
    SNIPPETD_MAX_BODY_BYTES: '65536',
  });

  before(async () => {
    ({ dataDir, databaseUrl, remove } = await processStorage('snippetd-hostile-'));
    server = await spawnServer(env());
  });
  after(async () => {
    if (server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
    await remove();
  });

  const version = () => fetch(`${server.url}/api/v4/version`, { headers: { 'PRIVATE-TOKEN': TOKEN } });
  const post = (body: string, contentType = 'multipart/form-data; boundary=XX') =>
    fetch(`${server.url}/api/v4/version`, { method: 'POST', headers: { 'content-type': contentType }, body });

  it('answers an anonymous multipart body whose file part never ends with 400, and keeps running', async () => {
    const res = await post(`${FILE_PART}x`);
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), { error: 'message body does not match declared format' });
    assert.equal((await version()).status, 200);
    assert.equal(server.child.exitCode, null);
  });

  it('answers a part over the body limit with 413 and closes that connection, and keeps running', async () => {
    const res = await post(`${FILE_PART}${'z'.repeat(200_000)}`);
    assert.equal(res.status, 413);
    assert.equal(res.headers.get('connection'), 'close');
    assert.deepEqual(await res.json(), { message: '413 Request Entity Too Large' });
    assert.equal((await version()).status, 200);
  });

  it('serves other requests while a multipart body is never finished, and survives its client hanging up', async () => {
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/v4/version HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: 100000\r\n\r\n${FILE_PART}partial`,
    );
    for (let i = 0; i < 3; i++) assert.equal((await version()).status, 200);
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await version()).status, 200);
    assert.equal(server.child.exitCode, null);
  });

  /** Sends `head` (and what follows) on a connection of its own, then resets it. */
  async function sendAndReset(text: string, waitMs: number) {
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => {});
    socket.write(text);
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    socket.resetAndDestroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  it('survives a GET or HEAD whose chunked body never ends, its connection reset (the process stopped)', async () => {
    for (const [method, path] of [
      ['GET', '/-/readiness'],
      ['GET', '/no/such/page'],
      ['HEAD', '/api/v4/version'],
    ]) {
      // Reset while its answer is on its way: within a few milliseconds.
      for (let waitMs = 0; waitMs < 10; waitMs++) {
        await sendAndReset(
          `${method} ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n`,
          waitMs,
        );
        assert.equal(server.child.exitCode, null, `${method} ${path}, reset after ${waitMs} ms`);
        assert.equal((await version()).status, 200);
      }
    }
  });

  it('survives a CONNECT whose connection is reset, before or after its answer (the process stopped)', async () => {
    for (const waitMs of [0, 50]) {
      await sendAndReset('CONNECT /x HTTP/1.1\r\nHost: x\r\n\r\n', waitMs);
      assert.equal(server.child.exitCode, null, `reset after ${waitMs} ms`);
      assert.equal((await version()).status, 200);
    }
  });

  it('repairs a setting stored invalid by an earlier version at start-up, with one line, and creates work', async () => {
    server.child.kill('SIGTERM');
    assert.equal(await exited(server.child), 0);
    const db = openDatabase(databaseUrl);
    await migrateToLatest(db);
    await createStore(db).settings.put({ default_snippet_visibility: null, restricted_visibility_levels: null });
    await db.close();

    server = await spawnServer(env());
    // stdout is JSON log lines; the repair lines are warnings.
    const lines = server
      .output()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg.startsWith('setting '))
      .map((l) => [l.level, l.msg]);
    assert.deepEqual(lines, [
      [
        40,
        'setting default_snippet_visibility was stored as null, which is not valid (is not included in the list): reset to its default "private"',
      ],
      [
        40,
        'setting restricted_visibility_levels was stored as null, which is not valid (is not a valid visibility level): reset to its default []',
      ],
    ]);
    const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };
    const settings = await (await fetch(`${server.url}/api/v4/application/settings`, { headers })).json();
    assert.equal(settings.default_snippet_visibility, 'private');
    assert.deepEqual(settings.restricted_visibility_levels, []);
    const project = await fetch(`${server.url}/api/v4/projects`, { method: 'POST', headers, body: '{"name":"p"}' });
    assert.equal(project.status, 201);
    const { id } = await project.json();
    const snippet = await fetch(`${server.url}/api/v4/projects/${id}/snippets`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ title: 't', files: [{ file_path: 'a.txt', content: 'a' }] }),
    });
    assert.equal(snippet.status, 201, await snippet.clone().text());
    assert.equal((await snippet.json()).visibility, 'private');
  });
});
