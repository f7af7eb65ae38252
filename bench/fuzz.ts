// The long fuzz run (issue 17): the generated requests of test/property/request-generator.ts against a
// real server on each database, every request sent whatever came before (the test stops at the first
// failure; this counts them all). Prints the totals: requests, answers by status class, 5xx, dropped
// connections, and the first distinct failures.
//
//   npm run fuzz -- --requests 100000 [--db sqlite|postgres|both] [--seed N]
import { spawnSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { createTestApp, TEST_DB } from '../test/helper.ts';
import {
  buildWorld,
  declaredRoutes,
  type FuzzRequest,
  problemWith,
  requestArbitrary,
  restoreWorld,
  send,
} from '../test/property/request-generator.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '10000' },
    db: { type: 'string', default: 'both' },
    seed: { type: 'string' },
    child: { type: 'boolean', default: false },
  },
});
const requests = Number(values.requests);
const seed = values.seed ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);

if (!values.child) {
  // One process per database: the test harness picks its database when it is loaded.
  for (const db of values.db === 'both' ? ['sqlite', 'postgres'] : [values.db!]) {
    const args = [
      '--import',
      'tsx',
      import.meta.filename,
      '--child',
      '--requests',
      String(requests),
      '--seed',
      String(seed),
    ];
    const run = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, SNIPPETD_TEST_DB: db } });
    if (run.status !== 0) process.exitCode = 1;
  }
} else {
  const t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (t.app.server.address() as AddressInfo).port;
  const world = await buildWorld(t);
  const arbitrary = requestArbitrary(declaredRoutes(t.app), world);
  const byClass = new Map<string, number>();
  const failures = new Map<string, string>();
  let serverErrors = 0;
  let dropped = 0;
  const started = performance.now();
  let pending: FuzzRequest[] = [];
  // Generated in batches of 1,000, batch k from seed + k: the same seed gives the same requests.
  for (let i = 0; i < requests; i++) {
    const batch = Math.floor(i / 1000);
    if (i % 1000 === 0) pending = fc.sample(arbitrary, { numRuns: Math.min(1000, requests - i), seed: seed + batch });
    const req = pending[i % 1000];
    if (i % 100 === 99) await restoreWorld(t.app.store, world);
    try {
      const answer = await send(port, req);
      const cls = String(answer.status);
      byClass.set(cls, (byClass.get(cls) ?? 0) + 1);
      if (answer.status >= 500) serverErrors++;
      const problem = problemWith(req, answer);
      if (problem && failures.size < 10) failures.set(problem.slice(0, 80), `${req.method} ${req.path}: ${problem}`);
    } catch (error) {
      dropped++;
      if (failures.size < 10) failures.set(String(error), `${req.method} ${req.path}: ${error}`);
    }
  }
  const alive = await send(port, { method: 'GET', path: '/api/v4/templates/licenses/mit', headers: {} });
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${TEST_DB}: ${requests} requests (seed ${seed}) in ${seconds.toFixed(0)} s: ${[...byClass]
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(
        ', ',
      )}; 5xx ${serverErrors}, dropped ${dropped}, answers afterwards: ${alive.status === 200 ? 'yes' : 'NO'}`,
  );
  for (const failure of failures.values()) console.log(`  ${failure}`);
  await t.close();
  if (serverErrors || dropped || alive.status !== 200 || failures.size) process.exitCode = 1;
}
