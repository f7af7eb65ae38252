// A repository of 50,000 tags. A node's serving cache read every ref from the rows, sorted them and wrote them
// out again before each clone or fetch, changed or not: 190-300 ms on the event loop each (helper-57). It now
// reads them when a write has moved one since (git_repositories.refs_moved). A file written through the API
// read them all too, in its transaction, to find its branch: now it reads the branches it names.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, projectRefRow, ROOT_TOKEN, type TestApp } from '../helper.ts';
import { longestGapDuring } from '../stall.ts';

const TAGS = 50_000;

describe(`a repository of ${TAGS.toLocaleString('en')} tags`, () => {
  let t: TestApp;
  let project: { id: number; path_with_namespace: string };
  const advertised = async () => {
    const res = await t.request({
      method: 'GET',
      url: `/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`,
    });
    assert.equal(res.statusCode, 200);
    return res.body;
  };

  before(async () => {
    t = await createTestApp();
    project = await t.ok(
      'POST',
      '/projects',
      ROOT_TOKEN,
      { path: 'tags', visibility: 'public', initialize_with_readme: true },
      201,
    );
    const kysely = t.app.store.kysely;
    const main = await projectRefRow(t, project.id);
    // Rows as a push of that many tags leaves them (test/git/many-refs.test.ts pushes 3,000 through git).
    for (let first = 0; first < TAGS; first += 1000) {
      const rows = Array.from({ length: 1000 }, (_, i) => ({ ...main, name: `refs/tags/v${first + i}` }));
      await kysely.insertInto('git_refs').values(rows).execute();
    }
  });
  after(() => t.close());

  it('advertises them without reading them again while none moved, takes a file write, and advertises where it moved main', async () => {
    assert.match(await advertised(), /refs\/tags\/v49999\n/);
    const { answer, longestGap } = await longestGapDuring(advertised);
    assert.match(answer, /refs\/tags\/v49999\n/);
    assert.ok(longestGap < 100, `the event loop went ${longestGap.toFixed(0)} ms without a turn`);
    // A file written through the API moves main: the next fetch advertises where it is now.
    const written = await longestGapDuring(() =>
      t.ok(
        'POST',
        `/projects/${project.id}/repository/files/more.txt`,
        ROOT_TOKEN,
        { branch: 'main', commit_message: 'more', content: 'more' },
        201,
      ),
    );
    assert.ok(written.longestGap < 100, `a file write held the event loop ${written.longestGap.toFixed(0)} ms`);
    const [commit] = await t.ok(
      'GET',
      `/projects/${project.id}/repository/commits?per_page=1`,
      ROOT_TOKEN,
      undefined,
      200,
    );
    assert.match(await advertised(), new RegExp(`${commit.id} refs/heads/main\n`));
  });
});
