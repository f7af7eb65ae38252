// A deep page of a project's snippet list (issue 17): 100,000 snippets in one project, inserted directly,
// then GET /projects/:id/snippets's query (store.snippets.listPage) at the first, middle and last page, as
// a member (every visibility) and as a visitor (public only). On SQLite the query runs on the event loop,
// so its time is time every other request waits.
//
//   npx tsx bench/deep-page.ts [--database-url postgres://postgres@127.0.0.1:5432/test]
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openDatabase } from '../src/storage/db/database.ts';
import { migrateToLatest } from '../src/storage/db/migrate.ts';
import { createStore } from '../src/storage/db/store.ts';
import type { Visibility } from '../src/storage/db/schema.ts';
import type { SnippetScope } from '../src/storage/db/tables/snippets.ts';

const { values } = parseArgs({ options: { 'database-url': { type: 'string' } } });
const SNIPPETS = 100_000;
const schema = `bench_deep_${process.pid}`;
let url = values['database-url'] ?? 'sqlite::memory:';
if (url.startsWith('postgres')) {
  const admin = openDatabase(url);
  await sql`CREATE SCHEMA ${sql.raw(schema)}`.execute(admin.kysely);
  await admin.close();
  url = `${url}${url.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`;
}
const db = openDatabase(url);
try {
  await migrateToLatest(db);
  const store = createStore(db);
  const now = new Date().toISOString();
  const user = await store.users.insert({
    username: 'u',
    email: 'u@example.com',
    name: 'u',
    public_email: null,
    state: 'active',
    admin: 0,
    external: 0,
    bot: 0,
    password_digest: null,
    namespace_id: null,
    created_at: now,
  });
  const ns = await store.namespaces.insert(
    {
      kind: 'group',
      name: 'g',
      path: 'g',
      full_path: 'g',
      full_name: 'g',
      parent_id: null,
      owner_id: null,
      visibility: 'public',
      description: '',
      file_template_project_id: null,
      created_at: now,
    },
    null,
    db.kysely,
  );
  const project = await store.projects.insert({
    namespace_id: ns.id,
    name: 'p',
    path: 'p',
    full_path: 'g/p',
    description: null,
    visibility: 'public',
    default_branch: 'main',
    snippets_access_level: 'enabled',
    archived: 0,
    creator_id: user.id,
    created_at: now,
    last_activity_at: now,
  });
  const levels: Visibility[] = ['public', 'internal', 'private'];
  await db.kysely.transaction().execute(async (tx) => {
    for (let i = 0; i < SNIPPETS; i += 500) {
      const rows = Array.from({ length: 500 }, (_, j) => ({
        project_id: project.id,
        author_id: user.id,
        title: `snippet ${i + j}`,
        description: null,
        visibility: levels[(i + j) % 3],
        file_name: 'a.rb',
        content: '',
        head_commit: null,
        default_branch: 'main',
        created_at: now,
        updated_at: now,
      }));
      await tx.insertInto('snippets').values(rows).execute();
    }
  });
  if (db.dialect === 'postgres') await sql`ANALYZE snippets`.execute(db.kysely);

  console.log(`| viewer | page | rows | ms (median of 5) |\n|---|---|---|---|`);
  for (const [viewer, scope] of [
    ['administrator (every visibility)', { everything: true }],
    ['visitor (public)', { everything: false, userId: null, levels: ['public'] }],
  ] as [string, SnippetScope][]) {
    const count = scope.everything ? SNIPPETS : Math.ceil(SNIPPETS / 3);
    for (const [name, offset] of [
      ['first', 0],
      ['middle', Math.floor(count / 2)],
      ['last', count - 20],
    ] as const) {
      const times: number[] = [];
      let rows = 0;
      for (let k = 0; k < 5; k++) {
        const t = performance.now();
        rows = (await store.snippets.visiblePage(scope, { projectId: project.id }, { offset, limit: 20 })).rows.length;
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      console.log(`| ${viewer} | ${name} (offset ${offset}) | ${rows} | ${times[2].toFixed(2)} |`);
    }
  }
} finally {
  if (db.dialect === 'postgres') await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db.kysely);
  await db.close();
}
