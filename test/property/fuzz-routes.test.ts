// Generated hostile requests against every declared route (request-generator.ts), over a real socket: no
// 5xx, no dropped connection, GitLab's body shape for every API refusal, and the server still answers
// afterwards. 3,000 requests per database; SNIPPETD_FUZZ_REQUESTS asks for more, FUZZ_SEED replays a run
// (fast-check prints the seed and the smallest failing request when one fails). `npm run fuzz` runs long.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createTestApp, type TestApp } from '../helper.ts';
import {
  buildWorld,
  declaredRoutes,
  problemWith,
  requestArbitrary,
  restoreWorld,
  send,
  type World,
} from './request-generator.ts';

const REQUESTS = Number(process.env.SNIPPETD_FUZZ_REQUESTS ?? 3000);

describe('generated requests to every route', { timeout: 600_000 }, () => {
  let t: TestApp;
  let port: number;
  let world: World;
  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
    world = await buildWorld(t);
  });
  after(() => t.close());

  it('reads every route from the route table, the pages and the service endpoints included', () => {
    const urls = declaredRoutes(t.app).map((r) => r.url);
    for (const url of [
      '/api/v4/projects/:id/snippets/:snippet_id',
      '/-/liveness',
      '/api/v4/templates/licenses/:name',
      '*',
    ])
      assert.ok(urls.includes(url), `${url} is not among ${urls.length} routes`);
  });

  it(`${REQUESTS} requests: no 5xx, no dropped connection, GitLab's shape for API refusals`, async () => {
    const routes = declaredRoutes(t.app);
    const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(requestArbitrary(routes, world), async (req) => {
        if (++sent % 100 === 0) await restoreWorld(t.app.store, world);
        const answer = await send(port, req);
        const problem = problemWith(req, answer);
        if (problem) throw new Error(`${req.method} ${req.path}: ${problem}`);
      }),
      { numRuns: REQUESTS, seed, endOnFailure: false, includeErrorInReport: true },
    );
    // Anonymous: the run may have blocked root or revoked its token, as a client may.
    const alive = await send(port, { method: 'GET', path: '/api/v4/templates/licenses/mit', headers: {} });
    assert.equal(alive.status, 200);
  });
});
