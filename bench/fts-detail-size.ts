// How large a contentless FTS5 trigram index of N texts of million.ts's shape is with each `detail` option
// (full keeps every trigram's positions, column its columns, none neither): what SQLite's search index
// would save without positions (issue 31's size target). Usage: npx tsx bench/fts-detail-size.ts [--texts 100000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';

const { values } = parseArgs({ options: { texts: { type: 'string', default: '100000' } } });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-fts-size-'));
for (const detail of ['full', 'column', 'none']) {
  const db = new SQLite(path.join(dir, `${detail}.sqlite3`));
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'trigram', content = '', detail = ${detail})`);
  const insert = db.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)');
  db.transaction(() => {
    for (let n = 0; n < Number(values.texts); n++) insert.run(n + 1, `puts "snippet ${n}: ${n % 97} bottles"\n`);
  })();
  db.exec(`INSERT INTO t (t) VALUES ('optimize')`);
  const { bytes } = db.prepare('SELECT sum(pgsize) AS bytes FROM dbstat').get() as { bytes: number };
  console.log(`detail=${detail}: ${(bytes / 2 ** 20).toFixed(1)} MiB`);
  db.close();
}
fs.rmSync(dir, { recursive: true, force: true });
