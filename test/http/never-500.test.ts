// Issue 17, "every input gets GitLab's answer, never a 500": one named regression test per class of input
// that once answered 500 (on PostgreSQL, SQLite or both). Each asserts the whole answer a client sees.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { PATH_FORMAT_MESSAGE } from '../../src/domain/paths.ts';
import {
  assertHiddenPage,
  createTestApp,
  multipart,
  MULTIPART_BOUNDARY,
  ROOT_TOKEN,
  type Response,
  type TestApp,
} from '../helper.ts';

const BEYOND_INTEGER = '2147483648'; // PostgreSQL's integer ends at 2147483647
const THIRTY_DIGITS = '123456789012345678901234567890'; // past any JavaScript integer, too
const BELOW_INTEGER = '-2147483649';
const OUT_OF_RANGE = [BEYOND_INTEGER, THIRTY_DIGITS, BELOW_INTEGER];

const rootBasic = `Basic ${Buffer.from(`root:${ROOT_TOKEN}`).toString('base64')}`;
/** GitLab's HandleMalformedStrings answer, written before any route runs. */
function assertMalformed(res: Response, what: string) {
  assert.deepEqual(
    [res.statusCode, res.headers['content-type'], res.body],
    [400, 'text/plain', 'Bad Request'],
    `${what}: ${res.body.slice(0, 200)}`,
  );
}

const GIT_NOT_FOUND = "The project you were looking for could not be found or you don't have permission to view it.\n";

describe('never a 500', () => {
  let t: TestApp;
  let groupId: number;
  let projectId: number;
  let snippetId: number;
  before(async () => {
    t = await createTestApp();
    groupId = (await t.must('POST', '/groups', ROOT_TOKEN, { name: 'g', path: 'g', visibility: 'public' })).id;
    projectId = (
      await t.must('POST', '/projects', ROOT_TOKEN, {
        path: 'p',
        namespace_id: groupId,
        visibility: 'public',
        initialize_with_readme: true,
      })
    ).id;
    snippetId = (
      await t.must('POST', `/projects/${projectId}/snippets`, ROOT_TOKEN, {
        title: 't',
        visibility: 'public',
        files: [{ file_path: 'a.rb', content: 'puts 1' }],
      })
    ).id;
  });
  after(() => t.close());

  it('an id beyond the id columns’ range is an id that does not exist, on every route and both databases', async () => {
    for (const id of OUT_OF_RANGE) {
      const p = `/projects/${projectId}`;
      await t.fails('GET', `/projects/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 Project Not Found' });
      await t.fails('GET', `/groups/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 Group Not Found' });
      await t.fails('GET', `/users/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 User Not Found' });
      await t.fails('PUT', `/users/${id}`, ROOT_TOKEN, { name: 'x' }, 404, { message: '404 User Not Found' });
      await t.fails('GET', `${p}/snippets/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 Not found' });
      await t.fails('GET', `${p}/snippets/${id}/raw`, ROOT_TOKEN, undefined, 404, { message: '404 Snippet Not Found' });
      await t.fails('GET', `${p}/snippets/${id}/files/main/a.rb/raw`, ROOT_TOKEN, undefined, 404, {
        message: '404 Snippet Not Found',
      });
      await t.fails('GET', `${p}/members/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 Member Not Found' });
      await t.fails('GET', `/groups/${groupId}/members/${id}`, ROOT_TOKEN, undefined, 404, {
        message: '404 Member Not Found',
      });
      await t.fails('POST', `${p}/members`, ROOT_TOKEN, { user_id: id, access_level: 30 }, 404, {
        message: '404 User Not Found',
      });
      await t.fails('GET', `/personal_access_tokens/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 Not found' });
      await t.fails('DELETE', `/personal_access_tokens/${id}`, ROOT_TOKEN, undefined, 404, {
        message: '404 Not found',
      });
      await t.fails('POST', `/users/${id}/personal_access_tokens`, ROOT_TOKEN, { name: 'x', scopes: ['api'] }, 404, {
        message: '404 User Not Found',
      });
      await t.fails('POST', `/projects/user/${id}`, ROOT_TOKEN, { path: 'z' }, 404, { message: '404 User Not Found' });
      assert.deepEqual(await t.ok('GET', `/personal_access_tokens?user_id=${id}`, ROOT_TOKEN, undefined, 200), []);
      await t.fails('POST', '/projects', ROOT_TOKEN, { path: 'q', namespace_id: id }, 400, {
        message: { namespace: ['is not valid'] },
      });
      await t.fails('POST', '/groups', ROOT_TOKEN, { name: 'x', path: 'x', parent_id: id }, 404, {
        message: '404 Group Not Found',
      });
      await t.fails('PUT', '/application/settings', ROOT_TOKEN, { file_template_project_id: id }, 400, {
        message: { file_template_project_id: ['is invalid'] },
      });
      await t.fails('PUT', `/groups/${groupId}`, ROOT_TOKEN, { file_template_project_id: id }, 400, {
        message: { file_template_project_id: ['is invalid'] },
      });
      const sudo = await t.api('GET', '/user', ROOT_TOKEN, undefined, { sudo: id });
      assert.deepEqual(
        [sudo.statusCode, sudo.json],
        [404, { message: `404 User with ID or username '${id}' Not Found` }],
      );

      // The web pages and git over HTTP look snippets up by the same rule.
      for (const page of [`/g/p/-/snippets/${id}`, `/g/p/-/snippets/${id}/raw`, `/g/p/-/snippets/${id}.js`]) {
        const res = await t.request({ method: 'GET', url: page, token: null });
        assertHiddenPage(res, page, false);
      }
      const git = await t.request({
        method: 'GET',
        url: `/g/p/snippets/${id}.git/info/refs?service=git-upload-pack`,
        token: null,
        headers: { authorization: rootBasic },
      });
      assert.deepEqual([git.statusCode, git.body], [404, GIT_NOT_FOUND]);
    }
    // A page of a list "before" an id past every id is the newest page.
    const older = await t.request({ method: 'GET', url: `/explore/snippets?before=${BEYOND_INTEGER}0`, token: null });
    assert.equal(older.statusCode, 200);
    assert.match(older.body, /href="[^"]*\/g\/p\/-\/snippets\/\d+">t</);
    // Not a whole number at all is still Grape's 400.
    await t.fails('GET', `/projects/${projectId}/snippets/1.5`, ROOT_TOKEN, undefined, 400, {
      error: 'snippet_id is invalid',
    });
  });

  it('a NUL character in the path, a parameter or the credentials is 400 Bad Request; a file content may hold one', async () => {
    const snippets = async () =>
      (await t.ok('GET', `/projects/${projectId}/snippets`, ROOT_TOKEN, undefined, 200)).length;
    const before = await snippets();
    const group = await t.ok('GET', `/groups/${groupId}`, ROOT_TOKEN, undefined, 200);
    for (const url of ['/users?username=%00', '/groups/a%00', '/projects/g%2Fp%00', '/projects?search=a%00b']) {
      assertMalformed(await t.api('GET', url, ROOT_TOKEN), url);
    }
    for (const url of ['/g/p%00.git/info/refs?service=git-upload-pack', '/g%00', '/g/p%00/-/snippets/1']) {
      assertMalformed(await t.request({ method: 'GET', url, token: null }), url);
    }
    const file = [{ file_path: 'a.txt', content: 'x' }];
    for (const [method, url, payload] of [
      ['POST', `/projects/${projectId}/snippets`, { title: 'a\u0000b', files: file }],
      ['POST', `/projects/${projectId}/snippets`, { title: 't', description: 'd\u0000', files: file }],
      ['PUT', `/projects/${projectId}/snippets/${snippetId}`, { title: '\u0000' }],
      ['POST', '/groups', { name: 'n\u0000', path: 'nul' }],
      ['PUT', `/groups/${groupId}`, { description: '\u0000' }],
      ['PUT', '/users/1', { name: ['\u0000'] }],
    ] as const) {
      assertMalformed(await t.api(method, url, ROOT_TOKEN, payload), `${method} ${url} ${JSON.stringify(payload)}`);
    }
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    assertMalformed(await t.api('PUT', `/groups/${groupId}`, ROOT_TOKEN, 'description=%00', form), 'form');
    const parts = { 'content-type': `multipart/form-data; boundary=${MULTIPART_BOUNDARY}` };
    const body = multipart([['description', 'a\u0000']]);
    assertMalformed(await t.api('PUT', `/groups/${groupId}`, ROOT_TOKEN, body, parts), 'multipart');
    assertMalformed(await t.api('GET', '/user', ROOT_TOKEN, undefined, { sudo: 'a\u0000' }), 'Sudo');
    // Paths keep their own rules, which name the parameter (docs/gitlab-compatibility.md#d17).
    const p = `/projects/${projectId}`;
    const nulFile = [{ file_path: 'a\u0000.txt', content: 'x' }];
    await t.fails('POST', `${p}/snippets`, ROOT_TOKEN, { title: 't', files: nulFile }, 400, {
      error: 'files[0][file_path] should be a valid file path',
    });
    await t.fails('GET', `${p}/snippets/${snippetId}/files/main/a%00.rb/raw`, ROOT_TOKEN, undefined, 400, {
      error: 'file_path should be a valid file path',
    });
    await t.fails('GET', `${p}/repository/tree?path=a%00`, ROOT_TOKEN, undefined, 400, {
      error: 'path should be a valid file path',
    });
    await t.fails('POST', '/groups', ROOT_TOKEN, { name: 'n', path: 'a\u0000' }, 400, {
      message: { path: [PATH_FORMAT_MESSAGE] },
    });
    await t.fails('POST', '/projects', ROOT_TOKEN, { path: 'a\u0000' }, 400, {
      message: { path: [PATH_FORMAT_MESSAGE] },
    });
    assert.equal(await snippets(), before);
    assert.deepEqual(await t.ok('GET', `/groups/${groupId}`, ROOT_TOKEN, undefined, 200), group);

    // File contents are git blobs: bytes, NUL included (docs/gitlab-compatibility.md#d17).
    const binary = await t.ok(
      'POST',
      `/projects/${projectId}/snippets`,
      ROOT_TOKEN,
      {
        title: 'binary',
        files: [{ file_path: 'b.bin', content: 'a\u0000b' }],
      },
      201,
    );
    const raw = await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/snippets/${binary.id}/raw` });
    assert.deepEqual(raw.rawPayload, Buffer.from('a\u0000b'));
    await t.ok(
      'POST',
      `/projects/${projectId}/repository/files/bin.dat`,
      ROOT_TOKEN,
      {
        branch: 'main',
        content: '\u0000\u0001',
        commit_message: 'binary',
      },
      201,
    );
    const file2 = await t.request({
      method: 'GET',
      url: `/api/v4/projects/${projectId}/repository/files/bin.dat/raw?ref=main`,
    });
    assert.deepEqual(file2.rawPayload, Buffer.from([0, 1]));
  });

  it('half of a UTF-16 pair in any parameter, a path or content too, is 400 Bad Request and writes nothing', async () => {
    const snippets = async () => (await t.ok('GET', '/snippets', ROOT_TOKEN, undefined, 200)).length;
    const before = await snippets();
    const lone = '\ud800';
    const file = (over: object) => [{ file_path: 'a.txt', content: 'x', ...over }];
    for (const [method, url, payload] of [
      ['POST', '/snippets', { title: 't', files: file({ file_path: `a${lone}` }) }],
      ['POST', '/snippets', { title: 't', file_name: `a${lone}`, content: 'x' }],
      ['POST', '/snippets', { title: 't', files: file({ content: `x${lone}` }) }],
      ['POST', '/snippets', { title: `t${lone}`, files: file({}) }],
      ['POST', `/projects/${projectId}/snippets`, { title: 't', files: file({ file_path: `${lone}.txt` }) }],
      [
        'PUT',
        `/projects/${projectId}/snippets/${snippetId}`,
        { files: [{ action: 'create', file_path: `b${lone}`, content: 'x' }] },
      ],
      ['PUT', `/groups/${groupId}`, { description: `\udc00${'a'.repeat(10)}` }],
    ] as const) {
      // JSON.stringify writes the half pair as the escape \ud800, as a client's JSON may.
      assertMalformed(await t.api(method, url, ROOT_TOKEN, payload), `${method} ${url} ${JSON.stringify(payload)}`);
    }
    assert.equal(await snippets(), before);
    // A whole pair is text like any other.
    const emoji = await t.ok(
      'POST',
      '/snippets',
      ROOT_TOKEN,
      { title: '😀', files: file({ file_path: '😀.txt' }) },
      201,
    );
    assert.deepEqual([emoji.title, emoji.file_name], ['😀', '😀.txt']);
  });

  it('nested parameters where a scalar is expected: a list keeps them in Link as Rails does, a page number refuses them', async () => {
    const res = await t.api('GET', '/templates/licenses?per_page=5&z[y]=2&a[][b]=1&a[][b]=0&s[]=b&s[]=a', null);
    assert.equal(res.statusCode, 200, res.body);
    const base = 'http://localhost:80/api/v4/templates/licenses';
    const query = (page: number) =>
      `${base}?a%5B%5D%5Bb%5D=1&a%5B%5D%5Bb%5D=0&page=${page}&per_page=5&s%5B%5D=b&s%5B%5D=a&z%5By%5D=2`;
    const last = Number(res.headers['x-total-pages']);
    assert.equal(
      res.headers.link,
      `<${query(2)}>; rel="next", <${query(1)}>; rel="first", <${query(last)}>; rel="last"`,
    );
    await t.fails('GET', '/templates/licenses?page[]=1', null, undefined, 400, { error: 'page is invalid' });
    await t.fails('GET', '/templates/licenses?per_page[x]=1', null, undefined, 400, { error: 'per_page is invalid' });
    await t.fails('GET', `/projects/${projectId}/snippets?page[a][b]=1`, ROOT_TOKEN, undefined, 400, {
      error: 'page is invalid',
    });
    assert.equal((await t.api('GET', `/projects?a[][b]=1`, null)).statusCode, 200);
  });

  it('an update with nothing to set answers the record unchanged', async () => {
    const group = await t.ok('GET', `/groups/${groupId}`, ROOT_TOKEN, undefined, 200);
    const user = await t.ok('GET', '/users/1', ROOT_TOKEN, undefined, 200);
    const project = await t.ok('GET', `/projects/${projectId}`, ROOT_TOKEN, undefined, 200);
    // A JSON null counts as not given unless the parameter takes null (docs/gitlab-compatibility.md#parameters).
    for (const payload of [{}, { visibility: null }, { name: null }, { unknown: 1 }]) {
      assert.deepEqual(
        await t.ok('PUT', `/groups/${groupId}`, ROOT_TOKEN, payload, 200),
        group,
        JSON.stringify(payload),
      );
      assert.deepEqual(await t.ok('PUT', `/projects/${projectId}`, ROOT_TOKEN, payload, 200), project);
    }
    for (const payload of [{}, { name: null }, { admin: null, email: null }]) {
      assert.deepEqual(await t.ok('PUT', '/users/1', ROOT_TOKEN, payload, 200), user, JSON.stringify(payload));
    }
    assert.deepEqual(await t.ok('GET', `/groups/${groupId}`, ROOT_TOKEN, undefined, 200), group);
    assert.deepEqual(await t.ok('GET', '/users/1', ROOT_TOKEN, undefined, 200), user);
  });

  it('an empty files array: create is GitLab\'s 400 "Content can\'t be blank" and writes nothing, update changes no file', async () => {
    const base = `/projects/${projectId}/snippets`;
    const before = await t.ok('GET', base, ROOT_TOKEN, undefined, 200);
    for (const payload of [
      { title: 't', files: [] },
      { title: 't', visibility: 'public', files: [] },
    ]) {
      await t.fails('POST', base, ROOT_TOKEN, payload, 400, { message: { error: "Content can't be blank" } });
    }
    // A model error among the others, in the model's order.
    await t.fails('POST', base, ROOT_TOKEN, { title: 'x'.repeat(256), files: [] }, 400, {
      message: { error: "Title is too long (maximum is 255 characters) and Content can't be blank" },
    });
    assert.deepEqual(await t.ok('GET', base, ROOT_TOKEN, undefined, 200), before);
    const snippet = await t.ok('GET', `${base}/${snippetId}`, ROOT_TOKEN, undefined, 200);
    const updated = await t.ok('PUT', `${base}/${snippetId}`, ROOT_TOKEN, { files: [] }, 200);
    assert.deepEqual(updated.files, snippet.files);
  });

  it('CONNECT is answered like any other method no route serves, and the connection closes', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    for (const target of ['/api/v4/projects', `/g/p.git/info/refs`, 'example.com:443']) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () =>
          socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`),
        );
        let data = '';
        socket.on('data', (c: Buffer) => (data += c.toString('utf8')));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      const [head, body] = answer.split('\r\n\r\n');
      assert.match(head, /^HTTP\/1\.1 404 Not Found\r\n/, target);
      assert.match(head, /\r\ncontent-type: application\/json\r\n/i, target);
      assert.equal(body, '{"error":"404 Not Found"}', target);
    }
    // The server goes on answering.
    assert.equal((await t.socket('GET', '/api/v4/projects')).statusCode, 200);
  });

  it('an empty route segment matches no route: 404 {"error":"404 Not Found"}', async () => {
    const p = `/projects/${projectId}/snippets`;
    for (const url of [`${p}/${snippetId}/files//a.rb/raw`, `${p}//raw`, `/projects//snippets`]) {
      await t.fails('GET', url, ROOT_TOKEN, undefined, 404, { error: '404 Not Found' });
    }
    assert.equal((await t.api('GET', `${p}/${snippetId}/files/main/a.rb/raw`, ROOT_TOKEN)).body, 'puts 1');
  });

  it('smart HTTP with another content type: git answers 415 and no ref moves, projects and snippets', async () => {
    const refs = async (repo: string) => {
      const res = await t.request({
        method: 'GET',
        url: `/${repo}/info/refs?service=git-upload-pack`,
        token: null,
        headers: { authorization: rootBasic },
      });
      assert.equal(res.statusCode, 200);
      return res.body;
    };
    for (const repo of ['g/p.git', `g/p/snippets/${snippetId}.git`]) {
      const before = await refs(repo);
      for (const service of ['git-upload-pack', 'git-receive-pack']) {
        const res = await t.request({
          method: 'POST',
          url: `/${repo}/${service}`,
          token: null,
          headers: { 'content-type': 'text/plain', authorization: rootBasic },
          payload: '0000',
        });
        assert.deepEqual(
          [res.statusCode, res.body],
          [
            415,
            `Expected POST with Content-Type 'application/x-${service}-request', but received 'text/plain' instead.\n`,
          ],
          `${repo} ${service}`,
        );
      }
      assert.equal(await refs(repo), before);
    }
  });

  it('git pathspec magic in a path is a literal path: not found, never a git error', async () => {
    const p = `/projects/${projectId}/repository`;
    await t.fails('GET', `${p}/tree?path=:(glob)x`, ROOT_TOKEN, undefined, 404, { message: '404 Tree Not Found' });
    await t.fails('GET', `${p}/files/%3A%28glob%29a%2Fb?ref=main`, ROOT_TOKEN, undefined, 404, {
      message: '404 File Not Found',
    });
    await t.fails('GET', `${p}/files/%3A%28glob%29a%2Fb/raw?ref=main`, ROOT_TOKEN, undefined, 404, {
      message: '404 File Not Found',
    });
    assert.deepEqual(await t.ok('GET', `${p}/commits?path=:(glob)*`, ROOT_TOKEN, undefined, 200), []);
    // A file whose name looks like magic is found by that name, and only by it.
    await t.ok(
      'POST',
      `${p}/files/%3A%28glob%29%2A.txt`,
      ROOT_TOKEN,
      { branch: 'main', content: 'm', commit_message: 'm' },
      201,
    );
    assert.equal((await t.api('GET', `${p}/files/%3A%28glob%29%2A.txt/raw?ref=main`, ROOT_TOKEN)).body, 'm');
    await t.fails('GET', `${p}/files/%3A%28glob%29README.md/raw?ref=main`, ROOT_TOKEN, undefined, 404, {
      message: '404 File Not Found',
    });
    const commits = await t.ok('GET', `${p}/commits?path=:(glob)*.txt`, ROOT_TOKEN, undefined, 200);
    assert.deepEqual(
      commits.map((c: { title: string }) => c.title),
      ['m'],
    );
  });
});
