// Slow clients cannot hold a connection forever (issue 17): a request whose headers or body trickle in a
// byte at a time is answered 408 and closed once the request timeout passes, and a connection on which
// nothing moves, before a request or between two, is closed after the idle timeout. Real sockets, with timeouts of one or two seconds.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp } from '../helper.ts';

/** Connects, writes `head`, then one byte of `drip` every 250 ms; answers what came back and when it closed. */
function trickle(port: number, head: string, drip: string) {
  return new Promise<{ received: string; closedAfterMs: number }>((resolve) => {
    const started = performance.now();
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
    let received = '';
    let i = 0;
    const timer = setInterval(() => {
      if (i < drip.length && !socket.destroyed) socket.write(drip[i++]);
    }, 250);
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ received, closedAfterMs: performance.now() - started });
    });
  });
}

// The tests run at once: each waits out a timeout on a socket of its own (about 9 s one after another).
describe('slow clients', { concurrency: true }, () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp({ requestTimeoutSeconds: 2, idleTimeoutSeconds: 1 });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  after(() => t.close());

  it('a body sent a byte at a time: 408 and closed after the request timeout', async () => {
    const head =
      'POST /api/v4/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
    // Well-formed JSON so far (a string still open), so that only the clock can end it: JSON that goes wrong
    // is answered at once (docs/gitlab-compatibility.md#json-limits).
    const { received, closedAfterMs } = await trickle(port, head, `{"name":"${'x'.repeat(990)}`);
    assert.equal(
      received,
      'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 33\r\n\r\n{"message":"408 Request Timeout"}',
    );
    assert.ok(closedAfterMs >= 1900 && closedAfterMs < 4500, `closed after ${closedAfterMs} ms`);
  });

  it('headers sent a byte at a time: 408 and closed after the request timeout', async () => {
    const { received, closedAfterMs } = await trickle(port, 'GET /api/v4/version HTTP/1.1\r\n', 'X-Slow: '.repeat(100));
    assert.match(received, /^HTTP\/1\.1 408 /);
    assert.ok(closedAfterMs >= 1900 && closedAfterMs < 4500, `closed after ${closedAfterMs} ms`);
  });

  it('a connection on which nothing moves is closed after the idle timeout', async () => {
    const { received, closedAfterMs } = await trickle(port, '', '');
    assert.equal(received, '');
    assert.ok(closedAfterMs >= 900 && closedAfterMs < 3500, `closed after ${closedAfterMs} ms`);
  });

  it('a kept-alive connection is closed after the idle timeout once its answer is sent', async () => {
    // Fastify's own keep-alive timeout (72 s) held it open past the idle timeout between requests.
    const { received, closedAfterMs } = await trickle(port, 'GET /api/v4/version HTTP/1.1\r\nHost: x\r\n\r\n', '');
    assert.match(received, /^HTTP\/1\.1 401 /);
    assert.match(received, /\r\nKeep-Alive: timeout=1\r\n/);
    assert.ok(closedAfterMs >= 900 && closedAfterMs < 3500, `closed after ${closedAfterMs} ms`);
  });

  it('headers beyond the size limit: 431 with the GitLab-shaped body; what is not HTTP: 400', async () => {
    const big = await trickle(port, `GET /api/v4/version HTTP/1.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, '');
    assert.match(big.received, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    assert.ok(big.received.endsWith('\r\n\r\n{"message":"431 Request Header Fields Too Large"}'), big.received);
    const garbage = await trickle(port, 'NOT HTTP AT ALL\r\n\r\n', '');
    assert.match(garbage.received, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.ok(garbage.received.endsWith('\r\n\r\n{"message":"400 Bad request"}'), garbage.received);
  });

  it('a request sent at once is answered as usual', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v4/templates/licenses/mit`);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).key, 'mit');
  });
});
