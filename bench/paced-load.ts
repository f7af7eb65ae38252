// An evenly paced load: request i is due at start + i / rate, and its latency counts from when it was due,
// not from when it was sent, so a stalled server shows up in full (no coordinated omission). Shared by
// bench/mixed.ts and bench/soak.ts; bench/storage.ts uses its client.
//
// The client is node:http over kept-alive connections, not fetch: on this 2-core machine the client shares
// the CPU with the server, and a write request through fetch (undici) took 0.05-0.7 ms longer (RESULTS.md).
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** One request over a kept-alive connection; resolves with the status and the body as text. */
export function requestText(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One request with a token over a kept-alive connection; resolves with the status, rejects on a dropped connection. */
export const request = (base: URL, token: string, method: string, p: string, body?: string): Promise<number> =>
  requestText(
    new URL(p, base),
    method,
    { 'PRIVATE-TOKEN': token, ...(body && { 'content-type': 'application/json' }) },
    body,
  ).then((res) => res.status);

/** Closes the kept-alive connections, so that the process can exit. */
export const closeConnections = () => agent.destroy();

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

/**
 * Sends `total` requests at `rate` a second, `send(i)` making request i; answers each latency from when
 * it was due (sorted) once every request has settled. `settled(i, status, latency)` is told each outcome
 * (status null: the connection dropped).
 */
export async function pacedLoad(
  rate: number,
  total: number,
  send: (i: number) => Promise<number>,
  settled: (i: number, status: number | null, latency: number) => void,
): Promise<number[]> {
  const latencies: number[] = [];
  const start = performance.now() + 50;
  let pending = 0;
  let allSent = false;
  let done = () => {};
  const finished = new Promise<void>((resolve) => (done = resolve));
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending++;
    send(i)
      .then(
        (status) => {
          const latency = performance.now() - due;
          latencies.push(latency);
          settled(i, status, latency);
        },
        () => settled(i, null, performance.now() - due),
      )
      .finally(() => {
        pending--;
        if (allSent && pending === 0) done();
      });
  }
  allSent = true;
  if (pending === 0) done();
  await finished;
  return latencies.sort((a, b) => a - b);
}
