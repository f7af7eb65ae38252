// The soak (issue 17): mixed reads and writes at a fixed, evenly paced rate against a real `snippetd serve`
// for minutes on end. Every answer must be the expected 2xx (a dropped connection counts as an error too),
// and the server's memory must level off: its RSS, sampled every 10 s, averaged over the last minute,
// within 10 % of the second minute's average (the first minute is warm-up: caches and JIT).
// Exits non-zero when either fails.
//
//   npx tsx bench/soak.ts [--minutes 10] [--rate 200] [--database-url URL]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startBenchServer } from '../scripts/spawn-server.ts';
import { closeConnections, pacedLoad, percentile, request } from './paced-load.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    rate: { type: 'string', default: '200' },
    'database-url': { type: 'string' },
  },
});
const MINUTES = Number(values.minutes);
const RATE = Number(values.rate);
const TOKEN = 'soak-root-token-0123456789abcdef';
const SNIPPETS = 100;
const SAMPLE_EVERY_MS = 10_000;
const MAX_DRIFT = 0.1;

const rssBytes = (pid: number) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-soak-'));
  const server = await startBenchServer({ dataDir, token: TOKEN, databaseUrl: values['database-url'] });
  const base = new URL(server.url);
  const api = (p: string, method = 'GET', body?: object) =>
    fetch(`${server.url}/api/v4${p}`, {
      method,
      headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
      body: body && JSON.stringify(body),
    }).then((r) => r.json());
  try {
    const project = (await api('/projects', 'POST', { path: 'soak', visibility: 'public' })) as {
      id: number;
      path_with_namespace: string;
    };
    const snippets = `/api/v4/projects/${project.id}/snippets`;
    const snippetBody = (i: number) =>
      JSON.stringify({
        title: `s${i}`,
        visibility: 'public',
        files: [
          { file_path: 'a.rb', content: `puts ${i}\n`.repeat(30) },
          { file_path: 'doc/readme.md', content: `# snippet ${i}\n` },
        ],
      });
    const ids: number[] = [];
    for (let i = 0; i < SNIPPETS; i++)
      ids.push(
        ((await api(`/projects/${project.id}/snippets`, 'POST', JSON.parse(snippetBody(i)))) as { id: number }).id,
      );

    // Snippets the load creates and deletes again (no other request touches them), so the data stays level.
    const churn: number[] = [];
    const errors = new Map<string, number>();
    const error = (what: string) => errors.set(what, (errors.get(what) ?? 0) + 1);
    const send = (i: number): Promise<number> => {
      const pick = (i * 37) % 200;
      const id = ids[i % ids.length];
      const snippet = `${snippets}/${id}`;
      const expect = (kind: string, wanted: number, sent: Promise<number>) =>
        sent.then((status) => {
          if (status !== wanted) error(`${kind} answered ${status}`);
          return status;
        });
      if (pick < 110) return expect('GET snippet', 200, request(base, TOKEN, 'GET', snippet));
      if (pick < 140) return expect('list', 200, request(base, TOKEN, 'GET', `${snippets}?per_page=20`));
      if (pick < 160)
        return expect('raw', 200, request(base, TOKEN, 'GET', `${snippet}/files/main/doc%2Freadme.md/raw`));
      if (pick < 170) return expect('GET project', 200, request(base, TOKEN, 'GET', `/api/v4/projects/${project.id}`));
      if (pick < 172)
        return expect(
          'git info/refs',
          200,
          request(
            base,
            TOKEN,
            'GET',
            `/${project.path_with_namespace}/snippets/${id}.git/info/refs?service=git-upload-pack`,
          ),
        );
      if (pick < 182)
        return expect(
          'title update',
          200,
          request(base, TOKEN, 'PUT', snippet, JSON.stringify({ title: `title ${i}` })),
        );
      if (pick < 190) {
        const files = [{ action: 'update', file_path: 'a.rb', content: `puts ${i}\n`.repeat(30) }];
        return expect('file update', 200, request(base, TOKEN, 'PUT', snippet, JSON.stringify({ files })));
      }
      const victim = pick >= 195 && churn.length > 0 ? churn.shift() : undefined;
      if (victim !== undefined) return expect('delete', 204, request(base, TOKEN, 'DELETE', `${snippets}/${victim}`));
      return fetch(`${server.url}${snippets}`, {
        method: 'POST',
        headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
        body: snippetBody(i),
      }).then(async (res) => {
        const body = await res.text();
        if (res.status === 201) churn.push((JSON.parse(body) as { id: number }).id);
        else error(`create answered ${res.status}`);
        return res.status;
      });
    };

    // The JS heap beside the RSS tells growth of JavaScript objects from growth below them (SQLite, malloc).
    // External memory (Buffers: object bodies, packs) is outside the heap but not below JavaScript.
    const memory = async () => {
      const metrics = await (await fetch(`${server.url}/-/metrics`)).text();
      const metric = (name: string) => Number(new RegExp(`^snippetd_nodejs_${name} (\\S+)`, 'm').exec(metrics)?.[1]);
      return { heap: metric('heap_size_used_bytes'), external: metric('external_memory_bytes') };
    };
    const samples: { at: number; rss: number; heap: number; external: number }[] = [];
    const started = performance.now();
    const sample = async () => {
      const at = (performance.now() - started) / 1000;
      samples.push({ at, rss: rssBytes(server.pid), ...(await memory()) });
    };
    await sample();
    const sampler = setInterval(async () => {
      await sample();
      const last = samples[samples.length - 1];
      console.error(
        `${last.at.toFixed(0)} s: RSS ${mib(last.rss)} MiB, heap used ${mib(last.heap)} MiB, ` +
          `external ${mib(last.external)} MiB, ` +
          `errors ${[...errors.values()].reduce((a, b) => a + b, 0)}`,
      );
    }, SAMPLE_EVERY_MS);
    let dropped = 0;
    const total = Math.round(RATE * MINUTES * 60);
    const latencies = await pacedLoad(RATE, total, send, (_i, status) => {
      if (status === null) dropped++;
    });
    clearInterval(sampler);
    await sample();
    if (dropped) errors.set('dropped connection', dropped);

    const seconds = samples[samples.length - 1].at;
    const secondMinuteSamples = samples.filter((s) => s.at >= 60 && s.at < 120);
    const lastMinuteSamples = samples.filter((s) => s.at >= seconds - 60);
    const secondMinute = mean(secondMinuteSamples.map((s) => s.rss));
    const lastMinute = mean(lastMinuteSamples.map((s) => s.rss));
    // Shorter runs (a quick try of the script) have no drift to judge.
    const drift = MINUTES >= 3 ? (lastMinute - secondMinute) / secondMinute : Number.NaN;
    const errorCount = [...errors.values()].reduce((a, b) => a + b, 0);
    const db = values['database-url'] ? 'PostgreSQL' : 'SQLite';
    console.log(
      `${db}, ${RATE} requests/s for ${MINUTES} min (${total} requests: 55 % GET snippet, 15 % list, 10 % raw, ` +
        '5 % GET project, 1 % git info/refs, 5 % title updates, 4 % file updates, 5 % creates and deletes)',
    );
    console.log('| errors | p50 ms | p99 ms | max ms | RSS 2nd minute MiB | RSS last minute MiB | drift |');
    console.log('|---|---|---|---|---|---|---|');
    console.log(
      `| ${errorCount} | ${percentile(latencies, 50).toFixed(2)} | ${percentile(latencies, 99).toFixed(2)} | ` +
        `${latencies[latencies.length - 1].toFixed(1)} | ${mib(secondMinute)} | ${mib(lastMinute)} | ` +
        `${(drift * 100).toFixed(1)} % |`,
    );
    for (const kind of ['heap', 'external'] as const)
      console.log(
        `JS ${kind === 'heap' ? 'heap used' : 'external memory'}: ` +
          `2nd minute ${mib(mean(secondMinuteSamples.map((s) => s[kind])))} MiB, ` +
          `last minute ${mib(mean(lastMinuteSamples.map((s) => s[kind])))} MiB`,
      );
    console.log(`RSS samples (MiB, every 10 s): ${samples.map((s) => mib(s.rss)).join(' ')}`);
    console.log(`heap used samples (MiB): ${samples.map((s) => mib(s.heap)).join(' ')}`);
    console.log(`external memory samples (MiB): ${samples.map((s) => mib(s.external)).join(' ')}`);
    for (const [what, count] of errors) console.log(`error: ${what} × ${count}`);
    if (errorCount > 0 || drift >= MAX_DRIFT) process.exitCode = 1; // NaN (a short run) compares false
  } finally {
    server.stop();
    closeConnections();
    setTimeout(() => fs.rmSync(dataDir, { recursive: true, force: true }), 500);
  }
}

await main();
