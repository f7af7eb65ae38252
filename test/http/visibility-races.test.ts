// A group made less visible while something inside it is made or raised at the same moment: one of the two
// is refused, never both done (a public project left in a private group would show the group's path and the
// project's snippets to anyone). Each race is run several times, both requests sent together.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const TRIALS = 10;

describe('a group made private while something inside it is made public', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const newGroup = (path: string) =>
    t.ok('POST', '/groups', ROOT_TOKEN, { name: path, path, visibility: 'public' }, 201);
  const madePrivate = (id: number) => t.api('PUT', `/groups/${id}`, ROOT_TOKEN, { visibility: 'private' });

  /**
   * Sends `inside` (what `prepare` made ready in a new public group) and the group's change to private together.
   */
  async function race<T>(
    name: string,
    prepare: (groupId: number, trial: number) => Promise<T>,
    inside: (groupId: number, trial: number, prepared: T) => Promise<{ statusCode: number }>,
    isStored: (groupPath: string, trial: number, prepared: T) => Promise<boolean>,
  ) {
    const outcomes: string[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const group = await newGroup(`${name}${trial}`);
      const prepared = await prepare(group.id, trial);
      const [put, other] = await Promise.all([madePrivate(group.id), inside(group.id, trial, prepared)]);
      outcomes.push(`${put.statusCode}/${other.statusCode}`);
      const ok = (status: number) => status >= 200 && status < 300;
      assert.ok(!(ok(put.statusCode) && ok(other.statusCode)), `trial ${trial}: both went through (${outcomes})`);
      assert.ok(ok(put.statusCode) || ok(other.statusCode), `trial ${trial}: neither went through (${outcomes})`);
      // What is stored agrees with the answers: the refused change left nothing behind.
      const stored = await t.ok('GET', `/groups/${group.id}`, ROOT_TOKEN, undefined, 200);
      assert.equal(stored.visibility, ok(put.statusCode) ? 'private' : 'public');
      assert.equal(await isStored(group.full_path, trial, prepared), ok(other.statusCode));
    }
    return outcomes;
  }

  it('and a public project created in it', async () => {
    await race(
      'create',
      async () => null,
      (groupId, trial) =>
        t.api('POST', '/projects', ROOT_TOKEN, { path: `p${trial}`, namespace_id: groupId, visibility: 'public' }),
      async (groupPath, trial) =>
        (await t.api('GET', `/projects/${encodeURIComponent(`${groupPath}/p${trial}`)}`, ROOT_TOKEN)).statusCode ===
        200,
    );
  });

  it('and a project in it made public', async () => {
    await race(
      'raise',
      (groupId, trial) =>
        t.ok('POST', '/projects', ROOT_TOKEN, { path: `q${trial}`, namespace_id: groupId, visibility: 'private' }, 201),
      (_groupId, _trial, project) => t.api('PUT', `/projects/${project.id}`, ROOT_TOKEN, { visibility: 'public' }),
      async (_groupPath, _trial, project) =>
        (await t.ok('GET', `/projects/${project.id}`, ROOT_TOKEN, undefined, 200)).visibility === 'public',
    );
  });

  it('and a public subgroup created in it', async () => {
    await race(
      'subgroup',
      async () => null,
      (groupId, trial) =>
        t.api('POST', '/groups', ROOT_TOKEN, {
          name: `s${trial}`,
          path: `s${trial}`,
          parent_id: groupId,
          visibility: 'public',
        }),
      async (groupPath, trial) =>
        (await t.api('GET', `/groups/${encodeURIComponent(`${groupPath}/s${trial}`)}`, ROOT_TOKEN)).statusCode === 200,
    );
  });
});
