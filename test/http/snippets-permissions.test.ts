// Permission matrix of the project snippet endpoints (docs/gitlab-compatibility.md#snippet-permissions,
// #order-of-checks, #snippet-endpoints): every actor x snippet visibility x project (visibility, snippets feature
// level, archived) x endpoint, each cell asserted (status and body). The expectation comes from the small oracle
// below, written from that document and deliberately independent of src/domain/policy.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

type Level = 'private' | 'internal' | 'public';
type Feature = 'enabled' | 'private' | 'disabled';
type Endpoint = 'list' | 'get' | 'raw' | 'file raw' | 'create' | 'update' | 'delete' | 'user_agent_detail';
type Kind = 'root' | 'authr' | 'authg' | 'authn';
interface Actor {
  name: string;
  user: string | null;
  role: number;
  external?: boolean;
  admin?: boolean;
  author?: Kind;
}
interface ProjectCase {
  name: string;
  visibility: Level;
  feature: Feature;
  archived: boolean;
}
interface Expect {
  status: number;
  body?: unknown;
  gate: boolean;
  listed?: boolean;
}

const LEVELS: Level[] = ['private', 'internal', 'public'];
const ENDPOINTS: Endpoint[] = ['list', 'get', 'raw', 'file raw', 'create', 'update', 'delete', 'user_agent_detail'];
const ACTORS: Actor[] = [
  { name: 'anonymous', user: null, role: 0 },
  { name: 'external non-member', user: 'ext', role: 0, external: true },
  { name: 'signed-in non-member', user: 'plain', role: 0 },
  { name: 'guest', user: 'guest', role: 10 },
  { name: 'reporter', user: 'reporter', role: 20 },
  { name: 'developer', user: 'developer', role: 30 },
  { name: 'maintainer', user: 'maintainer', role: 40 },
  { name: 'owner', user: 'owner', role: 50 },
  { name: 'admin (non-member)', user: 'admin1', role: 0, admin: true },
  { name: 'author (reporter)', user: 'authr', role: 20, author: 'authr' },
  { name: 'author (guest)', user: 'authg', role: 10, author: 'authg' },
  { name: 'author (non-member)', user: 'authn', role: 0, author: 'authn' },
];
const PROJECTS: ProjectCase[] = [
  ...LEVELS.map((v) => ({ name: `${v} project`, visibility: v, feature: 'enabled' as Feature, archived: false })),
  ...(['internal', 'public'] as Level[]).map((v) => ({
    name: `${v} project, snippets private`,
    visibility: v,
    feature: 'private' as Feature,
    archived: false,
  })),
  ...(['private', 'public'] as Level[]).map((v) => ({
    name: `${v} project, snippets disabled`,
    visibility: v,
    feature: 'disabled' as Feature,
    archived: false,
  })),
  { name: 'public project, archived', visibility: 'public', feature: 'enabled', archived: true },
];

const msg = (message: string) => ({ message });
const PROJECT_NOT_FOUND = msg('404 Project Not Found');
const FORBIDDEN = msg('403 Forbidden');
const UNAUTHORIZED = msg('401 Unauthorized');
const NOT_FOUND_GET = msg('404 Not found');
const SNIPPET_NOT_FOUND = msg('404 Snippet Not Found');
const AGENT = 'matrix-agent/1.0';

/** The rules of docs/gitlab-compatibility.md#snippet-permissions, written out independently. */
function oracle(a: Actor, p: ProjectCase, sv: Level, ep: Endpoint): Expect {
  const signedIn = a.user !== null;
  const member = a.role >= 10;
  // #snippet-permissions: members and admins see everything; others by level; external users public only.
  const sees = (level: Level) =>
    !!a.admin || member || level === 'public' || (level === 'internal' && signedIn && !a.external);
  const gate = (status: number, body: unknown): Expect => ({ status, body, gate: true });
  if (!sees(p.visibility)) return gate(404, PROJECT_NOT_FOUND); // #order-of-checks step 2, first gate
  if (p.feature === 'disabled') return gate(403, FORBIDDEN); // second gate, admins and owners included
  if (p.feature === 'private' && !member && !a.admin) return gate(403, FORBIDDEN);
  const visible = sees(sv);
  const deny = (status: number, body: unknown): Expect => ({ status, body, gate: false });
  const ok = (status: number): Expect => ({ status, gate: false });
  switch (ep) {
    case 'list':
      return signedIn ? { status: 200, gate: false, listed: visible } : gate(401, UNAUTHORIZED);
    case 'get':
      return visible ? ok(200) : deny(404, NOT_FOUND_GET);
    case 'raw':
    case 'file raw':
      return visible ? ok(200) : deny(404, SNIPPET_NOT_FOUND);
    case 'create':
      if (!signedIn) return gate(401, UNAUTHORIZED);
      return !p.archived && (a.admin || a.role >= 20) ? ok(201) : deny(403, FORBIDDEN);
    case 'update':
      if (!signedIn) return gate(401, UNAUTHORIZED);
      if (!visible) return deny(404, SNIPPET_NOT_FOUND);
      return !p.archived && (a.admin || a.role >= 40 || a.author) ? ok(200) : deny(403, FORBIDDEN);
    case 'delete':
      if (!signedIn) return gate(401, UNAUTHORIZED);
      if (!visible) return deny(404, SNIPPET_NOT_FOUND);
      return !p.archived && (a.admin || a.role >= 40 || (a.author && a.role >= 20)) ? ok(204) : deny(403, FORBIDDEN);
    case 'user_agent_detail':
      if (!signedIn) return gate(401, UNAUTHORIZED);
      return a.admin ? ok(200) : deny(403, FORBIDDEN);
  }
}

interface Snip {
  id: number;
  title: string;
  content: string;
  authorId: number;
}

describe('project snippets permission matrix', () => {
  let t: TestApp;
  const users: Record<string, { id: number; token: string }> = {};
  const projectIds: Record<string, number> = {};
  const read = new Map<string, Snip>(); // `${project}|${sv}|${kind}`
  const fresh = new Map<string, Snip>(); // `${project}|${actor}|${sv}|${endpoint}`
  let counter = 0;

  const tokenOf = (kind: Kind | string) => (kind === 'root' ? ROOT_TOKEN : users[kind].token);
  const snippet = async (projectId: number, kind: Kind, visibility: Level): Promise<Snip> => {
    const title = `s${++counter} ${visibility} by ${kind}`;
    const content = `content of ${title}\n`;
    const created = await t.ok(
      'POST',
      `/projects/${projectId}/snippets`,
      tokenOf(kind),
      { title, visibility, files: [{ file_path: 'hello.txt', content }] },
      201,
      { 'user-agent': AGENT },
    );
    return { id: created.id, title, content, authorId: created.author.id };
  };
  const kindOf = (a: Actor): Kind => a.author ?? 'root';

  before(async () => {
    t = await createTestApp();
    for (const a of ACTORS) if (a.user) users[a.user] = await t.user(a.user, { admin: a.admin, external: a.external });
    const roles: Record<string, number> = {
      guest: 10,
      reporter: 20,
      developer: 30,
      maintainer: 40,
      authr: 20,
      authg: 20,
      authn: 20,
    };
    for (const p of PROJECTS) {
      const path = p.name.replace(/[^a-z]+/g, '-');
      const created = await t.must('POST', `/projects/user/${users.owner.id}`, ROOT_TOKEN, {
        name: path,
        path,
        visibility: p.visibility,
      });
      projectIds[p.name] = created.id;
      for (const [name, level] of Object.entries(roles))
        await t.must('POST', `/projects/${created.id}/members`, ROOT_TOKEN, {
          user_id: users[name].id,
          access_level: level,
        });
      const jobs: Promise<void>[] = [];
      for (const sv of LEVELS) {
        for (const kind of ['root', 'authr', 'authg', 'authn'] as Kind[]) {
          jobs.push(snippet(created.id, kind, sv).then((s) => void read.set(`${p.name}|${sv}|${kind}`, s)));
        }
        for (const a of ACTORS) {
          for (const ep of ['update', 'delete'] as Endpoint[]) {
            const key = `${p.name}|${a.name}|${sv}|${ep}`;
            if (!oracle(a, p, sv, ep).gate)
              jobs.push(snippet(created.id, kindOf(a), sv).then((s) => void fresh.set(key, s)));
          }
        }
      }
      await Promise.all(jobs);
      // Now the authors become what the matrix says: "authg" a guest, "authn" no member at all.
      await t.must('PUT', `/projects/${created.id}/members/${users.authg.id}`, ROOT_TOKEN, { access_level: 10 });
      await t.must('DELETE', `/projects/${created.id}/members/${users.authn.id}`, ROOT_TOKEN);
      if (p.feature !== 'enabled')
        await t.must('PUT', `/projects/${created.id}`, ROOT_TOKEN, { snippets_access_level: p.feature });
      if (p.archived) await t.must('POST', `/projects/${created.id}/archive`, ROOT_TOKEN);
    }
  });
  after(() => t.close());

  async function cell(p: ProjectCase, a: Actor, sv: Level, ep: Endpoint, exp: Expect) {
    const pid = projectIds[p.name];
    const token = a.user ? users[a.user].token : null;
    const target = fresh.get(`${p.name}|${a.name}|${sv}|${ep}`) ?? read.get(`${p.name}|${sv}|${kindOf(a)}`)!;
    const base = `/projects/${pid}/snippets`;
    const request = async (id: number) => {
      switch (ep) {
        case 'list': {
          // Every page (create cells keep adding snippets), concatenated into one array.
          const all: unknown[] = [];
          for (let page = '1'; ; ) {
            const res = await t.api('GET', `${base}?per_page=100&page=${page}`, token);
            if (res.statusCode !== 200) return res;
            all.push(...res.json);
            page = String(res.headers['x-next-page'] ?? '');
            if (!page) return Object.assign(res, { json: all });
          }
        }
        case 'get':
          return t.api('GET', `${base}/${id}`, token);
        case 'raw':
          return t.api('GET', `${base}/${id}/raw`, token);
        case 'file raw':
          return t.api('GET', `${base}/${id}/files/main/hello.txt/raw`, token);
        case 'create':
          return t.api('POST', base, token, {
            title: `created by ${a.name}`,
            visibility: sv,
            files: [{ file_path: 'new.txt', content: 'new' }],
          });
        case 'update':
          return t.api('PUT', `${base}/${id}`, token, { title: `renamed by ${a.name}` });
        case 'delete':
          return t.api('DELETE', `${base}/${id}`, token);
        case 'user_agent_detail':
          return t.api('GET', `${base}/${id}/user_agent_detail`, token);
      }
    };
    const res = await request(target.id);
    assert.equal(res.statusCode, exp.status, `expected ${exp.status}, got ${res.statusCode} ${res.body}`);
    if (exp.body !== undefined) {
      assert.deepEqual(res.json, exp.body);
      // The gates come before the snippet lookup: a snippet id that does not exist gets the same answer.
      if (exp.gate && ep !== 'list' && ep !== 'create') {
        const missing = await request(999999);
        assert.equal(missing.statusCode, exp.status, `missing snippet id: ${missing.body}`);
        assert.deepEqual(missing.json, exp.body);
      }
      if (!exp.gate && (ep === 'delete' || ep === 'update')) {
        const still = await t.api('GET', `${base}/${target.id}`, ROOT_TOKEN);
        assert.equal(still.statusCode, 200, 'a refused write must leave the snippet in place');
        assert.equal(still.json.title, target.title, 'a refused update must not change the snippet');
      }
      return;
    }
    switch (ep) {
      case 'list': {
        assert.ok(Array.isArray(res.json));
        assert.ok(res.json.every((s: { project_id: number }) => s.project_id === pid));
        assert.equal(
          res.json.some((s: { id: number }) => s.id === target.id),
          exp.listed,
          `snippet ${exp.listed ? 'missing from' : 'leaked into'} the list`,
        );
        break;
      }
      case 'get':
        assert.equal(res.json.id, target.id);
        assert.equal(res.json.project_id, pid);
        assert.equal(res.json.visibility, sv);
        assert.equal(res.json.title, target.title);
        assert.equal(res.json.author.id, target.authorId);
        break;
      case 'raw':
      case 'file raw':
        assert.equal(res.body, target.content);
        assert.match(String(res.headers['content-type']), /^text\/plain/);
        break;
      case 'create':
        assert.equal(res.json.project_id, pid);
        assert.equal(res.json.visibility, sv);
        assert.equal(res.json.author.id, users[a.user!].id);
        break;
      case 'update':
        assert.equal(res.json.id, target.id);
        assert.equal(res.json.title, `renamed by ${a.name}`);
        break;
      case 'delete': {
        assert.equal(res.body, '');
        const gone = await t.api('GET', `${base}/${target.id}`, ROOT_TOKEN);
        assert.equal(gone.statusCode, 404);
        assert.deepEqual(gone.json, NOT_FOUND_GET);
        break;
      }
      case 'user_agent_detail':
        assert.deepEqual(res.json, { user_agent: AGENT, ip_address: '127.0.0.1', akismet_submitted: false });
        break;
    }
  }

  for (const p of PROJECTS) {
    // Cells are independent (mutations act on their own snippets), so each project's cells run concurrently.
    describe(p.name, { concurrency: 16 }, () => {
      for (const a of ACTORS) {
        for (const sv of LEVELS) {
          for (const ep of ENDPOINTS) {
            const exp = oracle(a, p, sv, ep);
            it(`${a.name} | ${sv} snippet | ${ep} -> ${exp.status}`, () => cell(p, a, sv, ep, exp));
          }
        }
      }
    });
  }

  describe('precedence (docs/gitlab-compatibility.md#order-of-checks): project 404 and feature 403, then validation (400), then authentication (401)', () => {
    const anon = (method: string, p: string, url: string, payload?: object) =>
      t.api(method, `/projects/${projectIds[p]}/snippets${url}`, null, payload);
    const valid = { title: 'x', files: [{ file_path: 'a.txt', content: 'a' }] };
    const cases: [string, string, string, string, object | undefined, number, unknown][] = [
      [
        'POST without a title',
        'POST',
        'public project',
        '',
        { files: valid.files },
        400,
        { error: 'title is missing' },
      ],
      ['POST with valid params', 'POST', 'public project', '', valid, 401, UNAUTHORIZED],
      [
        'PUT without any params',
        'PUT',
        'public project',
        '/ID',
        {},
        400,
        {
          error:
            'content, description, files, file_name, title, visibility are missing, at least one parameter must be provided',
        },
      ],
      ['PUT with valid params', 'PUT', 'public project', '/ID', { title: 'y' }, 401, UNAUTHORIZED],
      [
        'DELETE with a non-integer id',
        'DELETE',
        'public project',
        '/abc',
        undefined,
        400,
        { error: 'snippet_id is invalid' },
      ],
      ['DELETE with valid params', 'DELETE', 'public project', '/ID', undefined, 401, UNAUTHORIZED],
      [
        'POST without a title, private project',
        'POST',
        'private project',
        '',
        { files: valid.files },
        404,
        PROJECT_NOT_FOUND,
      ],
      [
        'POST without a title, snippets disabled',
        'POST',
        'public project, snippets disabled',
        '',
        { files: valid.files },
        403,
        FORBIDDEN,
      ],
      [
        'POST without a title, snippets private',
        'POST',
        'public project, snippets private',
        '',
        { files: valid.files },
        403,
        FORBIDDEN,
      ],
      [
        'PUT without any params, snippets disabled',
        'PUT',
        'public project, snippets disabled',
        '/ID',
        {},
        403,
        FORBIDDEN,
      ],
      [
        'DELETE with a non-integer id, snippets disabled',
        'DELETE',
        'public project, snippets disabled',
        '/abc',
        undefined,
        403,
        FORBIDDEN,
      ],
    ];
    for (const [name, method, p, url, payload, status, body] of cases) {
      it(`anonymous ${name} -> ${status}`, async () => {
        const id = read.get(`${p}|public|root`)!.id;
        const res = await anon(method, p, url.replace('ID', String(id)), payload);
        assert.equal(res.statusCode, status, res.body);
        assert.deepEqual(res.json, body);
      });
    }
  });
});
