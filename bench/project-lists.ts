// Project lists over many projects (issue 31's "no request can hurt the others"): N project rows (default 80,000,
// two in three public) are written straight into an in-process app's SQLite database, then each list is asked
// five times, anonymous and as their owner. Prints each request's time, sorted, and the longest the event loop
// went without a turn meanwhile (a 1 ms interval's longest gap).
//
//   npx tsx bench/project-lists.ts [projects, default 80000]
import { createTestApp } from '../test/helper.ts';
const N = Number(process.argv[2] ?? 80000);
const t = await createTestApp();
const u = await t.user('alice');
const p = await t.ok('POST', '/projects', u.token, { path: 'seed', visibility: 'public' }, 201);
const k = t.app.store.kysely as any;
const row = await k.selectFrom('projects').selectAll().where('id', '=', p.id).executeTakeFirst();
const { id, ...rest } = row;
for (let i = 0; i < N; i += 500) {
  const rows = [];
  for (let j = i; j < Math.min(N, i + 500); j++)
    rows.push({
      ...rest,
      path: `p${j}`,
      name: `P${j}`,
      full_path: `alice/p${j}`,
      visibility: j % 3 ? 'public' : 'private',
      created_at: new Date(Date.UTC(2020, 0, 1) + j * 1000).toISOString(),
    });
  await k.insertInto('projects').values(rows).execute();
}
for (const [who, token] of [
  ['anonymous', null],
  ['alice', u.token],
] as const)
  for (const q of ['page=1', `page=${Math.floor(N / 150)}`, 'order_by=name&page=2', 'search=p1234']) {
    const times = [];
    let last = performance.now(),
      gap = 0;
    const tick = setInterval(() => {
      const n = performance.now();
      gap = Math.max(gap, n - last);
      last = n;
    }, 1);
    for (let r = 0; r < 5; r++) {
      const s = performance.now();
      const res = await t.api('GET', `/projects?per_page=100&${q}`, token);
      if (res.statusCode !== 200) throw new Error(res.body);
      times.push(performance.now() - s);
    }
    clearInterval(tick);
    times.sort((a, b) => a - b);
    console.log(who, q, times.map((x) => x.toFixed(1)).join(' '), 'longest loop gap', gap.toFixed(1));
  }
await t.close();
