// GET /projects/:id/repository/tags and …/tags/:tag_name (GitLab's lib/api/tags.rb and Tag entity): annotated and
// lightweight tags, newest commit first by default, by name or version on request, searched as GitLab's TagsFinder
// does, paginated with the totals. git, on the node's copy of the repository, is the oracle of the orders.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, gitSync, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';

describe('project tags API', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, stranger: U;
  let P: number;
  let gitOf: (args: string[], input?: string) => string;
  const made: Record<string, string> = {};
  const tagObjects: Record<string, string> = {};

  const list = async (query = '', token: string | null = alice.token) => {
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${P}/repository/tags${query}`, token });
    assert.equal(res.statusCode, 200, res.body);
    return res;
  };
  /** git on the node's copy of the repository, brought up to date with what the API wrote. */
  const refresh = async () => {
    gitOf = gitSync((await t.gitDir('project', P))!);
  };
  const names = async (query = '') => (await list(query)).json.map((tag: { name: string }) => tag.name);

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    alice = await t.user('alice');
    stranger = await t.user('stranger');
    P = (
      await t.ok(
        'POST',
        '/projects',
        alice.token,
        { path: 'code', visibility: 'private', initialize_with_readme: true },
        201,
      )
    ).id;
    gitOf = gitSync((await t.gitDir('project', P))!);
    const tree = gitOf(['rev-parse', 'main^{tree}']);
    let parent = gitOf(['rev-parse', 'main']);
    for (const [name, at] of [
      ['c1', 1_600_000_100],
      ['c2', 1_600_000_200],
      ['c3', 1_600_000_300],
      ['c4', 1_600_000_400],
    ] as const) {
      const who = `Ann Other <ann@example.org> ${at} +0200`;
      parent = gitOf(
        ['hash-object', '-t', 'commit', '-w', '--stdin'],
        `tree ${tree}\nparent ${parent}\nauthor ${who}\ncommitter ${who}\n\n${name}\n`,
      );
      made[name] = parent;
    }
    gitOf(['update-ref', 'refs/heads/main', parent]);
    for (const [tag, commit, at] of [
      ['v1.0', 'c1', 1_600_000_500],
      ['v1.2', 'c2', 1_600_000_600],
    ] as const) {
      tagObjects[tag] = gitOf(
        ['mktag'],
        `object ${made[commit]}\ntype commit\ntag ${tag}\ntagger Tom Tagger <tom@example.org> ${at} +0100\n\nRelease ${tag}\n`,
      );
      gitOf(['update-ref', `refs/tags/${tag}`, tagObjects[tag]]);
    }
    gitOf(['update-ref', 'refs/tags/v1.10', made.c3]);
    gitOf(['update-ref', 'refs/tags/zeta', made.c4]);
    await t.importGitDir('project', P);
  });
  after(() => t.close());

  it("lists the tags newest commit first as GitLab's Tag entity, annotated and lightweight", async () => {
    const res = await list();
    assert.deepEqual(
      res.json.map((tag: { name: string }) => tag.name),
      ['zeta', 'v1.10', 'v1.2', 'v1.0'],
    );
    assert.equal(res.headers['x-total'], '4');
    const annotated = res.json.find((tag: { name: string }) => tag.name === 'v1.0');
    assert.deepEqual(Object.keys(annotated), [
      'name',
      'message',
      'target',
      'commit',
      'release',
      'protected',
      'created_at',
    ]);
    assert.deepEqual(
      [
        annotated.message,
        annotated.target,
        annotated.commit.id,
        annotated.release,
        annotated.protected,
        annotated.created_at,
      ],
      ['Release v1.0\n', tagObjects['v1.0'], made.c1, null, false, '2020-09-13T12:35:00.000Z'],
    );
    assert.equal(annotated.commit.web_url, `${BASE}/alice/code/-/commit/${made.c1}`);
    const light = res.json.find((tag: { name: string }) => tag.name === 'zeta');
    assert.deepEqual([light.message, light.target, light.commit.id, light.created_at], ['', made.c4, made.c4, null]);
    assert.deepEqual(await t.ok('GET', `/projects/${P}/repository/tags/v1.0`, alice.token, undefined, 200), annotated);
  });

  it('orders by name and by version as git does, either way', async () => {
    const git = (...args: string[]) =>
      gitOf(['for-each-ref', '--format=%(refname:lstrip=2)', ...args, 'refs/tags']).split('\n');
    assert.deepEqual(await names('?order_by=name&sort=asc'), git('--sort=refname'));
    assert.deepEqual(await names('?order_by=name'), git('--sort=-refname'));
    assert.deepEqual(await names('?order_by=version&sort=asc'), git('--sort=version:refname'));
    assert.deepEqual(await names('?order_by=version&sort=asc'), ['v1.0', 'v1.2', 'v1.10', 'zeta']);
    assert.deepEqual(await names('?sort=asc'), ['v1.0', 'v1.2', 'v1.10', 'zeta']);
  });

  it('searches as TagsFinder: ^ at the start, $ at the end, else anywhere, in any case; pages with the totals', async () => {
    assert.deepEqual(await names('?search=%5Ev1.1&order_by=name'), ['v1.10']);
    assert.deepEqual(await names('?search=0%24&order_by=name&sort=asc'), ['v1.0', 'v1.10']);
    assert.deepEqual(await names('?search=V1&order_by=name&sort=asc'), ['v1.0', 'v1.10', 'v1.2']);
    const page = await list('?per_page=3&page=2');
    assert.deepEqual(
      page.json.map((tag: { name: string }) => tag.name),
      ['v1.0'],
    );
    assert.deepEqual(
      [page.headers['x-total'], page.headers['x-total-pages'], page.headers['x-next-page']],
      ['4', '2', ''],
    );
  });

  it('answers 404 Tag Not Found, 400 for an unknown order, and hides a private project', async () => {
    const missing = await t.api('GET', `/projects/${P}/repository/tags/nope`, alice.token);
    assert.deepEqual([missing.statusCode, missing.json], [404, { message: '404 Tag Not Found' }]);
    const bad = await t.api('GET', `/projects/${P}/repository/tags?order_by=size`, alice.token);
    assert.deepEqual([bad.statusCode, bad.json], [400, { error: 'order_by does not have a valid value' }]);
    const hidden = await t.api('GET', `/projects/${P}/repository/tags`, stranger.token);
    assert.deepEqual([hidden.statusCode, hidden.json], [404, { message: '404 Project Not Found' }]);
    const empty = (await t.ok('POST', '/projects', alice.token, { path: 'empty' }, 201)).id;
    assert.deepEqual(await t.ok('GET', `/projects/${empty}/repository/tags`, alice.token, undefined, 200), []);
  });

  it('makes a lightweight tag, and an annotated one when there is a message, as git then reads them', async () => {
    const light = await t.ok(
      'POST',
      `/projects/${P}/repository/tags`,
      alice.token,
      { tag_name: 'rel-1', ref: 'main' },
      201,
    );
    assert.deepEqual(
      [light.name, light.message, light.target, light.commit.id, light.created_at],
      ['rel-1', '', made.c4, made.c4, null],
    );
    await refresh();
    assert.equal(gitOf(['cat-file', '-t', 'refs/tags/rel-1']), 'commit');
    const before = Date.now();
    const annotated = await t.ok(
      'POST',
      `/projects/${P}/repository/tags`,
      alice.token,
      { tag_name: 'rel-2', ref: made.c2, message: '  Second release  ' },
      201,
    );
    await refresh();
    assert.equal(gitOf(['cat-file', '-t', 'refs/tags/rel-2']), 'tag');
    assert.equal(annotated.target, gitOf(['rev-parse', 'refs/tags/rel-2']));
    assert.equal(annotated.commit.id, gitOf(['rev-parse', 'refs/tags/rel-2^{commit}']));
    assert.equal(gitOf(['tag', '-l', '--format=%(contents)', 'rel-2']), 'Second release');
    assert.match(gitOf(['cat-file', 'tag', 'refs/tags/rel-2']), /^tagger ALICE <alice@example\.com> \d+ \+0000$/m);
    assert.equal(annotated.message, 'Second release\n');
    assert.ok(Math.abs(Date.parse(annotated.created_at) - before) < 60_000, annotated.created_at);
    assert.equal(gitOf(['fsck', '--strict', '--no-progress']), '');
    assert.deepEqual(await t.ok('GET', `/projects/${P}/repository/tags/rel-2`, alice.token, undefined, 200), annotated);
  });

  it('refuses as Tags::CreateService: an empty target, an invalid name, a taken one, a target naming nothing', async () => {
    await refresh();
    const before = gitOf(['for-each-ref', 'refs/tags']);
    for (const [body, status, message] of [
      [{ tag_name: 'x', ref: ' ' }, 400, 'Target is empty'],
      [{ tag_name: 'bad name', ref: 'main' }, 400, 'Tag name invalid'],
      [{ tag_name: 'HEAD', ref: 'main' }, 400, 'Tag name invalid'],
      [{ tag_name: 'refs/heads/main', ref: 'main' }, 400, 'Tag name invalid'],
      [{ tag_name: 'v1.0', ref: 'main' }, 409, 'Tag v1.0 already exists'],
      [{ tag_name: 'y', ref: 'nowhere' }, 400, 'Target nowhere is invalid'],
    ] as const) {
      const res = await t.api('POST', `/projects/${P}/repository/tags`, alice.token, body);
      assert.deepEqual([res.statusCode, res.json], [status, { message }], JSON.stringify(body));
    }
    await refresh();
    assert.equal(gitOf(['for-each-ref', 'refs/tags']), before);
    const hidden = await t.api('POST', `/projects/${P}/repository/tags`, stranger.token, {
      tag_name: 'z',
      ref: 'main',
    });
    assert.equal(hidden.statusCode, 404);
  });

  it('deletes a tag: 204 and git no longer has it; 404 for one not there; 412 when its commit is newer', async () => {
    await t.ok(
      'POST',
      `/projects/${P}/repository/tags`,
      alice.token,
      { tag_name: 'doomed', ref: 'main', message: 'm' },
      201,
    );
    const stale = await t.api('DELETE', `/projects/${P}/repository/tags/doomed`, alice.token, undefined, {
      'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT',
    });
    assert.deepEqual([stale.statusCode, stale.json], [412, { message: '412 Precondition Failed' }]);
    const res = await t.api('DELETE', `/projects/${P}/repository/tags/doomed`, alice.token);
    assert.equal(res.statusCode, 204, res.body);
    await refresh();
    assert.equal(gitOf(['for-each-ref', 'refs/tags/doomed']), '');
    const again = await t.api('DELETE', `/projects/${P}/repository/tags/doomed`, alice.token);
    assert.deepEqual([again.statusCode, again.json], [404, { message: '404 Tag Not Found' }]);
    assert.equal((await t.api('DELETE', `/projects/${P}/repository/tags/v1.0`, stranger.token)).statusCode, 404);
  });
});
