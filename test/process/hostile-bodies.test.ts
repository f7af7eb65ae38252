// Large and hostile request bodies against a real `snippetd serve` (issue 28): a body from a caller without a
// valid token is refused before it is read, JSON over one of GitLab's limits is refused as it streams in
// (docs/gitlab-compatibility.md#body-limits, #json-limits), and meanwhile other requests go on: the
// server's own event-loop delay and memory stay within test/stall.ts's bounds.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { processStorage } from '../helper.ts';
import { exited, spawnServer, type Spawned } from '../../scripts/spawn-server.ts';
import { assertCalm, currentRss, MiB, whileHostile } from '../stall.ts';
import { send, sendBody } from '../send-body.ts';

const TOKEN = 'hostile-bodies-root-token-0123456';
const MB = 1000 * 1000;

const json = { 'Content-Type': 'application/json' };
const withToken = { ...json, 'PRIVATE-TOKEN': TOKEN };

describe('a real server under large and hostile bodies', () => {
  let remove: () => Promise<void>;
  let server: Spawned;
  let snippets: string;

  before(async () => {
    const storage = await processStorage('snippetd-bodies-');
    remove = storage.remove;
    server = await spawnServer({
      ...process.env,
      SNIPPETD_DATA_DIR: storage.dataDir,
      SNIPPETD_DATABASE_URL: storage.databaseUrl,
      SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
      SNIPPETD_LOG_LEVEL: 'warn',
    });
    const project = await fetch(`${server.url}/api/v4/projects`, {
      method: 'POST',
      headers: withToken,
      body: JSON.stringify({ name: 'p', visibility: 'public' }),
    });
    assert.equal(project.status, 201);
    snippets = `/api/v4/projects/${(await project.json()).id}/snippets`;
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await exited(server.child);
    await remove();
  });

  it('refuses anonymous JSON nested 75 MB deep with 401 before reading it, and stays calm', async () => {
    const { answer, calm } = await whileHostile(server, () =>
      send(server, { path: snippets, headers: json, head: '', pattern: '[', total: 75 * MB }),
    );
    assert.deepEqual([answer.status, JSON.parse(answer.body)], [401, { message: '401 Unauthorized' }]);
    assert.equal(answer.headers.connection, 'close');
    assert.ok(answer.sentBytes < 16 * MiB, `${answer.sentBytes} bytes sent before the answer`);
    assertCalm(calm);
  });

  it('refuses anonymous flat JSON of 80 MB with 401 before reading it, and stays calm', async () => {
    const { answer, calm } = await whileHostile(server, () =>
      send(server, { path: snippets, headers: json, head: '[', pattern: '1,', total: 80 * MB }),
    );
    assert.deepEqual([answer.status, JSON.parse(answer.body)], [401, { message: '401 Unauthorized' }]);
    assert.ok(answer.sentBytes < 16 * MiB, `${answer.sentBytes} bytes sent before the answer`);
    assertCalm(calm);
  });

  it('answers an anonymous body while the client is still sending it, chunked or not, and an unknown token alike', async () => {
    // Sent without a length: read up to the anonymous limit (1 MiB), then refused.
    const chunked = await send(server, {
      path: snippets,
      headers: json,
      head: '{"title":"t","content":"',
      pattern: 'abcdefgh',
      total: 40 * MB,
      chunked: true,
    });
    assert.deepEqual([chunked.status, JSON.parse(chunked.body)], [401, { message: '401 Unauthorized' }]);
    assert.equal(chunked.headers.connection, 'close');
    assert.ok(chunked.sentBytes < 16 * MiB, `${chunked.sentBytes} bytes sent before the answer`);
    const unknown = await send(server, {
      path: snippets,
      headers: { ...json, 'PRIVATE-TOKEN': 'not-a-token-of-anyone-here' },
      head: '{"title":"t","content":"',
      pattern: 'abcdefgh',
      total: 40 * MB,
    });
    assert.deepEqual([unknown.status, JSON.parse(unknown.body)], [401, { message: '401 Unauthorized' }]);
    assert.ok(unknown.sentBytes < 16 * MiB, `${unknown.sentBytes} bytes sent before the answer`);
    // A small anonymous body is read and answered as before: valid parameters, then authentication (401).
    const small = await fetch(`${server.url}${snippets}`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ title: 't', files: [{ file_path: 'a.txt', content: 'x'.repeat(500_000) }] }),
    });
    assert.deepEqual([small.status, await small.json()], [401, { message: '401 Unauthorized' }]);
  });

  it('refuses authenticated JSON over each of GitLab limits with its 400 as it streams in, and stays calm', async () => {
    const limits: [string, string, string, string][] = [
      ['nested 75 MB deep', '', '[', 'Parameters nested too deeply'],
      ['an array of 80 MB', '[', '1,', 'Array parameter too large'],
      ['an object of 80 MB', '{"k":1', ',"k":1', 'Too many total parameters'],
      ['arrays holding 100,000 elements together', `[[${'1,'.repeat(49_998)}1],[`, '1,', 'Too many total parameters'],
    ];
    for (const [what, head, pattern, error] of limits) {
      const { answer, calm } = await whileHostile(server, () =>
        send(server, { path: snippets, headers: withToken, head, pattern, total: 80 * MB }),
      );
      assert.deepEqual([answer.status, JSON.parse(answer.body)], [400, { error }], what);
      assert.equal(answer.headers['content-type'], 'application/json', what);
      assert.equal(answer.headers.connection, 'close', what);
      assert.ok(answer.sentBytes < 16 * MiB, `${what}: ${answer.sentBytes} bytes sent before the answer`);
      assertCalm(calm);
    }
    // Over the body limit (three times snippet_size_limit and the description, and room for the rest): 413 unread.
    const { answer, calm } = await whileHostile(server, () =>
      send(server, { path: snippets, headers: withToken, head: '"', pattern: 'a', total: 170 * MB }),
    );
    assert.deepEqual([answer.status, JSON.parse(answer.body)], [413, { message: '413 Request Entity Too Large' }]);
    assert.ok(answer.sentBytes < 16 * MiB, `${answer.sentBytes} bytes sent before the answer`);
    assertCalm(calm);
  });

  it('refuses 50,000 empty files at once with a short answer, and stays calm', async () => {
    // Within the JSON limits; Grape's one message for each was 100,000 messages, 3.5 MB, and held the loop.
    const body = JSON.stringify({ title: 't', visibility: 'public', files: Array(49_999).fill({}) });
    const { answer, calm } = await whileHostile(server, () =>
      Promise.all(
        [json, json, withToken, withToken].map(async (headers) => {
          const res = await fetch(`${server.url}/api/v4/snippets`, { method: 'POST', headers, body });
          return { status: res.status, body: await res.text() };
        }),
      ),
    );
    const messages = Array.from({ length: 50 }, (_, i) => [
      `files[${i}][file_path] is missing`,
      `files[${i}][content] is missing`,
    ]).flat();
    for (const { status, body } of answer)
      assert.deepEqual([status, JSON.parse(body)], [400, { error: messages.join(', ') }]);
    assertCalm(calm);
  });

  it('refuses a project name of 16 MB and a last_commit_id of 15 MB at once, and stays calm', async () => {
    const name = 'A b-.'.repeat(3_150_000);
    const { answer, calm } = await whileHostile(server, async () => {
      const res = await fetch(`${server.url}/api/v4/projects`, {
        method: 'POST',
        headers: withToken,
        body: JSON.stringify({ name }),
      });
      return { status: res.status, body: await res.json() };
    });
    assert.equal(answer.status, 400);
    assert.deepEqual(answer.body.message.name, ['is too long (maximum is 255 characters)']);
    assertCalm(calm);

    const files = `/api/v4/projects/${encodeURIComponent('root/p')}/repository/files`;
    const write = (method: string, lastCommitId?: string) =>
      fetch(`${server.url}${files}/a.txt`, {
        method,
        headers: withToken,
        body: JSON.stringify({ branch: 'main', content: method, commit_message: 'm', last_commit_id: lastCommitId }),
      });
    assert.equal((await write('POST')).status, 201);
    const updated = await whileHostile(server, async () => (await write('PUT', 'abcdef'.repeat(2_600_000))).status);
    // An id that names no commit is no change (docs/gitlab-compatibility.md).
    assert.equal(updated.answer, 200);
    assertCalm(updated.calm);
  });

  it('still creates a large snippet from an authenticated JSON body', async () => {
    // Over 1 MiB, so parsed in the worker thread; its blob is hashed and deflated in the thread pool.
    const content = 'const a = "b";\n'.repeat((20 * MiB) / 15);
    const body = JSON.stringify({ title: 'large', visibility: 'public', files: [{ file_path: 'a.js', content }] });
    const { answer, calm } = await whileHostile(server, async () => {
      const res = await fetch(`${server.url}${snippets}`, { method: 'POST', headers: withToken, body });
      return { status: res.status, body: await res.json() };
    });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assertCalm(calm);
    const raw = await fetch(`${server.url}${snippets}/${answer.body.id}/files/main/a.js/raw`, { headers: withToken });
    assert.equal(raw.status, 200);
    assert.equal(await raw.text(), content);
  });

  /** A multipart body of `parts` (a Buffer value is sent as a file part), and its content type. */
  const multipart = (parts: [string, string | Buffer][]) => {
    const boundary = 'snippetd-hostile-bodies';
    const pieces = parts.flatMap(([name, value]) => [
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"` +
          (typeof value === 'string' ? '\r\n\r\n' : '; filename="f.txt"\r\nContent-Type: text/plain\r\n\r\n'),
      ),
      Buffer.from(value),
      Buffer.from('\r\n'),
    ]);
    return {
      body: Buffer.concat([...pieces, Buffer.from(`--${boundary}--\r\n`)]),
      type: `multipart/form-data; boundary=${boundary}`,
    };
  };
  const postMultipart = (parts: [string, string | Buffer][]) => {
    const { body, type } = multipart(parts);
    return whileHostile(server, async () => {
      const headers = { 'PRIVATE-TOKEN': TOKEN, 'content-type': type };
      const res = await sendBody(server, { path: '/api/v4/snippets', headers, body });
      return { status: res.status, body: JSON.parse(res.body) };
    });
  };

  it('creates a snippet from file parts as large as its limit allows, each file with its own path', async () => {
    // Each content before its path, decoded as it arrives (a multi-byte character split between chunks).
    const large = Buffer.alloc(40 * MiB, 'const a = "✓";\n');
    const { answer, calm } = await postMultipart([
      ['title', 'large'],
      ['visibility', 'public'],
      ['files[][content]', large],
      ['files[][file_path]', 'large.js'],
      ['files[][content]', Buffer.from('small\n')],
      ['files[][file_path]', 'small.txt'],
    ]);
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assertCalm(calm);
    const raw = async (path: string) =>
      Buffer.from(
        await (
          await fetch(`${server.url}/api/v4/snippets/${answer.body.id}/files/main/${path}/raw`, { headers: withToken })
        ).arrayBuffer(),
      );
    assert.ok((await raw('large.js')).equals(large));
    assert.equal((await raw('small.txt')).toString(), 'small\n');
  });

  it('answers 40 MB of authenticated form parameters with 400, and stays calm', async () => {
    // 6.6 million parameters: only GitLab's first 10,000 are parsed, the rest never even cut out.
    const form = { 'Content-Type': 'application/x-www-form-urlencoded', 'PRIVATE-TOKEN': TOKEN };
    const { answer, calm } = await whileHostile(server, () =>
      send(server, { path: snippets, headers: form, head: 'title=t&', pattern: 'x[]=1&', total: 40 * MB }),
    );
    assert.deepEqual(
      [answer.status, JSON.parse(answer.body)],
      [400, { error: 'files, content are missing, exactly one parameter must be provided' }],
    );
    assertCalm(calm);
  });

  it('creates a snippet from the largest form body a write needs, within three times its size', async () => {
    // 50 MiB of content (snippet_size_limit), each "+" a space and each check mark three %XX escapes: 131 MiB of
    // body, near the body limit. Decoding each "+" with a pattern held the parse thread 5 s and took gigabytes.
    const reps = (50 * MiB) / 4;
    const head = Buffer.from('title=form&visibility=public&files[][file_path]=a.txt&files[][content]=');
    const body = Buffer.concat([head, Buffer.from('+%E2%9C%93'.repeat(reps))]);
    const headers = { 'Content-Type': 'application/x-www-form-urlencoded', 'PRIVATE-TOKEN': TOKEN };
    const rssBefore = currentRss(server);
    const { answer, calm } = await whileHostile(server, () => sendBody(server, { path: snippets, headers, body }));
    assert.equal(answer.status, 201, answer.body);
    assertCalm(calm, { rssBytes: rssBefore + 3 * body.length });
    const raw = await fetch(`${server.url}${snippets}/${JSON.parse(answer.body).id}/files/main/a.txt/raw`, {
      headers: withToken,
    });
    assert.ok(Buffer.from(await raw.arrayBuffer()).equals(Buffer.from(' \u2713'.repeat(reps))));
  });

  it('answers a create whose title is 100 MB without making it a string, and stays calm', async () => {
    // Spreading it into characters to count them held the loop 14 s and took 2.8 GB; making it a string, 330 ms.
    const body = Buffer.from(
      JSON.stringify({ title: 't'.repeat(100 * MB), files: [{ file_path: 'a', content: 'a' }] }),
    );
    const rssBefore = currentRss(server);
    const { answer, calm } = await whileHostile(server, () =>
      sendBody(server, { path: snippets, headers: withToken, body }),
    );
    assert.deepEqual([answer.status, JSON.parse(answer.body)], [400, { error: 'title is invalid' }]);
    // The body, its text and its parse in the worker thread, each 100 MB, and the worker's heap around them: run
    // alone, this took 420-440 MiB over the RSS before it, at a79d819 as now (2026-11-28), so a bound of 400 held
    // only after files that had left the process larger (a CI run: 672 MiB against 632). Spread into characters
    // it took 2.8 GB.
    assertCalm(calm, { rssBytes: rssBefore + 480 * MiB });
  });

  it('stores a write whose client hung up once it had sent it (its address is then unknown)', async () => {
    // Over 1 MiB: the body is parsed in a thread, and by then the connection is gone.
    const title = `hung up ${Date.now()}`;
    const body = JSON.stringify({
      title,
      visibility: 'private',
      files: [{ file_path: 'a.txt', content: 'x'.repeat(1_500_000) }],
    });
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => {});
    await new Promise<void>((resolve) =>
      socket.write(
        `POST /api/v4/snippets HTTP/1.1\r\nHost: x\r\nPRIVATE-TOKEN: ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        () => resolve(),
      ),
    );
    socket.destroy();
    let found = false;
    for (let waited = 0; !found && waited < 5000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const mine = await (
        await fetch(`${server.url}/api/v4/snippets?per_page=100`, { headers: { 'PRIVATE-TOKEN': TOKEN } })
      ).json();
      found = mine.some((s: { title: string }) => s.title === title);
    }
    // helper-70 saw such writes fail (500, lost) on PostgreSQL 10 times in 10: the user agent detail's address
    // was read from the closed connection, null, which the table refuses. Not reproduced here.
    assert.ok(found, 'the snippet was stored');
  });

  it('cuts off large bodies that come a few bytes a second, so that they cannot hold every other large write', async () => {
    const content = 'y'.repeat(2 * 1024 * 1024);
    const slow = () => {
      const { port } = new URL(server.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.on('error', () => {});
      let answer = '';
      socket.on('data', (chunk) => {
        answer += chunk.toString();
      });
      socket.write(
        `POST ${snippets} HTTP/1.1\r\nHost: x\r\nPRIVATE-TOKEN: ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${content.length + 100}\r\n\r\n{"title":"slow",`,
      );
      const drip = setInterval(() => socket.write(' '), 200);
      return { socket, drip, answer: () => answer };
    };
    const senders = [slow(), slow()];
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = performance.now();
    const res = await fetch(`${server.url}${snippets}`, {
      method: 'POST',
      headers: withToken,
      body: JSON.stringify({ title: 'steady', visibility: 'private', files: [{ file_path: 'a.txt', content }] }),
      signal: AbortSignal.timeout(40_000),
    });
    const waited = performance.now() - started;
    // Each drip is checked once a second on its own clock: the write may end before the second drip is cut.
    for (let wait = 0; wait < 5000 && senders.some((s) => s.answer() === ''); wait += 100)
      await new Promise((resolve) => setTimeout(resolve, 100));
    for (const s of senders) {
      clearInterval(s.drip);
      s.socket.destroy();
    }
    assert.equal(res.status, 201);
    // The drips held both turns for the request timeout, 300 s; they are cut after about 10 s.
    assert.ok(waited < 20_000, `the write waited ${waited.toFixed(0)} ms`);
    for (const s of senders) assert.match(s.answer(), /^HTTP\/1\.1 408 /);
  });

  it('works on two large bodies at a time: four creates at once all succeed within the memory bound', async () => {
    const content = 'const a = "b";\n'.repeat((40 * MiB) / 15);
    const body = Buffer.from(JSON.stringify({ title: 'four', files: [{ file_path: 'a.js', content }] }));
    const rssBefore = currentRss(server);
    const { answer, calm } = await whileHostile(server, () =>
      Promise.all([1, 2, 3, 4].map(() => sendBody(server, { path: snippets, headers: withToken, body }))),
    );
    assert.deepEqual(
      answer.map((a) => a.status),
      [201, 201, 201, 201],
    );
    // Two at a time took 197-237 MiB more than before them; all four at once 380-418.
    assertCalm(calm, { rssBytes: rssBefore + 320 * MiB });
  });

  // Last: the server's heap keeps much of what this body took, which would weigh on the bounds of what follows.
  it('creates snippets from JSON that also holds 60 MB of strings nobody reads, and stays calm', async () => {
    // Each string parsed in the worker thread would be made again on the event loop as it comes back (6,400
    // strings of 16 KiB held it about a second): long ones come back as bytes. The second body's are in objects,
    // under `__proto__`: a key JSON.parse makes an own property, which an assignment would not replace.
    const head = JSON.stringify({ title: 'many', files: [{ file_path: 'a.txt', content: 'kept' }] }).slice(0, -1);
    const strings = 3840;
    const tail = '"last"]}';
    for (const pattern of [`"${'x'.repeat(16 * 1024 - 3)}",`, `{"__proto__":"${'y'.repeat(16 * 1024 - 17)}"},`]) {
      const { answer, calm } = await whileHostile(server, () =>
        send(server, {
          path: '/api/v4/snippets',
          headers: withToken,
          head: `${head},"unread":[`,
          pattern,
          tail,
          total: head.length + 11 + strings * pattern.length + tail.length,
        }),
      );
      assert.equal(answer.status, 201, answer.body);
      assertCalm(calm, { rssBytes: 640 * MiB });
      const raw = await fetch(`${server.url}/api/v4/snippets/${JSON.parse(answer.body).id}/raw`, {
        headers: withToken,
      });
      assert.equal(await raw.text(), 'kept');
    }
  });
});
