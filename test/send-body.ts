// A request with a large body sent over a plain socket, for tests and benchmarks of what a server does while a
// body is still coming: the client stops sending as soon as an answer arrives, and says how much it had sent.
import net from 'node:net';
import type { Spawned } from '../scripts/spawn-server.ts';

export interface Sent {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** How many body bytes the client handed to its socket before the answer came. */
  sentBytes: number;
}

/**
 * Sends a request whose body is `total` bytes: `head`, `pattern` repeated, then `tail` (with a Content-Length,
 * or chunked when `chunked`), 64 KiB at a time as fast as the server reads it, and stops sending as soon as an
 * answer arrives. Answers that answer and how much of the body had been sent by then. sendBody() sends a body
 * given whole the same way: fetch() holds its caller's event loop while it writes a large one (270-380 ms for
 * 40 MiB), which would time the test's own probes, not the server.
 */
export function send(
  server: Spawned,
  opts: {
    path: string;
    headers: Record<string, string>;
    head: string;
    pattern: string;
    total: number;
    tail?: string;
    chunked?: boolean;
    /** The whole body instead (head, pattern and tail empty). */
    body?: Buffer;
  },
): Promise<Sent> {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  const lines = Object.entries(opts.headers).map(([k, v]) => `${k}: ${v}\r\n`);
  const framing = opts.chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${opts.total}\r\n`;
  const piece = Buffer.from(opts.pattern.repeat(Math.ceil((64 * 1024) / opts.pattern.length)));
  let received = '';
  let answered = false;
  let sentBytes = 0;
  // The sender waits here for the socket to drain, an answer or the end, whichever comes first.
  let wake = (_?: unknown) => {};
  for (const event of ['drain', 'data', 'close']) socket.on(event, () => wake());
  const frame = (data: Buffer | string) =>
    opts.chunked
      ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), Buffer.from(data), Buffer.from('\r\n')])
      : data;
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      answered ||= received.includes('\r\n\r\n');
    });
    socket.on('error', () => {}); // the server may close while the client is still sending
    socket.on('close', () => {
      const at = received.indexOf('\r\n\r\n');
      if (at < 0) return reject(new Error(`no answer after ${sentBytes} bytes: ${received}`));
      const [statusLine, ...headerLines] = received.slice(0, at).split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: received.slice(at + 4), sentBytes });
    });
    socket.once('connect', async () => {
      socket.write(`POST ${opts.path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${lines.join('')}${framing}\r\n`);
      socket.write(frame(opts.head));
      sentBytes = opts.head.length;
      const tail = opts.tail ?? '';
      while (!answered && !socket.destroyed && sentBytes < opts.total - tail.length) {
        const data = opts.body
          ? opts.body.subarray(sentBytes, sentBytes + 64 * 1024)
          : piece.subarray(0, Math.min(piece.length, opts.total - tail.length - sentBytes));
        sentBytes += data.length;
        // A turn of the event loop after each piece, so that an answer is seen as soon as it comes even while
        // the socket takes every piece at once.
        if (!socket.write(frame(data))) await new Promise((resume) => (wake = resume));
        else await new Promise((resume) => setImmediate(resume));
      }
      if (!answered && !socket.destroyed && tail) {
        socket.write(frame(tail));
        sentBytes += tail.length;
      }
      if (!answered && !socket.destroyed && opts.chunked) socket.write('0\r\n\r\n');
    });
  });
}

/** send() of a body given whole. */
export const sendBody = (server: Spawned, opts: { path: string; headers: Record<string, string>; body: Buffer }) =>
  send(server, { ...opts, head: '', pattern: ' ', total: opts.body.length });
