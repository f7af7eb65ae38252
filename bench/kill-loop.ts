// The long kill -9 loop (issue 17): the rounds of test/durability/kill.test.ts (test/durability/kill-rounds.ts:
// API updates, git pushes, creates and deletes, killed mid-flight, then every rule checked after each
// restart) as many times as asked, on each database. The test stops at any problem; this counts them all.
// Prints a line per kill and the totals: kills, acknowledged writes, lost, disagreements, leftovers.
//
//   npx tsx bench/kill-loop.ts --kills 100 [--db sqlite|postgres|both]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { postgresSchemaUrl } from '../test/helper.ts';
import { killLoop, type KillLoopTotals } from '../test/durability/kill-rounds.ts';

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '50' },
    db: { type: 'string', default: 'both' },
  },
});
const kills = Number(values.kills);

const line = (t: KillLoopTotals) =>
  `kills ${t.kills}, acknowledged writes ${t.acknowledgedWrites} (deletes ${t.acknowledgedDeletes}), ` +
  `in flight at a kill ${t.inFlightAtKill} (done ${t.inFlightDone}), ` +
  `lost ${t.lost}, disagreements ${t.disagreements}, leftovers ${t.leftovers}, other ${t.other}`;

for (const db of values.db === 'both' ? ['sqlite', 'postgres'] : [values.db!]) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-kill-loop-'));
  const schema = db === 'postgres' ? await postgresSchemaUrl() : null;
  const databaseUrl = schema ? schema.url : `sqlite:${path.join(dataDir, 'snippetd.sqlite3')}`;
  const started = performance.now();
  try {
    const totals = await killLoop({
      dataDir,
      databaseUrl,
      kills,
      onKill: (kill, sofar) => console.log(`${db} kill ${kill}/${kills}: ${line(sofar)}`),
    });
    const minutes = ((performance.now() - started) / 60_000).toFixed(1);
    console.log(`\n${db === 'sqlite' ? 'SQLite' : 'PostgreSQL'} (${minutes} min): ${line(totals)}`);
    for (const problem of totals.problems) console.log(`  ${problem}`);
    if (totals.problems.length) process.exitCode = 1;
  } finally {
    await schema?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
