// Personal snippets (GitLab's lib/api/snippets.rb; docs/gitlab-compatibility.md#personal-snippets): the whole
// entity, every endpoint for every kind of caller and visibility, the three lists, and every list agreeing with
// single reads. Expectations come from the small oracle below, written from GitLab's PersonalSnippetPolicy and
// SnippetsFinder, independent of src/domain/policy.ts.
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { awayFromMinuteEnd, createTestApp, ROOT_TOKEN, type TestApp, turns } from '../helper.ts';

type Level = 'private' | 'internal' | 'public';
const LEVELS: Level[] = ['private', 'internal', 'public'];
const msg = (message: string) => ({ message });
const SNIPPET_NOT_FOUND = msg('404 Snippet Not Found');
const UNAUTHORIZED = msg('401 Unauthorized');
const FORBIDDEN = msg('403 Forbidden');

interface Actor {
  name: string;
  token: string | null;
  id: number | null;
  admin?: boolean;
  external?: boolean;
}

/** GitLab's PersonalSnippetPolicy read rule, written out. */
const mayRead = (a: Actor, level: Level, authorId: number) =>
  !!a.admin || a.id === authorId || level === 'public' || (level === 'internal' && a.token !== null && !a.external);

describe('personal snippets', () => {
  let t: TestApp;
  let base: string;
  const actors: Record<string, Actor> = {};
  /** A snippet of alice's at each level. */
  const owned: Record<Level, { id: number; title: string }> = {} as never;
  let alice: { id: number; username: string; token: string };

  before(async () => {
    t = await createTestApp();
    base = t.config.externalUrl ?? 'http://localhost:80';
    alice = await t.user('alice');
    const bob = await t.user('bob');
    const ext = await t.user('ext', { external: true });
    const admin = await t.user('boss', { admin: true });
    actors.anonymous = { name: 'anonymous', token: null, id: null };
    actors.author = { name: 'author', token: alice.token, id: alice.id };
    actors.other = { name: 'other user', token: bob.token, id: bob.id };
    actors.external = { name: 'external user', token: ext.token, id: ext.id, external: true };
    actors.admin = { name: 'admin', token: admin.token, id: admin.id, admin: true };
    for (const level of LEVELS) {
      const title = `alice ${level}`;
      const created = await t.ok(
        'POST',
        '/snippets',
        alice.token,
        { title, visibility: level, files: [{ file_path: 'a.txt', content: `${level}\n` }] },
        201,
      );
      owned[level] = { id: created.id, title };
    }
  });
  after(() => t.close());

  it("creates one with GitLab's whole entity, and reads it back the same", async () => {
    const created = await t.ok(
      'POST',
      '/snippets',
      alice.token,
      {
        title: 'entity',
        description: 'd',
        visibility: 'public',
        files: [
          { file_path: 'z.rb', content: 'puts 1' },
          { file_path: 'dir/a.md', content: '# a' },
        ],
      },
      201,
    );
    const origin = String(created.web_url).replace(/\/-\/snippets\/\d+$/, '');
    const web = `${origin}/-/snippets/${created.id}`;
    const expected = {
      id: created.id,
      title: 'entity',
      description: 'd',
      visibility: 'public',
      author: created.author,
      created_at: created.created_at,
      updated_at: created.updated_at,
      project_id: null,
      web_url: web,
      raw_url: `${web}/raw`,
      ssh_url_to_repo: `git@${new URL(origin).hostname}:snippets/${created.id}.git`,
      http_url_to_repo: `${origin}/snippets/${created.id}.git`,
      file_name: 'dir/a.md',
      files: [
        { path: 'dir/a.md', raw_url: `${web}/raw/main/dir/a.md` },
        { path: 'z.rb', raw_url: `${web}/raw/main/z.rb` },
      ],
      imported: false,
      imported_from: 'none',
    };
    assert.deepEqual(created, expected);
    assert.equal(created.author.username, 'alice');
    assert.deepEqual(Object.keys(created), Object.keys(expected));
    assert.deepEqual(await t.ok('GET', `/snippets/${created.id}`, null, undefined, 200), expected);
    const raw = await t.expect('GET', `/snippets/${created.id}/raw`, null, undefined, 200);
    assert.equal(raw.body, '# a');
    const file = await t.expect('GET', `/snippets/${created.id}/files/main/z.rb/raw`, null, undefined, 200);
    assert.equal(file.body, 'puts 1');
    await t.fails(
      'GET',
      `/snippets/${created.id}/files/nope/z.rb/raw`,
      null,
      undefined,
      404,
      msg('404 Reference Not Found'),
    );
    await t.fails(
      'GET',
      `/snippets/${created.id}/files/main/y.rb/raw`,
      null,
      undefined,
      404,
      msg('404 File Not Found'),
    );
    assert.ok(base);
  });

  it('reads by id as the policy says, for every caller and level', async () => {
    for (const a of Object.values(actors)) {
      for (const level of LEVELS) {
        const { id, title } = owned[level];
        const readable = mayRead(a, level, alice.id);
        for (const path of [`/snippets/${id}`, `/snippets/${id}/raw`, `/snippets/${id}/files/main/a.txt/raw`]) {
          const res = await t.api('GET', path, a.token);
          const where = `${a.name} GET ${path} (${level})`;
          if (!readable) {
            assert.deepEqual([res.statusCode, res.json], [404, SNIPPET_NOT_FOUND], where);
            continue;
          }
          assert.equal(res.statusCode, 200, where);
          if (path.endsWith('/raw')) assert.equal(res.body, `${level}\n`, where);
          else assert.equal(res.json.title, title, where);
        }
      }
    }
  });

  it('lets only the author update and delete; anyone else, admins included, gets 404', async () => {
    for (const a of Object.values(actors)) {
      for (const level of LEVELS) {
        const { id } = await t.ok(
          'POST',
          '/snippets',
          alice.token,
          { title: 'target', visibility: level, files: [{ file_path: 'a.txt', content: 'x' }] },
          201,
        );
        const put = await t.api('PUT', `/snippets/${id}`, a.token, { title: `by ${a.name}` });
        const del = await t.api('DELETE', `/snippets/${id}`, a.token);
        const where = `${a.name} on a ${level} snippet`;
        if (a.token === null) {
          assert.deepEqual([put.statusCode, put.json], [401, UNAUTHORIZED], where);
          assert.deepEqual([del.statusCode, del.json], [401, UNAUTHORIZED], where);
        } else if (a.id === alice.id) {
          assert.deepEqual([put.statusCode, put.json.title], [200, `by ${a.name}`], where);
          assert.equal(del.statusCode, 204, where);
          await t.fails('GET', `/snippets/${id}`, ROOT_TOKEN, undefined, 404, SNIPPET_NOT_FOUND);
          continue;
        } else {
          assert.deepEqual([put.statusCode, put.json], [404, SNIPPET_NOT_FOUND], where);
          assert.deepEqual([del.statusCode, del.json], [404, SNIPPET_NOT_FOUND], where);
        }
        assert.equal((await t.ok('GET', `/snippets/${id}`, ROOT_TOKEN, undefined, 200)).title, 'target', where);
      }
    }
  });

  it('answers reads sent together with the delete as before it or after it: 200 or 404, never a 500', async () => {
    // A read finds the snippet, then its repository and blobs in later statements; the delete may commit in
    // between. Reads start a few turns of the event loop apart, so that some land in that gap.
    for (let round = 0; round < 12; round++) {
      const files = [
        { file_path: 'a.txt', content: `a${round}\n` },
        { file_path: 'b.txt', content: 'b\n' },
      ];
      const s = await t.ok(
        'POST',
        '/snippets',
        alice.token,
        { title: `gone ${round}`, visibility: 'public', files },
        201,
      );
      // A second version, so that a read at the first one walks the history.
      await t.must('PUT', `/snippets/${s.id}`, alice.token, {
        files: [{ action: 'update', file_path: 'a.txt', content: 'a\n' }],
      });
      const gitDir = (await t.gitDir('snippet', s.id))!;
      const first = execFileSync('git', ['--git-dir', gitDir, 'rev-parse', 'main~1']).toString().trim();
      const web = new URL(s.web_url).pathname;
      const urls = [
        `/api/v4/snippets/${s.id}/files/${first}/a.txt/raw`,
        `/api/v4/snippets/${s.id}/raw`,
        `/api/v4/snippets/${s.id}/files/main/a.txt/raw`,
        `${web}/raw/main/b.txt`,
      ];
      const reads = urls.flatMap((url) =>
        [0, 1, 2, 4, 8].map((n) => turns(n + (round % 3)).then(() => t.request({ method: 'GET', url, token: null }))),
      );
      const [deleted, ...answers] = await Promise.all([t.api('DELETE', `/snippets/${s.id}`, alice.token), ...reads]);
      assert.equal(deleted.statusCode, 204);
      // Each 200 is the whole file, as each URL names it.
      const whole = [`a${round}\n`, 'a\n', 'a\n', 'b\n'];
      answers.forEach((a, i) => {
        assert.ok([200, 302, 404].includes(a.statusCode), `${a.statusCode} ${a.body}`);
        if (a.statusCode === 200) assert.equal(a.body, whole[Math.floor(i / 5)], urls[Math.floor(i / 5)]);
      });
    }
  });

  it('answers raw reads of a large file sent together with the delete: 200, 404 or cut off, never a 500', async () => {
    // A large blob's row is read, then its parts (object-parts.ts): the delete may commit in between.
    const content = crypto.randomBytes(1536 * 1024).toString('base64');
    for (let round = 0; round < 8; round++) {
      const files = [{ file_path: 'large.txt', content }];
      const s = await t.ok(
        'POST',
        '/snippets',
        alice.token,
        { title: `large ${round}`, visibility: 'public', files },
        201,
      );
      const urls = [
        `/api/v4/snippets/${s.id}/raw`,
        `/api/v4/snippets/${s.id}/files/main/large.txt/raw`,
        `${new URL(s.web_url).pathname}/raw/main/large.txt`,
      ];
      // A read whose parts go while it sends them is cut off, as a client sees a connection reset: its status
      // and length were sent already (status 0 here).
      const reads = urls.flatMap((url) =>
        [0, 1, 2, 3, 4, 6, 8, 12].map((n) =>
          turns(n + round)
            .then(() => t.request({ method: 'GET', url, token: null }))
            .catch((error: Error) => ({ statusCode: 0, body: error.message }))
            .then((answer) => ({ ...answer, url })),
        ),
      );
      const [deleted, ...answers] = await Promise.all([t.api('DELETE', `/snippets/${s.id}`, alice.token), ...reads]);
      assert.equal(deleted.statusCode, 204);
      for (const a of answers) {
        // 302: the page of a snippet gone sends an anonymous visitor to sign in, as GitLab does.
        assert.ok([0, 200, 302, 404].includes(a.statusCode), `${a.url}: ${a.statusCode} ${a.body.slice(0, 200)}`);
        if (a.statusCode === 200) assert.equal(a.body, content);
      }
    }
  });

  it('updates files with actions and the legacy pair, as one commit each', async () => {
    const { id } = await t.ok(
      'POST',
      '/snippets',
      alice.token,
      { title: 'legacy', content: 'one', file_name: 'one.txt' },
      201,
    );
    const moved = await t.ok('PUT', `/snippets/${id}`, alice.token, { content: 'two', file_name: 'two.txt' }, 200);
    assert.deepEqual(
      moved.files.map((f: { path: string }) => f.path),
      ['two.txt'],
    );
    assert.equal(moved.visibility, 'private', 'the instance default visibility (D1)');
    const updated = await t.ok(
      'PUT',
      `/snippets/${id}`,
      alice.token,
      {
        files: [
          { action: 'create', file_path: 'b.txt', content: 'b' },
          { action: 'update', file_path: 'two.txt', content: 'three' },
        ],
      },
      200,
    );
    assert.deepEqual(
      updated.files.map((f: { path: string }) => f.path),
      ['b.txt', 'two.txt'],
    );
    assert.equal(
      (await t.expect('GET', `/snippets/${id}/files/main/two.txt/raw`, null, undefined, 404)).statusCode,
      404,
    );
    assert.equal(
      (await t.expect('GET', `/snippets/${id}/files/main/two.txt/raw`, alice.token, undefined, 200)).body,
      'three',
    );
    await t.fails('PUT', `/snippets/${id}`, alice.token, { content: 'x' }, 400, {
      message: { error: 'To update Snippets with multiple files, you must use the `files` parameter' },
    });
    await t.fails('PUT', `/snippets/${id}`, alice.token, { files: [{ action: 'move', file_path: 'c.txt' }] }, 422, {
      message: { error: 'Snippet actions have invalid data' },
    });
  });

  it("refuses bad input with GitLab's messages", async () => {
    const cases: [object, string][] = [
      [{ title: '', content: 'x', file_name: 'a' }, 'title is empty'],
      [
        { title: 't', files: [{ file_path: 'a', content: 'x' }], content: 'x' },
        'files, content are mutually exclusive',
      ],
      [{ title: 't' }, 'files, content are missing, exactly one parameter must be provided'],
      [{ title: 't', content: 'x' }, 'file_name is missing'],
      [{ title: 't', files: [{ file_path: 'a', content: '' }] }, 'files[0][content] is empty'],
      [
        { title: 't', files: [{ file_path: '../../etc/passwd', content: 'x' }] },
        'files[0][file_path] should be a valid file path',
      ],
      [{ title: 't', visibility: 'secret', content: 'x', file_name: 'a' }, 'visibility does not have a valid value'],
    ];
    for (const [body, error] of cases) await t.fails('POST', '/snippets', alice.token, body, 400, { error });
    await t.fails('POST', '/snippets', null, { title: 't', content: 'x', file_name: 'a' }, 401, UNAUTHORIZED);
    await t.fails(
      'POST',
      '/snippets',
      actors.external.token,
      { title: 't', content: 'x', file_name: 'a' },
      403,
      FORBIDDEN,
    );
    await t.fails('GET', '/snippets/abc', null, undefined, 400, { error: 'id is invalid' });
    await t.fails('GET', '/snippets?created_after=yesterday', alice.token, undefined, 400, {
      error: 'created_after is invalid',
    });
  });

  it("lists: the caller's own (personal and project), public personal ones, and all they may see", async () => {
    const carol = await t.user('carol');
    const project = await t.ok('POST', '/projects', carol.token, { name: 'carols', visibility: 'public' }, 201);
    const inProject = await t.ok(
      'POST',
      `/projects/${project.id}/snippets`,
      carol.token,
      { title: 'in project', visibility: 'public', files: [{ file_path: 'p.txt', content: 'p' }] },
      201,
    );
    const mine: number[] = [inProject.id];
    for (const level of LEVELS) {
      const s = await t.ok(
        'POST',
        '/snippets',
        carol.token,
        { title: level, visibility: level, content: 'c', file_name: 'c' },
        201,
      );
      mine.unshift(s.id);
    }
    const own = await t.expect('GET', '/snippets', carol.token, undefined, 200);
    assert.deepEqual(
      own.json.map((s: { id: number }) => s.id),
      mine,
    );
    assert.equal(own.headers['x-total'], '4');
    assert.equal(own.json.at(-1).project_id, project.id);
    assert.equal(
      own.json.at(-1).web_url,
      `${String(own.json[0].web_url).replace(/\/-\/snippets\/\d+$/, '')}/${project.path_with_namespace}/-/snippets/${inProject.id}`,
    );

    const pub = await t.ok('GET', '/snippets/public?per_page=100', carol.token, undefined, 200);
    assert.ok(pub.length > 0);
    assert.ok(
      pub.every((s: { visibility: string; project_id: null }) => s.visibility === 'public' && s.project_id === null),
    );
    assert.ok(!pub.some((s: { id: number }) => s.id === inProject.id), 'no project snippets');
    assert.deepEqual(
      pub.map((s: { id: number }) => s.id),
      [...pub.map((s: { id: number }) => s.id)].sort((a, b) => b - a),
    );
    await t.fails('GET', '/snippets/public', null, undefined, 401, UNAUTHORIZED);
    await t.fails('GET', '/snippets', null, undefined, 401, UNAUTHORIZED);
    await t.fails('GET', '/snippets/all', null, undefined, 401, UNAUTHORIZED);

    const paged = await t.expect('GET', '/snippets?per_page=2&page=2', carol.token, undefined, 200);
    assert.deepEqual(
      paged.json.map((s: { id: number }) => s.id),
      mine.slice(2, 4),
    );
    assert.equal(paged.headers['x-page'], '2');
    assert.equal(paged.headers['x-prev-page'], '1');
  });

  it('filters by creation time, both bounds included', async () => {
    const dave = await t.user('dave');
    const s = await t.ok('POST', '/snippets', dave.token, { title: 'when', content: 'c', file_name: 'c' }, 201);
    const at = s.created_at as string;
    const ids = async (query: string) =>
      (await t.ok('GET', `/snippets?${query}`, dave.token, undefined, 200)).map((x: { id: number }) => x.id);
    assert.deepEqual(await ids(`created_after=${encodeURIComponent(at)}&created_before=${encodeURIComponent(at)}`), [
      s.id,
    ]);
    assert.deepEqual(await ids('created_after=2999-01-01'), []);
    assert.deepEqual(await ids('created_before=2000-01-01T00:00:00Z'), []);
    // A time without an offset is UTC, as GitLab (Ruby's DateTime) reads it, whatever the server's time zone:
    // read in New York's, an hour before the snippet found nothing.
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      const hourBefore = new Date(Date.parse(at) - 3600_000).toISOString().slice(0, 19);
      assert.deepEqual(await ids(`created_after=${hourBefore}`), [s.id]);
      assert.deepEqual(await ids(`created_before=${hourBefore.replace('T', '%20')}`), []);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    // An empty value of a parameter that is not a string is none given, as Grape reads it.
    assert.deepEqual(await ids('created_after=&page=&per_page='), [s.id]);
  });

  it('answers every list as the single reads do: a snippet is listed exactly when GET /snippets/:id answers it', async () => {
    // Project snippets too: a private project with a member, a public project with its snippets private, and
    // one with its snippets disabled, which nobody may read, administrators included (GitLab's SnippetsFinder
    // keeps only projects with the feature available to the user).
    const owner = await t.user('owner2');
    const member = await t.user('member2');
    const hidden = await t.ok('POST', '/projects', owner.token, { name: 'hidden', visibility: 'private' }, 201);
    await t.must('POST', `/projects/${hidden.id}/members`, ROOT_TOKEN, { user_id: member.id, access_level: 10 });
    const open = await t.ok('POST', '/projects', owner.token, { name: 'open', visibility: 'public' }, 201);
    const off = await t.ok('POST', '/projects', owner.token, { name: 'off', visibility: 'public' }, 201);
    const created: number[] = [];
    for (const p of [hidden, open, off])
      for (const level of LEVELS) {
        const body = { title: `${p.name} ${level}`, visibility: level, content: 'x', file_name: 'x' };
        created.push((await t.ok('POST', `/projects/${p.id}/snippets`, owner.token, body, 201)).id);
      }
    await t.must('PUT', `/projects/${open.id}`, ROOT_TOKEN, { snippets_access_level: 'private' });
    await t.must('PUT', `/projects/${off.id}`, ROOT_TOKEN, { snippets_access_level: 'disabled' });
    // Files sent out of git's order: a list presents them in that order, as the single read does.
    const files = ['b.txt', 'a/c.txt', 'a.txt', 'a-b.txt'].map((file_path) => ({ file_path, content: file_path }));
    await t.ok(
      'POST',
      `/projects/${hidden.id}/snippets`,
      owner.token,
      { title: 'files', visibility: 'public', files },
      201,
    );
    await t.ok('POST', '/snippets', owner.token, { title: 'files', visibility: 'public', files }, 201);
    const everyone = { ...actors, member: { name: 'member', token: member.token, id: member.id } };
    const rootListed: number[] = (await t.ok('GET', '/snippets/all?per_page=100', ROOT_TOKEN, undefined, 200)).map(
      (s: { id: number }) => s.id,
    );
    const allIds = [...new Set([...rootListed, ...created])];
    for (const a of [...Object.values(everyone), { name: 'root', token: ROOT_TOKEN }]) {
      if (a.token === null) continue;
      const listed = new Map<number, { files: unknown }>();
      for (let page = 1; ; page++) {
        const res = await t.expect('GET', `/snippets/all?per_page=50&page=${page}`, a.token, undefined, 200);
        for (const s of res.json) listed.set(s.id, s);
        if (!res.headers['x-next-page']) break;
      }
      for (const id of allIds) {
        const single = await t.api('GET', `/snippets/${id}`, a.token);
        assert.equal(
          listed.has(id),
          single.statusCode === 200,
          `${a.name}: snippet ${id} listed ${listed.has(id)}, read ${single.statusCode}`,
        );
        if (single.statusCode === 200) assert.deepEqual(listed.get(id)!.files, single.json.files, `${a.name}: ${id}`);
      }
    }
  });

  it('answers user_agent_detail to admins only', async () => {
    const { id } = owned.public;
    await t.fails('GET', `/snippets/${id}/user_agent_detail`, null, undefined, 401, UNAUTHORIZED);
    await t.fails('GET', `/snippets/${id}/user_agent_detail`, alice.token, undefined, 403, FORBIDDEN);
    const detail = await t.ok('GET', `/snippets/${id}/user_agent_detail`, ROOT_TOKEN, undefined, 200);
    assert.deepEqual(Object.keys(detail), ['user_agent', 'ip_address', 'akismet_submitted']);
    await t.fails('GET', '/snippets/999999/user_agent_detail', ROOT_TOKEN, undefined, 404, msg('404 Not found'));
  });

  it('applies token scopes, Sudo and blocked accounts as every endpoint does', async () => {
    const reader = await t.user('reader', { scopes: ['read_api'] });
    await t.ok('GET', '/snippets', reader.token, undefined, 200);
    await t.fails('POST', '/snippets', reader.token, { title: 't', content: 'x', file_name: 'a' }, 403, {
      error: 'insufficient_scope',
      error_description: 'The request requires higher privileges than provided by the access token.',
      scope: 'api read_api',
    });
    // An administrator changes someone's snippet as them (GitLab's way, since PUT looks at one's own only).
    const { id } = owned.internal;
    const asAlice = await t.ok('PUT', `/snippets/${id}?sudo=${alice.id}`, ROOT_TOKEN, { description: 'by sudo' }, 200);
    assert.equal(asAlice.description, 'by sudo');
    const blocked = await t.user('blocked');
    await t.must('POST', `/users/${blocked.id}/block`, ROOT_TOKEN);
    await t.fails('GET', `/snippets/${owned.public.id}`, blocked.token, undefined, 403, {
      message: '403 Forbidden - Your account has been blocked.',
    });
  });

  it('is bound by the instance settings as project snippets are: default and restricted levels, limits, raw limits', async () => {
    const erin = await t.user('erin');
    const set = (settings: object) => t.must('PUT', '/application/settings', ROOT_TOKEN, settings);
    try {
      await set({ default_snippet_visibility: 'public', restricted_visibility_levels: ['internal'] });
      const byDefault = await t.ok('POST', '/snippets', erin.token, { title: 'd', content: 'x', file_name: 'a' }, 201);
      assert.equal(byDefault.visibility, 'public');
      await t.fails(
        'POST',
        '/snippets',
        erin.token,
        { title: 'r', visibility: 'internal', content: 'x', file_name: 'a' },
        403,
        { message: { error: 'Visibility level internal has been restricted by your GitLab administrator' } },
      );
      await set({ snippet_size_limit: 2048, max_snippet_files: 2 });
      await t.fails('POST', '/snippets', erin.token, { title: 'big', content: 'x'.repeat(3000), file_name: 'a' }, 400, {
        message: { error: 'Content is too long (2.93 KB). The maximum size is 2 KB.' },
      });
      const three = [1, 2, 3].map((n) => ({ file_path: `${n}.txt`, content: 'x' }));
      await t.fails('POST', '/snippets', erin.token, { title: 'many', files: three }, 400, {
        message: { error: "Repository Error creating the snippet - Snippet can't have more than 2 files" },
      });
      await awayFromMinuteEnd(); // the limited requests below fall into one window of a minute
      await set({ raw_blob_request_limit: 2 });
      const raw = `/snippets/${byDefault.id}/raw`;
      await t.ok('GET', raw, erin.token, undefined, 200);
      await t.ok('GET', `/snippets/${byDefault.id}/files/main/a/raw`, erin.token, undefined, 200);
      await t.fails('GET', raw, erin.token, undefined, 429, {
        message: { error: 'This endpoint has been requested too many times. Try again later.' },
      });
      // Anonymous reads count per personal snippet, not for all of them together.
      await set({ raw_blob_request_limit: 0, raw_blob_request_limit_unauthenticated: 2 });
      const other = await t.ok(
        'POST',
        '/snippets',
        erin.token,
        { title: 'o', visibility: 'public', content: 'o', file_name: 'o' },
        201,
      );
      await t.ok('GET', raw, null, undefined, 200);
      await t.ok('GET', raw, null, undefined, 200);
      await t.expect('GET', raw, null, undefined, 429);
      await t.ok('GET', `/snippets/${other.id}/raw`, null, undefined, 200);
    } finally {
      await set({
        default_snippet_visibility: 'private',
        restricted_visibility_levels: [],
        snippet_size_limit: 52428800,
        max_snippet_files: 10,
        raw_blob_request_limit: 300,
        raw_blob_request_limit_unauthenticated: 800,
      });
    }
  });
});
