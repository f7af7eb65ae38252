// `snippetd serve --ephemeral --seed FILE` as a test suite in another language runs it: a real process,
// its seed applied before the port opens with the same ids every time, the HTTP controls (reset, seed) for
// administrators only, git clone after a reset, and nothing left on disk after SIGTERM. The database is in
// memory whatever SNIPPETD_TEST_DB says, so this runs in the SQLite pass only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, exited, spawnServer, type Spawned, cliCommand } from '../../scripts/spawn-server.ts';
import { awayFromMinuteEnd, runGit } from '../helper.ts';
import { assertCalm, whileHostile } from '../stall.ts';
import YAML from 'yaml';

const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'the database is in memory: runs in the SQLite pass only';
const ROOT = 'ephemeral-root-token-0123456789';
const ALICE = 'alice-token-0123456789abcdef';

const SEED = `# users, groups, projects with members, repository files and snippets, settings
users:
  - username: alice
    name: Alice
    tokens:
      - token: ${ALICE}
  - username: bob
groups:
  - path: acme
    visibility: public
    members:
      - { user: bob, access_level: 30 }
  - path: acme/platform
    visibility: public
projects:
  - path: acme/templates
    visibility: public
    files:
      - path: LICENSE/seeded.txt
        content: "Seeded license\\n"
  - path: acme/tools
    visibility: public
    members:
      - { user: alice, access_level: 40 }
    files:
      - { path: README.md, content: "# Tools\\n" }
    snippets:
      - title: hello
        visibility: public
        author: alice
        files:
          - { path: hello.rb, content: "puts 'hi'\\n" }
  - path: alice/dots
settings:
  file_template_project: acme/templates
  default_snippet_visibility: internal
`;

let dir: string;
let seedFile: string;

const env = (extra: NodeJS.ProcessEnv = {}) => ({
  ...process.env,
  SNIPPETD_DATA_DIR: '',
  SNIPPETD_DATABASE_URL: '',
  SNIPPETD_LOG_LEVEL: 'warn',
  ...extra,
});

function startEphemeral(extra: NodeJS.ProcessEnv = {}): Promise<Spawned> {
  return spawnServer(env({ SNIPPETD_INITIAL_ROOT_TOKEN: ROOT, ...extra }), [
    CLI,
    'serve',
    '--ephemeral',
    '--seed',
    seedFile,
    '--port',
    '0',
  ]);
}

/** An ephemeral server with root's fixed token and no seed. */
const startWithoutSeed = () =>
  spawnServer(env({ SNIPPETD_INITIAL_ROOT_TOKEN: ROOT }), [CLI, 'serve', '--ephemeral', '--port', '0']);

async function call(base: string, method: string, url: string, token: string | null, body?: string, type?: string) {
  const headers: Record<string, string> = {};
  if (token) headers['private-token'] = token;
  if (body !== undefined) headers['content-type'] = type ?? 'application/json';
  const res = await fetch(`${base}${url}`, { method, headers, body });
  const text = await res.text();
  return {
    status: res.status,
    text,
    json: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
  };
}

function cli(args: string[], extra: NodeJS.ProcessEnv = {}) {
  return spawnSync(...cliCommand(...args), {
    env: env(extra),
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('serve --ephemeral', { skip }, () => {
  let server: Spawned;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-ephemeral-tests-'));
    seedFile = path.join(dir, 'seed.yaml');
    fs.writeFileSync(seedFile, SEED);
    server = await startEphemeral();
  });
  after(() => {
    server?.child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves what the seed file lists, with its fixed tokens and the ids in document order', async () => {
    const u = server.url;
    const me = await call(u, 'GET', '/api/v4/user', ALICE);
    assert.equal(me.status, 200);
    assert.deepEqual([me.json.id, me.json.username, me.json.name], [2, 'alice', 'Alice']);
    const projects = await call(u, 'GET', '/api/v4/projects?order_by=id&sort=asc', ROOT);
    assert.deepEqual(
      projects.json.map((p: { id: number; path_with_namespace: string }) => [p.id, p.path_with_namespace]),
      [
        [1, 'acme/templates'],
        [2, 'acme/tools'],
        [3, 'alice/dots'],
      ],
    );
    const platform = await call(u, 'GET', '/api/v4/groups/acme%2Fplatform', ROOT);
    assert.deepEqual([platform.json.id, platform.json.full_path, platform.json.parent_id], [5, 'acme/platform', 4]);
    const members = await call(u, 'GET', '/api/v4/projects/2/members', ROOT);
    assert.deepEqual(
      members.json.map((m: { username: string; access_level: number }) => [m.username, m.access_level]),
      [
        ['root', 40],
        ['alice', 40],
      ],
    );
    const raw = await call(u, 'GET', '/api/v4/projects/2/snippets/1/raw', null);
    assert.deepEqual([raw.status, raw.text], [200, "puts 'hi'\n"]);
    const readme = await call(u, 'GET', '/api/v4/projects/2/repository/files/README.md/raw?ref=main', ROOT);
    assert.deepEqual([readme.status, readme.text], [200, '# Tools\n']);
    // The template project set in the settings serves its files as templates.
    const license = await call(u, 'GET', '/api/v4/projects/2/templates/licenses/seeded', ROOT);
    assert.equal(license.status, 200, license.text);
    assert.equal(license.json.content, 'Seeded license\n');
  });

  it('reset: back to the seeded state, the root token still works, and ids are given out again', async () => {
    const u = server.url;
    const create = (title: string) =>
      call(
        u,
        'POST',
        '/api/v4/projects/2/snippets',
        ALICE,
        JSON.stringify({ title, files: [{ file_path: 'a.txt', content: 'a' }] }),
      );
    const first = await create('made in a test');
    assert.equal(first.status, 201, first.text);
    assert.equal(first.json.id, 2);
    assert.equal(first.json.visibility, 'internal'); // the seeded default
    const carol = await call(
      u,
      'POST',
      '/api/v4/users',
      ROOT,
      JSON.stringify({ username: 'carol', email: 'carol@example.com', name: 'Carol', password: 'carol-password' }),
    );
    assert.equal(carol.status, 201);

    const reset = await call(u, 'POST', '/-/snippetd/reset', ROOT);
    assert.deepEqual([reset.status, reset.text], [204, '']);

    assert.equal((await call(u, 'GET', '/api/v4/projects/2/snippets/2', ROOT)).status, 404);
    const users = await call(u, 'GET', '/api/v4/users', ROOT);
    assert.deepEqual(users.json.map((x: { id: number; username: string }) => `${x.id} ${x.username}`).sort(), [
      '1 root',
      '2 alice',
      '3 bob',
    ]);
    const again = await create('made after the reset');
    assert.equal(again.status, 201, again.text);
    assert.equal(again.json.id, 2);
    await call(u, 'POST', '/-/snippetd/reset', ROOT);
  });

  it('reset: rate limits count afresh, as the ids they count by are given out again', async () => {
    const u = server.url;
    const limit = (n: number) =>
      call(u, 'PUT', '/api/v4/application/settings', ROOT, JSON.stringify({ search_rate_limit: n }));
    const search = async () => (await call(u, 'GET', '/api/v4/search?scope=snippet_titles&search=x', ALICE)).status;
    // Within one minute's window, which the counts are of.
    await awayFromMinuteEnd(5);
    assert.equal((await limit(2)).status, 200);
    assert.deepEqual([await search(), await search(), await search()], [200, 200, 429]);
    assert.equal((await call(u, 'POST', '/-/snippetd/reset', ROOT)).status, 204);
    // The reset put the setting back too: the same limit again, and alice's count starts at none.
    assert.equal((await limit(2)).status, 200);
    assert.deepEqual([await search(), await search(), await search()], [200, 200, 429]);
    assert.equal((await call(u, 'POST', '/-/snippetd/reset', ROOT)).status, 204);
  });

  it('reset: search finds what is stored after it, never what the reset took away', async () => {
    const u = server.url;
    const create = (content: string) =>
      call(
        u,
        'POST',
        '/api/v4/projects/2/snippets',
        ALICE,
        JSON.stringify({ title: 'search', files: [{ file_path: 'a.txt', content }] }),
      );
    const search = async (text: string) =>
      (await call(u, 'GET', `/api/v4/search?scope=snippet_blobs&search=${text}`, ROOT)).json.map(
        (s: { id: number }) => s.id,
      );
    // Past the first 8 KiB piece of SQLite's index (search-indexing.ts), which a shorter file's would replace.
    const before = await create(`${'x'.repeat(20_000)} zebrabefore`);
    assert.equal(before.status, 201, before.text);
    const indexerTurn = () => new Promise((resolve) => setTimeout(resolve, 1500));
    await indexerTurn();
    assert.deepEqual(await search('zebrabefore'), [before.json.id]);
    await call(u, 'POST', '/-/snippetd/reset', ROOT);
    const after = await create('zebraafter');
    assert.equal(after.json.id, before.json.id, 'the reset gives the id again');
    assert.deepEqual(await search('zebrabefore'), []);
    await indexerTurn();
    assert.deepEqual(await search('zebrabefore'), []);
    assert.deepEqual(await search('zebraafter'), [after.json.id]);
    await call(u, 'POST', '/-/snippetd/reset', ROOT);
  });

  it('reset: a clone shows the seeded repository, even after pushes made the cache newer', async () => {
    const u = server.url;
    const remote = `${u.replace('http://', `http://root:${ROOT}@`)}/acme/tools/snippets/1.git`;
    const work = path.join(dir, 'pushed');
    assert.equal((await runGit(['clone', '--quiet', remote, work])).code, 0);
    fs.writeFileSync(path.join(work, 'hello.rb'), "puts 'changed'\n");
    assert.equal((await runGit(['commit', '--quiet', '-am', 'change'], work)).code, 0);
    const push = await runGit(['push', '--quiet', 'origin', 'HEAD:main'], work);
    assert.equal(push.code, 0, push.stderr);
    assert.equal((await call(u, 'GET', '/api/v4/projects/2/snippets/1/raw', null)).text, "puts 'changed'\n");

    assert.equal((await call(u, 'POST', '/-/snippetd/reset', ROOT)).status, 204);
    const fresh = path.join(dir, 'fresh');
    assert.equal((await runGit(['clone', '--quiet', remote, fresh])).code, 0);
    assert.equal(fs.readFileSync(path.join(fresh, 'hello.rb'), 'utf8'), "puts 'hi'\n");
    assert.equal((await runGit(['rev-list', '--count', 'HEAD'], fresh)).stdout.trim(), '1');
    const fsck = await runGit(['fsck', '--strict'], fresh);
    assert.equal(fsck.code, 0, fsck.stderr);
  });

  it('POST /-/snippetd/seed adds a document sent as JSON or YAML and answers the ids it gave', async () => {
    const u = server.url;
    const json = await call(
      u,
      'POST',
      '/-/snippetd/seed',
      ROOT,
      JSON.stringify({
        users: [{ username: 'dave', tokens: [{ token: 'dave-token-0123456789abcdef', scopes: ['read_api'] }] }],
        projects: [
          {
            path: 'acme/extra',
            snippets: [{ title: 'more', author: 'dave', files: [{ path: 'm.md', content: '# m' }] }],
          },
        ],
        snippets: [{ title: 'mine', author: 'dave', visibility: 'public', files: [{ path: 'p.txt', content: 'p' }] }],
      }),
    );
    assert.equal(json.status, 201, json.text);
    assert.deepEqual(json.json, {
      users: { dave: 4 },
      groups: {},
      projects: { 'acme/extra': 4 },
      snippets: [
        { project: 'acme/extra', title: 'more', id: 2 },
        { project: null, title: 'mine', id: 3 },
      ],
    });
    const dave = await call(u, 'GET', '/api/v4/user', 'dave-token-0123456789abcdef');
    assert.equal(dave.json.username, 'dave');
    const personal = await call(u, 'GET', '/api/v4/snippets/3', null);
    assert.deepEqual(
      [personal.status, personal.json.title, personal.json.project_id, personal.json.author.username],
      [200, 'mine', null, 'dave'],
    );
    assert.equal((await call(u, 'GET', '/api/v4/snippets/3/raw', null)).text, 'p');

    const yaml = await call(u, 'POST', '/-/snippetd/seed', ROOT, 'groups:\n  - path: beta\n', 'application/yaml');
    assert.equal(yaml.status, 201, yaml.text);
    assert.deepEqual(yaml.json.groups, { beta: 7 }); // namespace ids: users have one each
    // A seed is root's: it may give an external user a project of their own, which they could not create.
    const external = await call(
      u,
      'POST',
      '/-/snippetd/seed',
      ROOT,
      'users:\n  - { username: erin, external: true }\nprojects:\n  - path: erin/own\n',
      'application/yaml',
    );
    assert.equal(external.status, 201, external.text);
    assert.deepEqual(Object.keys(external.json.projects), ['erin/own']);
    await call(u, 'POST', '/-/snippetd/reset', ROOT);
    assert.equal((await call(u, 'GET', '/api/v4/user', 'dave-token-0123456789abcdef')).status, 401);
  });

  it("a seeded project takes repository_access_level and snippets_access_level, the API's values only", async () => {
    const u = server.url;
    const seeded = await call(
      u,
      'POST',
      '/-/snippetd/seed',
      ROOT,
      [
        'projects:',
        '  - path: acme/members-code',
        '    visibility: public',
        '    repository_access_level: private',
        '    snippets_access_level: disabled',
        '    files: [{ path: code.txt, content: "code\\n" }]',
        '  - path: acme/plain',
        '    visibility: public',
      ].join('\n'),
      'application/yaml',
    );
    assert.equal(seeded.status, 201, seeded.text);
    const id = seeded.json.projects['acme/members-code'];
    const project = await call(u, 'GET', `/api/v4/projects/${id}`, ROOT);
    assert.deepEqual(
      [project.json.repository_access_level, project.json.snippets_access_level],
      ['private', 'disabled'],
    );
    // Applied, not only stored: a visitor of the public project may not read its code, its members may.
    const raw = `/api/v4/projects/${id}/repository/files/code.txt/raw?ref=main`;
    assert.deepEqual(
      [(await call(u, 'GET', raw, ROOT)).text, (await call(u, 'GET', raw, null)).status],
      ['code\n', 403],
    );
    const plain = await call(u, 'GET', `/api/v4/projects/${seeded.json.projects['acme/plain']}`, null);
    assert.deepEqual([plain.json.repository_access_level, plain.json.snippets_access_level], ['enabled', 'enabled']);
    const wrong = await call(
      u,
      'POST',
      '/-/snippetd/seed',
      ROOT,
      JSON.stringify({
        projects: [{ path: 'acme/wrong', repository_access_level: 'public', snippets_access_level: true }],
      }),
    );
    assert.deepEqual(
      [wrong.status, wrong.json],
      [
        400,
        {
          message: {
            'seed.projects[0].repository_access_level': ['must be one of disabled, private, enabled'],
            'seed.projects[0].snippets_access_level': ['must be one of disabled, private, enabled'],
          },
        },
      ],
    );
    await call(u, 'POST', '/-/snippetd/reset', ROOT);
  });

  it('a YAML seed is parsed only once an administrator sent it, and not on the event loop', async () => {
    // 20,000 keys: the YAML parser compared them in pairs, 2.8 s before the 401 of an anonymous request.
    const keys = Array.from({ length: 20_000 }, (_, i) => `k${i}: v`).join('\n');
    for (const token of [null, ALICE]) {
      const { answer, calm } = await whileHostile(server, () =>
        call(server.url, 'POST', '/-/snippetd/seed', token, keys, 'application/yaml'),
      );
      assert.equal(answer.status, token ? 403 : 401, answer.text);
      assertCalm(calm);
    }
    // An administrator's: parsed in the body parse thread, then checked as any seed.
    const { answer, calm } = await whileHostile(server, () =>
      call(server.url, 'POST', '/-/snippetd/seed', ROOT, keys, 'application/yaml'),
    );
    assert.equal(answer.status, 400, answer.text);
    assert.deepEqual(answer.json.message['seed.k0'], ['is not a known key']);
    // The first hundred named, as the API names at most a hundred parameters: listing all 20,000 held the loop.
    assert.equal(Object.keys(answer.json.message).length, 100);
    assertCalm(calm);
    const broken = await call(server.url, 'POST', '/-/snippetd/seed', ROOT, 'users: [unclosed', 'application/yaml');
    assert.equal(broken.status, 400);
    assert.match(broken.json.message.seed[0], /^is not valid YAML or JSON: /);
  });

  it('POST /-/snippetd/seed takes a document as large as the API takes a snippet', async () => {
    const content = 'large seed\n'.repeat(200_000);
    const doc = { projects: [{ path: 'alice/large', files: [{ path: 'large.txt', content }] }] };
    const seeded = await call(server.url, 'POST', '/-/snippetd/seed', ROOT, JSON.stringify(doc));
    assert.equal(seeded.status, 201, seeded.text);
    const raw = await call(server.url, 'GET', '/api/v4/projects/alice%2Flarge/repository/files/large.txt/raw', ROOT);
    assert.equal(raw.text, content);
    // Anyone else's large body is refused unread, as the API's is.
    const anonymous = await call(server.url, 'POST', '/-/snippetd/seed', null, JSON.stringify(doc));
    assert.equal(anonymous.status, 401);
    assert.equal((await call(server.url, 'POST', '/-/snippetd/reset', ROOT)).status, 204);
  });

  it('a seed keeps its long texts as they are, and refuses half of a UTF-16 pair however deep', async () => {
    const u = server.url;
    // A YAML seed is parsed in the body parse thread, whose long strings come back as bytes.
    const description = 'd'.repeat(70_000);
    const yaml = `snippets:\n  - title: long\n    description: ${description}\n    files: [{ path: a.txt, content: a }]\n`;
    const seeded = await call(u, 'POST', '/-/snippetd/seed', ROOT, yaml, 'application/yaml');
    assert.equal(seeded.status, 201, seeded.text);
    const snippet = await call(u, 'GET', `/api/v4/snippets/${seeded.json.snippets[0].id}`, ROOT);
    assert.equal(snippet.json.description, description);
    // Half a pair in a large file's content, three levels deep, and in a short path: refused, nothing kept.
    const content = `${'c'.repeat(70_000)}\ud800`;
    for (const [body, type] of [
      [JSON.stringify({ projects: [{ path: 'alice/odd', files: [{ path: 'a.txt', content }] }] }), 'application/json'],
      ['projects:\n  - path: alice/odd\n    files: [{ path: "a\\ud800", content: a }]\n', 'application/yaml'],
    ]) {
      const refused = await call(u, 'POST', '/-/snippetd/seed', ROOT, body, type);
      assert.deepEqual([refused.status, refused.text], [400, 'Bad Request'], type);
    }
    assert.equal((await call(u, 'GET', '/api/v4/projects/alice%2Fodd', ROOT)).status, 404);
    assert.equal((await call(u, 'POST', '/-/snippetd/reset', ROOT)).status, 204);
  });

  it('a seed with a problem is refused whole, each problem named by where it is', async () => {
    const u = server.url;
    const shape = await call(
      u,
      'POST',
      '/-/snippetd/seed',
      ROOT,
      JSON.stringify({ users: [{ name: 'x' }], groups: [{ path: 'g', visibility: 'secret' }], colour: 1 }),
    );
    assert.equal(shape.status, 400);
    assert.deepEqual(shape.json, {
      message: {
        'seed.colour': ['is not a known key'],
        'seed.users[0].username': ['is missing'],
        'seed.groups[0].visibility': ['must be one of private, internal, public'],
      },
    });
    // A token someone holds already (alice's, seeded), named where it is.
    const taken = await call(
      u,
      'POST',
      '/-/snippetd/seed',
      ROOT,
      JSON.stringify({ users: [{ username: 'dave', tokens: [{ token: ALICE }] }] }),
    );
    assert.deepEqual(
      [taken.status, taken.json],
      [400, { message: { 'users[0].tokens[0].token': ['has already been taken'] } }],
    );
    assert.equal((await call(u, 'GET', '/api/v4/users?username=dave', ROOT)).json.length, 0);
    // The ids by the names as the document wrote them, whatever their case.
    const cased = await call(
      u,
      'POST',
      '/-/snippetd/seed',
      ROOT,
      JSON.stringify({
        users: [{ username: 'Fred' }],
        groups: [{ path: 'Team' }],
        projects: [
          { path: 'fred/dots', snippets: [{ title: 't', files: [{ path: 'a', content: 'a' }] }] },
          { path: 'TEAM/tools' },
        ],
      }),
    );
    assert.equal(cased.status, 201, cased.text);
    assert.deepEqual(
      [Object.keys(cased.json.users), Object.keys(cased.json.groups), Object.keys(cased.json.projects)],
      [['Fred'], ['Team'], ['fred/dots', 'TEAM/tools']],
    );
    assert.equal(cased.json.snippets[0].project, 'fred/dots');
    assert.equal((await call(u, 'POST', '/-/snippetd/reset', ROOT)).status, 204);
    // A body of another type: neither a seed of nothing nor a form's one key.
    for (const type of ['text/plain', 'application/octet-stream', 'application/x-www-form-urlencoded']) {
      const other = await call(u, 'POST', '/-/snippetd/seed', ROOT, '{"users": [{"username": "erin"}]}', type);
      assert.deepEqual([other.status, other.json], [415, { message: '415 Unsupported Media Type' }], type);
    }
    // A setting's name mistyped, or one snippetd does not have.
    const typo = await call(
      u,
      'POST',
      '/-/snippetd/seed',
      ROOT,
      JSON.stringify({ settings: { default_snippet_visibilty: 'public', signup_enabled: true } }),
    );
    assert.deepEqual(
      [typo.status, typo.json],
      [
        400,
        {
          message: {
            'settings.default_snippet_visibilty': ['is not a known setting'],
            'settings.signup_enabled': ['is not a known setting'],
          },
        },
      ],
    );
  });

  it('a seed that fails half-way leaves nothing of itself', async () => {
    const u = server.url;
    const res = await call(
      u,
      'POST',
      '/-/snippetd/seed',
      ROOT,
      JSON.stringify({ users: [{ username: 'erin' }, { username: 'alice' }] }),
    );
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, { message: { 'users[1]': ['Username has already been taken'] } });
    assert.equal((await call(u, 'GET', '/api/v4/users?username=erin', ROOT)).json.length, 0);
    const member = await call(
      u,
      'POST',
      '/-/snippetd/seed',
      ROOT,
      JSON.stringify({ groups: [{ path: 'gamma', members: [{ user: 'nobody', access_level: 30 }] }] }),
    );
    assert.deepEqual(
      [member.status, member.json],
      [400, { message: { 'groups[0].members[0].user': ['names no user "nobody"'] } }],
    );
    assert.equal((await call(u, 'GET', '/api/v4/groups/gamma', ROOT)).status, 404);
    const next = await call(u, 'POST', '/-/snippetd/seed', ROOT, JSON.stringify({ users: [{ username: 'erin' }] }));
    assert.deepEqual(next.json.users, { erin: 4 });
    await call(u, 'POST', '/-/snippetd/reset', ROOT);
  });

  it('the controls are for administrators: 401 without a token, 403 for others', async () => {
    const u = server.url;
    for (const path of ['/-/snippetd/reset', '/-/snippetd/seed']) {
      const anonymous = await call(u, 'POST', path, null);
      assert.deepEqual([anonymous.status, anonymous.json], [401, { message: '401 Unauthorized' }]);
      const alice = await call(u, 'POST', path, ALICE);
      assert.deepEqual([alice.status, alice.json], [403, { message: '403 Forbidden' }]);
    }
  });

  it('the same seed as a JSON file gives the same ids in another process, whose generated root token is in the log', async () => {
    const jsonFile = path.join(dir, 'seed.json');
    fs.writeFileSync(jsonFile, JSON.stringify(YAML.parse(SEED), null, 2));
    const other = await spawnServer(env(), [CLI, 'serve', '--ephemeral', '--seed', jsonFile, '--port', '0']);
    try {
      const tokenFile = /its token is in (\S+)"/.exec(other.output())?.[1];
      assert.ok(tokenFile, other.output());
      const token = fs.readFileSync(tokenFile, 'utf8').trim();
      const a = await call(server.url, 'GET', '/api/v4/projects?order_by=id&sort=asc', ROOT);
      const b = await call(other.url, 'GET', '/api/v4/projects?order_by=id&sort=asc', token);
      const ids = (list: { id: number; path_with_namespace: string }[]) =>
        list.map((p) => [p.id, p.path_with_namespace]);
      assert.deepEqual(ids(b.json), ids(a.json));
      // A generated root token outlives the reset endpoint too.
      assert.equal((await call(other.url, 'POST', '/-/snippetd/reset', token)).status, 204);
      assert.equal((await call(other.url, 'GET', '/api/v4/user', token)).json.username, 'root');
      const dataDir = path.dirname(tokenFile);
      other.child.kill('SIGTERM');
      assert.equal(await exited(other.child), 0);
      assert.equal(fs.existsSync(dataDir), false, `${dataDir} is left behind`);
    } finally {
      other.child.kill('SIGKILL');
    }
  });
});

describe('serve --ephemeral: a reset after a large seed', { skip }, () => {
  let server: Spawned;
  let bigDir: string;
  /** The server's CPU time so far (user and system, /proc/<pid>/stat), in ms. */
  const cpuMs = () => {
    const fields = fs.readFileSync(`/proc/${server.child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  };
  /** Waits until the server has used under 40 ms of CPU in half a second (its search indexer is done). */
  const settled = async () => {
    for (let last = cpuMs(), i = 0; i < 240; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const now = cpuMs();
      if (now - last < 40) return;
      last = now;
    }
    throw new Error('the server never settled');
  };
  before(async () => {
    bigDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-ephemeral-big-'));
    const words = (seed: number) =>
      Array.from({ length: 16_000 }, (_, i) => ((seed * 7919 + i * 104_729) % 1_000_003).toString(36)).join(' ');
    // 40 snippets of about 100 KB each: 4 MB of text for search to index.
    const snippets = Array.from({ length: 40 }, (_, i) => ({
      title: `large ${i}`,
      visibility: 'public',
      files: [{ path: `large-${i}.txt`, content: words(i) }],
    }));
    const seed = { users: [{ username: 'alice' }], snippets: snippets.map((s) => ({ ...s, author: 'alice' })) };
    const file = path.join(bigDir, 'seed.json');
    fs.writeFileSync(file, JSON.stringify(seed));
    server = await spawnServer(env({ SNIPPETD_INITIAL_ROOT_TOKEN: ROOT }), [
      CLI,
      'serve',
      '--ephemeral',
      '--seed',
      file,
      '--port',
      '0',
    ]);
  });
  after(() => {
    server?.child.kill('SIGKILL');
    fs.rmSync(bigDir, { recursive: true, force: true });
  });

  it('indexes again only what the test changed: the seeded text stays indexed, and searchable', async () => {
    await settled();
    const made = await call(
      server.url,
      'POST',
      '/api/v4/snippets',
      ROOT,
      JSON.stringify({ title: 't', files: [{ file_path: 'a.txt', content: 'zebra' }] }),
    );
    assert.equal(made.status, 201, made.text);
    await settled();
    // Restoring every row indexed the 4 MB again: 720-760 ms of CPU (the SQLite pass's own server alone).
    const before = cpuMs();
    assert.equal((await call(server.url, 'POST', '/-/snippetd/reset', ROOT)).status, 204);
    await settled();
    const spent = cpuMs() - before;
    assert.ok(spent < 300, `${spent} ms of CPU from the reset until the server was idle again`);
    const titled = await call(server.url, 'GET', '/api/v4/search?scope=snippet_titles&search=large-7.txt', ROOT);
    assert.deepEqual(
      titled.json.map((found: { title: string }) => found.title),
      ['large 7'],
    );
    const zebra = await call(server.url, 'GET', '/api/v4/search?scope=snippet_blobs&search=zebra', ROOT);
    assert.deepEqual(zebra.json, []);
  });
});

describe('serve --ephemeral: the command line', { skip }, () => {
  before(() => {
    dir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-ephemeral-tests-'));
    fs.mkdirSync(dir, { recursive: true });
  });
  // Made again above when the first part removed it: each run had left one behind.
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps answering when the suite stops reading its output after the start-up lines', async () => {
    // As a suite starts it: standard output a pipe, read up to the line that says where the server is.
    const { SNIPPETD_LOG_LEVEL: _, ...inherited } = env({ SNIPPETD_INITIAL_ROOT_TOKEN: ROOT });
    const [command, args] = cliCommand('serve', '--ephemeral', '--port', '0');
    const child = spawn(command, args, { env: inherited, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let seen = '';
        const onData = (chunk: Buffer) => {
          seen += chunk;
          const found = /listening on (\S+) /.exec(seen);
          if (!found) return;
          child.stdout.off('data', onData);
          child.stdout.pause();
          resolve(found[1]);
        };
        child.stdout.on('data', onData);
        child.once('exit', () => reject(new Error(`exited: ${seen}`)));
      });
      // At info each of these was a line: the pipe's 64 KiB were full after about 240 and the server waited.
      for (let n = 0; n < 600; n++) {
        const res = await fetch(`${url}/api/v4/version`, {
          headers: { 'private-token': ROOT },
          signal: AbortSignal.timeout(5000),
        });
        assert.equal(res.status, 200, `request ${n}`);
        await res.arrayBuffer();
      }
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('stops at SIGTERM while an answer a test never read is still being sent', async () => {
    const server = await startWithoutSeed();
    try {
      const made = await call(
        server.url,
        'POST',
        '/api/v4/snippets',
        ROOT,
        JSON.stringify({
          title: 'large',
          visibility: 'public',
          files: [{ file_path: 'a.txt', content: 'a'.repeat(5 << 20) }],
        }),
      );
      assert.equal(made.status, 201);
      // The status read, the 5 MB body never: more than the socket's buffers hold.
      const res = await fetch(`${server.url}/api/v4/snippets/${made.json.id}/raw`, {
        headers: { 'private-token': ROOT },
      });
      assert.equal(res.status, 200);
      const started = Date.now();
      server.child.kill('SIGTERM');
      assert.equal(await exited(server.child), 0);
      assert.ok(Date.now() - started < 5000, `stopped after ${Date.now() - started} ms`);
      await res.body?.cancel().catch(() => {});
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('--seed needs --ephemeral, and --ephemeral keeps its own directory and database', () => {
    const seed = cli(['serve', '--seed', 'seed.yaml']);
    assert.deepEqual(
      [seed.status, seed.stderr],
      [1, 'snippetd: --seed needs --ephemeral (a seed is for a fresh database)\n'],
    );
    const data = cli(['serve', '--ephemeral', '--data-dir', '/tmp/x']);
    assert.deepEqual(
      [data.status, data.stderr],
      [1, 'snippetd: --data-dir cannot be used with --ephemeral, which keeps nothing\n'],
    );
    const url = cli(['serve', '--ephemeral'], { SNIPPETD_DATABASE_URL: 'sqlite:/tmp/x.sqlite3' });
    assert.deepEqual(
      [url.status, url.stderr],
      [1, 'snippetd: SNIPPETD_DATABASE_URL cannot be used with --ephemeral, which keeps nothing\n'],
    );
    const other = cli(['users', 'create', '--ephemeral']);
    assert.deepEqual([other.status, other.stderr], [2, 'snippetd: --ephemeral is for serve, not users create\n']);
  });

  it('a start removes the directory a killed ephemeral server left, and nothing else of that prefix', async () => {
    const left = path.join(os.tmpdir(), 'snippetd-ephemeral-999999999-AbC123');
    const other = path.join(os.tmpdir(), 'snippetd-ephemeral-notes');
    fs.mkdirSync(left, { recursive: true });
    fs.mkdirSync(other, { recursive: true });
    try {
      const server = await spawnServer(env(), [CLI, 'serve', '--ephemeral', '--port', '0']);
      server.child.kill('SIGTERM');
      assert.equal(await exited(server.child), 0);
      assert.equal(fs.existsSync(left), false, "the dead process's directory is left");
      assert.equal(fs.existsSync(other), true, 'a directory that is not one of ours was removed');
    } finally {
      fs.rmSync(left, { recursive: true, force: true });
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it("a start goes on when such a directory cannot be removed (another user's, on a shared machine)", async (t) => {
    const left = path.join(os.tmpdir(), 'snippetd-ephemeral-999999998-Xyz789');
    fs.mkdirSync(path.join(left, 'cache'), { recursive: true });
    // Immutable: not even root may remove what is in it, as a user may not remove another's files.
    if (spawnSync('chattr', ['+i', left]).status !== 0) {
      fs.rmSync(left, { recursive: true, force: true });
      return t.skip('chattr cannot make a directory immutable here');
    }
    try {
      const server = await spawnServer(env(), [CLI, 'serve', '--ephemeral', '--port', '0']);
      assert.equal((await fetch(`${server.url}/-/readiness`)).status, 200);
      server.child.kill('SIGTERM');
      assert.equal(await exited(server.child), 0);
    } finally {
      spawnSync('chattr', ['-i', left]);
      fs.rmSync(left, { recursive: true, force: true });
    }
  });

  it("docs/tool-authors.md's seed document, posted to a fresh server, answers the ids the page shows", async () => {
    const page = fs.readFileSync(path.join(import.meta.dirname, '../../docs/tool-authors.md'), 'utf8');
    const section = page.slice(page.indexOf('## Seed documents'));
    const blocks = [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], code: m[2] }));
    const document = blocks.find((b) => b.lang === 'yaml')!.code;
    const answer = blocks.find((b) => b.lang === 'json')!.code;
    const fresh = await startWithoutSeed();
    try {
      const res = await call(fresh.url, 'POST', '/-/snippetd/seed', ROOT, document, 'application/yaml');
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.json, JSON.parse(answer));
    } finally {
      fresh.child.kill('SIGKILL');
    }
  });

  it('a seed file with problems stops the start with one line naming them, and leaves nothing behind', () => {
    const bad = path.join(dir, 'bad.yaml');
    fs.writeFileSync(
      bad,
      'users:\n  - username: frank\n    tokens: [{ token: short }]\nprojects:\n  - path: nowhere/p\n',
    );
    const before = fs.readdirSync(os.tmpdir()).filter((n) => /^snippetd-ephemeral-\d/.test(n)).length;
    const result = cli(['serve', '--ephemeral', '--seed', bad, '--port', '0']);
    assert.equal(result.status, 1, result.stdout);
    assert.equal(
      result.stderr,
      `snippetd: ${bad}: seed.users[0].tokens[0].token must be a string of 20 characters or more\n`,
    );
    const broken = path.join(dir, 'broken.yaml');
    fs.writeFileSync(broken, 'projects:\n  - path: nowhere/p\n');
    const late = cli(['serve', '--ephemeral', '--seed', broken, '--port', '0']);
    assert.deepEqual(
      [late.status, late.stderr],
      [1, `snippetd: ${broken}: projects[0].path names no group or user "nowhere"\n`],
    );
    // A model's error names the document's field, not the model's (GitLab's visibility_level).
    const visible = path.join(dir, 'visible.yaml');
    fs.writeFileSync(
      visible,
      'groups:\n  - path: g\n    visibility: private\nprojects:\n  - path: g/p\n    visibility: public\n',
    );
    const level = cli(['serve', '--ephemeral', '--seed', visible, '--port', '0']);
    assert.deepEqual(
      [level.status, level.stderr],
      [
        1,
        `snippetd: ${visible}: projects[0].visibility public is not allowed since the namespace has a private visibility.\n`,
      ],
    );
    // Neither YAML nor JSON: the file's name and the parser's first line, as the other problems are told.
    const unreadable = path.join(dir, 'unreadable.yaml');
    fs.writeFileSync(unreadable, 'users:\n  - username: [unclosed\n');
    const parse = cli(['serve', '--ephemeral', '--seed', unreadable, '--port', '0']);
    assert.equal(parse.status, 1, parse.stdout);
    assert.match(parse.stderr, new RegExp(`^snippetd: ${unreadable}: seed is not valid YAML or JSON: \\S[^\\n]*\n$`));
    const after = fs.readdirSync(os.tmpdir()).filter((n) => /^snippetd-ephemeral-\d/.test(n)).length;
    assert.equal(after, before);
  });
});
