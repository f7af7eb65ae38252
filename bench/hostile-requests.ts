// Single requests that held the event loop or took hundreds of megabytes (helper-61, seventh session), each
// sent once to the checkout given (default: this one), run from source on a fresh SQLite server, while cheap
// requests go on (test/stall.ts): a form previewed with 45 rows of just under 1 MiB of '"' (signed in), the
// embed script of a public snippet of ten Markdown files of '中' and '"' (anonymous, after its page), and a
// search page over 200 files whose long paths and lines all match (anonymous).
//   npx tsx bench/hostile-requests.ts [checkout]
import path from 'node:path';
import { sourceServer } from './source-server.ts';
import { whileHostile } from '../test/stall.ts';

const checkout = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'));
const TOKEN = 'hostile-requests-bench-root-token';
const PASSWORD = 'hostile-requests-password';
const { server, api, stop } = await sourceServer(checkout, TOKEN, 'snippetd-hostile-requests-', {
  SNIPPETD_WORKERS: '1',
});
await api('PUT', '/application/settings', { search_rate_limit: 0, search_rate_limit_unauthenticated: 0 });
await api('POST', '/users', { username: 'alice', email: 'alice@example.com', name: 'Alice', password: PASSWORD });

/** The session cookie of alice, signed in through the form. */
async function signIn(): Promise<string> {
  const form = await fetch(`${server.url}/users/sign_in`);
  const res = await fetch(`${server.url}/users/sign_in`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: String(form.headers.get('set-cookie')).split(';')[0],
    },
    body: new URLSearchParams({
      authenticity_token: /name="authenticity_token" value="([^"]+)"/.exec(await form.text())![1],
      login: 'alice',
      password: PASSWORD,
    }),
  });
  return /_snippetd_session=[^;]+/.exec(res.headers.getSetCookie().join('\n'))![0];
}
const cookie = await signIn();

async function previewForm() {
  const page = await (await fetch(`${server.url}/-/snippets/new`, { headers: { cookie } })).text();
  const form = new FormData();
  form.append('authenticity_token', /name="authenticity_token" value="([^"]+)"/.exec(page)![1]);
  form.append('title', 'quotes');
  form.append('preview', '1');
  const quotes = '"'.repeat(1024 * 1024 - 64);
  for (let n = 0; n < 45; n++) {
    form.append(`files[${n}][file_path]`, `f${n}.txt`);
    form.append(`files[${n}][content]`, quotes);
  }
  return view(`${server.url}/-/snippets/new`, { method: 'POST', body: form, headers: { cookie } });
}

const heavy = (await api('POST', '/snippets', {
  title: 'heavy',
  visibility: 'public',
  files: Array.from({ length: 10 }, (_, n) => ({
    file_path: `f${n}.md`,
    content: `中${'"'.repeat(1024 * 1024 - 16)}`,
  })),
})) as { web_url: string };
const line = `${'a'.repeat(600)}\n`;
for (let s = 0; s < 20; s++)
  await api('POST', '/snippets', {
    title: 'a'.repeat(255),
    visibility: 'public',
    files: Array.from({ length: 10 }, (_, n) => ({
      file_path: `${'a'.repeat(190)}${String(s * 10 + n).padStart(9, '0')}/${'a'.repeat(3800)}`,
      content: line.repeat(10),
    })),
  });

async function view(url: string, init?: RequestInit) {
  const started = performance.now();
  const res = await fetch(url, init);
  const bytes = (await res.arrayBuffer()).byteLength;
  return { status: res.status, bytes, ms: Math.round(performance.now() - started) };
}
const round = (calm: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(calm).map(([k, v]) => [k, k === 'peakRssBytes' ? `${Math.round(v / 2 ** 20)} MiB` : Math.round(v)]),
  );
await view(heavy.web_url); // the page renders the views the embed may reuse
for (const [name, request] of [
  ['preview of 45 rows of quotes', previewForm],
  ['embed of ten Markdown files of quotes', () => view(`${heavy.web_url}.js`)],
  ['the same again', () => view(`${heavy.web_url}.js`)],
  ['search page, 200 files matching everywhere', () => view(`${server.url}/search?search=aaa`)],
  ['the same again', () => view(`${server.url}/search?search=aaa`)],
] as const) {
  const { answer, calm } = await whileHostile(server, request);
  console.log(name, JSON.stringify({ answer, calm: round(calm as unknown as Record<string, number>) }));
}

await stop();
