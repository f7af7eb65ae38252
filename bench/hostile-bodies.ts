// What one large or hostile body does to everyone else (issue 28): a real server (from source, through tsx)
// gets one such request while cheap ones go on (test/stall.ts), and the server's own event-loop delay, peak
// memory and the cheap requests' worst latency are printed, one JSON line per case.
//
//   npx tsx bench/hostile-bodies.ts [source tree, default this one] [case ...]
//
// Cases: idle (nothing hostile: the baseline), nested (anonymous, 75 MB of `[`), flat (anonymous, 80 MB of `[1,1,…`), nested-token and flat-token
// (the same with a valid token), create (a snippet of 50 MiB, JSON, with a valid token), create-no-title (its
// body without the title: parsed, then refused by parameter validation), multipart (a personal snippet whose
// content is a file part of 150 MiB, just under the largest body: refused as too long once read), create-x4 (four
// creates at once), many-strings (a create whose body also holds 8,960 strings of 16 KiB nobody reads), long-title
// (a create whose title is 100 MB), multipart-field (multipart's content as a field of 150 MiB, not a file part).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnServer } from '../scripts/spawn-server.ts';
import { whileHostile } from '../test/stall.ts';
import { send, sendBody } from '../test/send-body.ts';

const TOKEN = 'hostile-bodies-bench-token-0123456';
const MB = 1000 * 1000;
const [tree = path.resolve(import.meta.dirname, '..'), ...chosen] = process.argv.slice(2);
const json = { 'Content-Type': 'application/json' };
// Built before any case runs: building them holds this process's event loop, and so its cheap requests.
const content = 'const a = "b";\n'.repeat((50 * 1024 * 1024) / 15);
// Sent by sendBody: fetch holds this process's event loop while it writes a large body, which would time the
// cheap requests of this process, not the server.
const large = Buffer.from(JSON.stringify({ title: 'large', files: [{ file_path: 'a.js', content }] }));
const untitled = Buffer.from(JSON.stringify({ files: [{ file_path: 'a.js', content }] }));
const withToken = { ...json, 'PRIVATE-TOKEN': TOKEN };
const longTitle = Buffer.from(
  JSON.stringify({ title: 't'.repeat(100 * MB), files: [{ file_path: 'a.txt', content: 'a' }] }),
);
// 140 MB of parameters nobody reads, as 8,960 strings of 16 KiB: each string is made again on the event loop
// when the parse result comes back from the worker thread.
const manyStrings = Buffer.from(
  JSON.stringify({
    title: 'many',
    files: [{ file_path: 'a.txt', content: 'a' }],
    unread: Array.from({ length: 8960 }, (_, i) => `${i}`.padEnd(16 * 1024, 'x')),
  }),
);
const boundary = 'snippetd-bench-bodies';
const formPart = (name: string, file = false) =>
  `--${boundary}\r\nContent-Disposition: form-data; name="${name}"` +
  `${file ? '; filename="a.txt"\r\nContent-Type: text/plain' : ''}\r\n\r\n`;
const largePart = Buffer.concat([
  Buffer.from(`${formPart('title')}large\r\n${formPart('files[][file_path]')}a.txt\r\n`),
  Buffer.from(formPart('files[][content]', true)),
  Buffer.alloc(150 * 1024 * 1024, 'abcdefghij\n'),
  Buffer.from(`\r\n--${boundary}--\r\n`),
]);

// The same content as a field (no file name).
const largeField = Buffer.concat([
  Buffer.from(`${formPart('title')}large\r\n${formPart('files[][file_path]')}a.txt\r\n`),
  Buffer.from(formPart('files[][content]')),
  Buffer.alloc(150 * 1024 * 1024, 'abcdefghij\n'),
  Buffer.from(`\r\n--${boundary}--\r\n`),
]);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-bench-bodies-'));
const server = await spawnServer(
  {
    ...process.env,
    SNIPPETD_DATA_DIR: dataDir,
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
    SNIPPETD_REQUEST_TIMEOUT: '3600',
  },
  [path.join(tree, 'src', 'cli.ts'), 'serve', '--port', '0'],
);
try {
  const project = await fetch(`${server.url}/api/v4/projects`, {
    method: 'POST',
    headers: withToken,
    body: JSON.stringify({ name: 'p' }),
  });
  const snippets = `/api/v4/projects/${(await project.json()).id}/snippets`;
  const cases: Record<string, () => Promise<unknown>> = {
    // No hostile request at all, for as long as a refused one takes (its connection lingers a second):
    // what the machine's own load does to the figures.
    idle: async () => {
      await new Promise((resolve) => setTimeout(resolve, 1300));
      return { status: 0, body: '' };
    },
    nested: () => send(server, { path: snippets, headers: json, head: '', pattern: '[', total: 75 * MB }),
    flat: () => send(server, { path: snippets, headers: json, head: '[', pattern: '1,', total: 80 * MB }),
    'nested-token': () => send(server, { path: snippets, headers: withToken, head: '', pattern: '[', total: 75 * MB }),
    'flat-token': () => send(server, { path: snippets, headers: withToken, head: '[', pattern: '1,', total: 80 * MB }),
    create: async () => {
      const res = await sendBody(server, { path: snippets, headers: withToken, body: large });
      return { status: res.status, body: res.body.slice(0, 200) };
    },
    // The same body without its title: read, checked and parsed as for a create, then refused by parameter
    // validation. What the body costs, apart from the snippet's storage.
    'create-no-title': async () => {
      const res = await sendBody(server, { path: snippets, headers: withToken, body: untitled });
      return { status: res.status, body: res.body };
    },
    // Four such creates at once, as one caller with a token may send them.
    'create-x4': async () => {
      const answers = await Promise.all(
        [1, 2, 3, 4].map(() => sendBody(server, { path: snippets, headers: withToken, body: large })),
      );
      return { status: answers.map((a) => a.status).join(','), body: '' };
    },
    // A title of 100 MB: a parameter other than a file's content is made a string to be checked.
    'long-title': async () => {
      const res = await sendBody(server, { path: snippets, headers: withToken, body: longTitle });
      return { status: res.status, body: res.body.slice(0, 200) };
    },
    'many-strings': async () => {
      const res = await sendBody(server, { path: snippets, headers: withToken, body: manyStrings });
      return { status: res.status, body: res.body.slice(0, 200) };
    },
    'multipart-field': async () => {
      const headers = { 'PRIVATE-TOKEN': TOKEN, 'Content-Type': `multipart/form-data; boundary=${boundary}` };
      const res = await sendBody(server, { path: '/api/v4/snippets', headers, body: largeField });
      return { status: res.status, body: res.body };
    },
    multipart: async () => {
      const headers = { 'PRIVATE-TOKEN': TOKEN, 'Content-Type': `multipart/form-data; boundary=${boundary}` };
      const res = await sendBody(server, { path: '/api/v4/snippets', headers, body: largePart });
      return { status: res.status, body: res.body };
    },
  };
  for (const name of chosen.length ? chosen : Object.keys(cases)) {
    const started = performance.now();
    const { answer, calm } = await whileHostile(server, cases[name]);
    const { status, body, sentBytes } = answer as { status: number; body: string; sentBytes?: number };
    console.log(
      JSON.stringify({
        case: name,
        status,
        body: body.slice(0, 100),
        sentBytes,
        seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
        loopDelayMaxMs: Math.round(calm.loopDelayMaxMs),
        worstMs: Math.round(calm.worstMs),
        normalMs: Number(calm.normalMs.toFixed(1)),
        peakRssMiB: Math.round(calm.peakRssBytes / 1024 / 1024),
      }),
    );
  }
} finally {
  server.child.kill('SIGTERM');
  fs.rmSync(dataDir, { recursive: true, force: true });
}
