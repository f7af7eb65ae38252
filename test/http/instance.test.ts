// Instance endpoints (docs/gitlab-compatibility.md#instance): GET /metadata and /version, and GET/PUT
// /application/settings.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
const DEFAULTS = {
  default_branch_name: 'main',
  default_snippet_visibility: 'private',
  restricted_visibility_levels: [],
  file_template_project_id: null,
  snippet_size_limit: 52428800,
  max_snippet_files: 10,
  receive_max_input_size: null,
  max_file_size: 50,
  search_indexed_file_size_limit_kb: 1024,
};
const pick = (body: Record<string, unknown>) => Object.fromEntries(Object.keys(DEFAULTS).map((k) => [k, body[k]]));

// GitLab's lib/api/metadata.rb: /version is the deprecated name of /metadata, and both answer the same object
// (spec/fixtures/api/schemas/public_api/v4/metadata.json); a read_user token may read them.
for (const path of ['/version', '/metadata']) {
  describe(`GET ${path}`, () => {
    let t: TestApp;
    let alice: { id: number; token: string };
    before(async () => {
      t = await createTestApp();
      alice = await t.user('alice');
    });
    after(() => t.close());

    it('is 401 anonymous', async () => {
      const res = await t.request({ method: 'GET', url: `/api/v4${path}`, token: null });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json, { message: '401 Unauthorized' });
    });

    it('answers the version, the revision, no agent server and no enterprise edition to any signed-in user', async () => {
      for (const token of [undefined, alice.token]) {
        const res = await t.request({ method: 'GET', url: `/api/v4${path}`, token });
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['content-type'], 'application/json');
        const { version, revision, ...rest } = res.json;
        assert.match(version, SEMVER);
        assert.equal(typeof revision, 'string');
        assert.ok(revision.length > 0);
        assert.deepEqual(rest, { kas: { enabled: false, externalUrl: null, version: null }, enterprise: false });
      }
    });

    it('takes a token with api, read_api or read_user, and refuses one with neither (403 insufficient_scope)', async () => {
      for (const scopes of [['api'], ['read_api'], ['read_user']]) {
        const { token } = await t.user(`with-${scopes[0].replace('_', '-')}`, { scopes });
        const res = await t.request({ method: 'GET', url: `/api/v4${path}`, token });
        assert.equal(res.statusCode, 200, scopes.join());
        const head = await t.request({ method: 'HEAD', url: `/api/v4${path}`, token });
        assert.equal(head.statusCode, 200, `HEAD ${scopes.join()}`);
      }
      const { token } = await t.user('with-read-repository', { scopes: ['read_repository'] });
      const res = await t.request({ method: 'GET', url: `/api/v4${path}`, token });
      assert.equal(res.statusCode, 403);
      assert.equal(res.json.error, 'insufficient_scope');
    });
  });
}

describe('application settings', () => {
  let t: TestApp;
  let alice: { id: number; token: string };
  before(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
  });
  after(() => t.close());

  const put = (payload: Record<string, unknown>, token: string | null = ROOT_TOKEN) =>
    t.api('PUT', '/application/settings', token, payload);
  const get = () => t.api('GET', '/application/settings', ROOT_TOKEN);

  it('GET is for admins: 401 anonymous, 403 others', async () => {
    const anon = await t.request({ method: 'GET', url: '/api/v4/application/settings', token: null });
    assert.equal(anon.statusCode, 401);
    assert.deepEqual(anon.json, { message: '401 Unauthorized' });
    const user = await t.request({ method: 'GET', url: '/api/v4/application/settings', token: alice.token });
    assert.equal(user.statusCode, 403);
    assert.deepEqual(user.json, { message: '403 Forbidden' });
  });

  it("GET answers GitLab's defaults on a new instance", async () => {
    const res = await get();
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(pick(res.json), DEFAULTS);
  });

  it('PUT is for admins: 401 anonymous, 403 others, and nothing changes', async () => {
    const anon = await put({ default_branch_name: 'anon' }, null);
    assert.equal(anon.statusCode, 401);
    assert.deepEqual(anon.json, { message: '401 Unauthorized' });
    const user = await put({ default_branch_name: 'user' }, alice.token);
    assert.equal(user.statusCode, 403);
    assert.deepEqual(user.json, { message: '403 Forbidden' });
    assert.equal((await get()).json.default_branch_name, 'main');
  });

  it('PUT changes the settings, returns them, and they persist', async () => {
    const project = await t.request({ method: 'POST', url: '/api/v4/projects', payload: { name: 'file-templates' } });
    assert.equal(project.statusCode, 201);
    const changes = {
      default_branch_name: 'trunk',
      default_snippet_visibility: 'internal',
      restricted_visibility_levels: ['public'],
      file_template_project_id: project.json.id,
      snippet_size_limit: 1024,
      max_snippet_files: 3,
      receive_max_input_size: 20,
      max_file_size: 10,
      search_indexed_file_size_limit_kb: 64,
    };
    const res = await put(changes);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(pick(res.json), changes);
    assert.deepEqual(pick((await get()).json), changes);

    // A partial update leaves the other settings alone.
    const partial = await put({ max_snippet_files: 5 });
    assert.equal(partial.statusCode, 200);
    assert.deepEqual(pick(partial.json), { ...changes, max_snippet_files: 5 });

    const reset = await put({ ...DEFAULTS });
    assert.equal(reset.statusCode, 200);
    assert.deepEqual(pick(reset.json), DEFAULTS);
    assert.deepEqual(pick((await get()).json), DEFAULTS);
  });

  it('PUT refuses an invalid default_snippet_visibility with 400 and changes nothing', async () => {
    const res = await put({ default_snippet_visibility: 'secret', default_branch_name: 'changed' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json, { error: 'default_snippet_visibility does not have a valid value' });
    assert.deepEqual(pick((await get()).json), DEFAULTS);
  });

  it('restricted_visibility_levels accepts names and GitLab integers, answered as names', async () => {
    const ints = await put({ restricted_visibility_levels: [20] });
    assert.equal(ints.statusCode, 200);
    assert.deepEqual(ints.json.restricted_visibility_levels, ['public']);
    const strInts = await put({ restricted_visibility_levels: ['0', '10'] });
    assert.equal(strInts.statusCode, 200);
    assert.deepEqual([...strInts.json.restricted_visibility_levels].sort(), ['internal', 'private']);
    const names = await put({ restricted_visibility_levels: ['internal', 'public'] });
    assert.equal(names.statusCode, 200);
    assert.deepEqual([...names.json.restricted_visibility_levels].sort(), ['internal', 'public']);
    const form = await t.request({
      method: 'PUT',
      url: '/api/v4/application/settings',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'restricted_visibility_levels[]=20',
    });
    assert.equal(form.statusCode, 200);
    assert.deepEqual(form.json.restricted_visibility_levels, ['public']);
    assert.deepEqual((await get()).json.restricted_visibility_levels, ['public']);
    const cleared = await put({ restricted_visibility_levels: [] });
    assert.equal(cleared.statusCode, 200);
    assert.deepEqual(cleared.json.restricted_visibility_levels, []);
  });

  it('restricted_visibility_levels accepts a comma-separated list (GitLab CommaSeparatedToArray)', async () => {
    const res = await put({ restricted_visibility_levels: 'internal,public' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual([...res.json.restricted_visibility_levels].sort(), ['internal', 'public']);
    await put({ restricted_visibility_levels: [] });
  });

  it('restricted_visibility_levels refuses an unknown level with 400', async () => {
    const res = await put({ restricted_visibility_levels: ['secret'] });
    assert.equal(res.statusCode, 400);
    assert.deepEqual((await get()).json.restricted_visibility_levels, []);
  });

  it('PUT refuses an unknown file_template_project_id with 400', async () => {
    const res = await put({ file_template_project_id: 999999 });
    assert.equal(res.statusCode, 400);
    assert.equal(typeof res.json, 'object');
    assert.ok(res.json.message?.file_template_project_id || res.json.error, JSON.stringify(res.json));
    assert.equal((await get()).json.file_template_project_id, null);
    const notInt = await put({ file_template_project_id: 'abc' });
    assert.equal(notInt.statusCode, 400);
    assert.deepEqual(notInt.json, { error: 'file_template_project_id is invalid' });
  });

  it('PUT refuses non-integer limits with Grape messages', async () => {
    const res = await put({ snippet_size_limit: 'big', max_snippet_files: 'many' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json, { error: 'snippet_size_limit is invalid, max_snippet_files is invalid' });
    assert.deepEqual(pick((await get()).json), DEFAULTS);
  });
});

// Each setting sent as null and as a wrong type
// (docs/gitlab-compatibility.md#instance-settings-null-and-wrong-types): GitLab's answer (a 400, or null taken as
// GitLab's setters take it), and in every case snippet creates by an admin and by a non-admin still work.
describe('application settings: null and wrong types never break later requests', () => {
  let t: TestApp;
  let alice: { id: number; token: string };
  let rootProject: number;
  let aliceProject: number;
  before(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    rootProject = (await t.ok('POST', '/projects', ROOT_TOKEN, { name: 'root-project' }, 201)).id;
    aliceProject = (await t.ok('POST', '/projects', alice.token, { name: 'alice-project' }, 201)).id;
  });
  after(() => t.close());

  const put = (payload: Record<string, unknown>) => t.api('PUT', '/application/settings', ROOT_TOKEN, payload);
  const isInvalid = (name: string) => ({ error: `${name} is invalid` });
  const notValid = (name: string) => ({ error: `${name} does not have a valid value` });
  let groups = 0;

  /** [setting, sent, status, answer body (200: the setting's value in the answer)] */
  const CASES: [string, unknown, number, unknown][] = [
    ['default_branch_name', null, 400, { error: 'default_branch_name is empty' }],
    ['default_branch_name', { a: 1 }, 400, isInvalid('default_branch_name')],
    // A name no branch can have: every new project would be given it.
    ['default_branch_name', 'a..b', 400, { message: { default_branch_name: ['is invalid'] } }],
    ['default_branch_name', 'b'.repeat(256), 400, { message: { default_branch_name: ['is invalid'] } }],
    ['default_branch_name', 'release/2026', 200, 'release/2026'],
    ['default_snippet_visibility', null, 200, 'private'],
    ['default_snippet_visibility', 10, 400, notValid('default_snippet_visibility')],
    ['default_snippet_visibility', ['public'], 400, isInvalid('default_snippet_visibility')],
    ['default_project_visibility', null, 200, 'private'],
    ['default_project_visibility', true, 400, notValid('default_project_visibility')],
    ['default_group_visibility', null, 200, 'private'],
    ['default_group_visibility', { level: 20 }, 400, isInvalid('default_group_visibility')],
    ['restricted_visibility_levels', null, 200, []],
    ['restricted_visibility_levels', [{ level: 20 }], 400, isInvalid('restricted_visibility_levels')],
    ['restricted_visibility_levels', 'secret', 400, notValid('restricted_visibility_levels')],
    ['file_template_project_id', null, 200, null],
    // '' is nil to Grape for a number: it clears a setting that takes null, and fails a check as null does.
    ['file_template_project_id', '', 200, null],
    ['file_template_project_id', 'abc', 400, isInvalid('file_template_project_id')],
    ['snippet_size_limit', null, 400, { message: { snippet_size_limit: ['is not a number'] } }],
    ['snippet_size_limit', '', 400, { message: { snippet_size_limit: ['is not a number'] } }],
    ['snippet_size_limit', 'big', 400, isInvalid('snippet_size_limit')],
    ['snippet_size_limit', 0, 400, { message: { snippet_size_limit: ['must be greater than 0'] } }],
    ['max_snippet_files', null, 400, { message: { max_snippet_files: ['is not a number'] } }],
    ['max_snippet_files', 1.5, 400, isInvalid('max_snippet_files')],
    ['can_create_group', null, 400, { message: { can_create_group: ['must be a boolean value'] } }],
    ['can_create_group', 'maybe', 400, isInvalid('can_create_group')],
    // GitLab's default: no limit on a push's pack.
    ['receive_max_input_size', null, 200, null],
    [
      'receive_max_input_size',
      -1,
      400,
      { message: { receive_max_input_size: ['must be greater than or equal to 0'] } },
    ],
    ['receive_max_input_size', 'big', 400, isInvalid('receive_max_input_size')],
    ['max_file_size', null, 400, { message: { max_file_size: ['is not a number'] } }],
    ['max_file_size', -1, 400, { message: { max_file_size: ['must be greater than or equal to 0'] } }],
    [
      'search_indexed_file_size_limit_kb',
      null,
      400,
      { message: { search_indexed_file_size_limit_kb: ['is not a number'] } },
    ],
    [
      'search_indexed_file_size_limit_kb',
      0,
      400,
      { message: { search_indexed_file_size_limit_kb: ['must be greater than 0'] } },
    ],
    [
      'search_indexed_file_size_limit_kb',
      8193,
      400,
      { message: { search_indexed_file_size_limit_kb: ['must be less than or equal to 8192'] } },
    ],
    ['search_indexed_file_size_limit_kb', 8192, 200, 8192],
  ];

  for (const [name, sent, status, answer] of CASES) {
    it(`${name} = ${JSON.stringify(sent)}: ${status}, then creates by an admin and a non-admin work`, async () => {
      const before = (await t.ok('GET', '/application/settings', ROOT_TOKEN, undefined, 200))[name];
      const res = await put({ [name]: sent });
      assert.equal(res.statusCode, status, res.body);
      if (status === 200) assert.deepEqual(res.json[name], answer);
      else assert.deepEqual(res.json, answer);
      const after = (await t.ok('GET', '/application/settings', ROOT_TOKEN, undefined, 200))[name];
      assert.deepEqual(after, status === 200 ? answer : before);

      const file = { title: name, files: [{ file_path: 'a.txt', content: 'a' }] };
      const byRoot = await t.ok('POST', `/projects/${rootProject}/snippets`, ROOT_TOKEN, file, 201);
      assert.equal(byRoot.visibility, 'private');
      const byAlice = await t.ok('POST', `/projects/${aliceProject}/snippets`, alice.token, file, 201);
      assert.equal(byAlice.visibility, 'private');
      const path = `group-${++groups}`;
      const group = await t.api('POST', '/groups', alice.token, { name: path, path });
      assert.equal(group.statusCode, 201, group.body);
      assert.equal(group.json.visibility, 'private');
    });
  }
});
