// The members of a project and of the groups above it, over 20,000 users holding a membership at each of three
// levels: one page of them, each user once with their highest level, is worked out off the event loop
// (storage/db/tables/members.ts allPage). Gathered and sorted in the request, the owner of a public group who
// added every user of the instance at each level had every anonymous `members/all` do it on the loop.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';
import { busyShareDuring } from '../stall.ts';

const USERS = 20_000;

describe('members/all over 20,000 users, each a member at three levels', () => {
  let t: TestApp;
  let project: { id: number };
  let firstUser = 0;

  before(async () => {
    t = await createTestApp();
    const top = await t.ok('POST', '/groups', ROOT_TOKEN, { name: 'Top', path: 'top', visibility: 'public' }, 201);
    const sub = await t.ok(
      'POST',
      '/groups',
      ROOT_TOKEN,
      { name: 'Sub', path: 'sub', parent_id: top.id, visibility: 'public' },
      201,
    );
    project = await t.ok(
      'POST',
      '/projects',
      ROOT_TOKEN,
      { path: 'app', namespace_id: sub.id, visibility: 'public' },
      201,
    );
    const kysely = t.app.store.kysely;
    const now = new Date().toISOString();
    for (let first = 0; first < USERS; first += 500) {
      const users = await kysely
        .insertInto('users')
        .values(
          Array.from({ length: 500 }, (_, i) => ({
            username: `many-${first + i}`,
            email: `many-${first + i}@example.com`,
            name: `Many ${first + i}`,
            state: 'active' as const,
            admin: 0,
            external: 0,
            bot: 0,
            created_at: now,
          })),
        )
        .returning('id')
        .execute();
      if (!firstUser) firstUser = users[0].id;
      // Guest of the top group, developer of the subgroup, reporter of the project: developer is the highest.
      const levels = [
        ['Namespace', top.id, 10],
        ['Namespace', sub.id, 30],
        ['Project', project.id, 20],
      ] as const;
      await kysely
        .insertInto('members')
        .values(
          users.flatMap(({ id }) =>
            levels.map(([source_type, source_id, access_level]) => ({
              source_type,
              source_id,
              user_id: id,
              access_level,
              created_at: now,
            })),
          ),
        )
        .execute();
    }
  });
  after(() => t.close());

  it('answers a page, each user once with the highest level, with the event loop mostly free', async () => {
    const url = `/projects/${project.id}/members/all?per_page=100&page=2`;
    await t.api('GET', url, null); // compiled and warm
    const { answer: res, share, ms } = await busyShareDuring(() => t.api('GET', url, null));
    assert.equal(res.statusCode, 200);
    assert.equal(res.json.length, 100);
    // Root (the groups' and the project's owner) is the first user; these are the 100 after the first 99 others.
    assert.deepEqual(
      res.json.slice(0, 2).map((m: { username: string; access_level: number }) => [m.username, m.access_level]),
      [
        ['many-99', 30],
        ['many-100', 30],
      ],
    );
    assert.equal(res.headers['x-total'], undefined, 'more than 10,000: not counted, as every list');
    assert.ok(share < 0.5, `the event loop was busy ${(share * 100).toFixed(0)} % of ${ms} ms`);
  });
});
