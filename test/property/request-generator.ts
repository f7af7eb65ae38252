// Requests a hostile or careless client would send, for every route the app declares (read from Fastify's
// own route table, so a new route is covered without anyone listing it): odd ids, NULs, nested and
// repeated parameters, every body content type, bodies that do not match it, and git paths with junk.
// Shared by test/property/fuzz-routes.test.ts (bounded, in npm test) and bench/fuzz.ts (long runs).
import http from 'node:http';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { digestToken } from '../../src/domain/tokens.ts';
import type { Store } from '../../src/storage/db/store.ts';
import { ROOT_TOKEN, type TestApp } from '../helper.ts';

export interface Route {
  /** As declared: `/api/v4/projects/:id/snippets/:snippet_id`, or `*` for the pages and git. */
  url: string;
  methods: string[];
}

/** Every route in Fastify's table (printRoutes prints it as a tree: each line one more piece of a path). */
export function declaredRoutes(app: FastifyInstance): Route[] {
  const routes: Route[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (.*?)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    stack.push(m[2]);
    if (m[3]) routes.push({ url: stack.join(''), methods: m[3].split(', ') });
  }
  return routes;
}

/** What the world the requests run in holds (fixture of fuzz-routes.test.ts). */
export interface World {
  projectId: number;
  projectPath: string;
  snippetId: number;
  groupPath: string;
  userId: number;
  rootToken: string;
  userToken: string;
}

/** The world the requests run in: a public group and project with a README, a snippet, a second user. */
export async function buildWorld(t: TestApp): Promise<World> {
  const group = await t.ok('POST', '/groups', ROOT_TOKEN, { name: 'fuzz', path: 'fuzz', visibility: 'public' }, 201);
  const project = await t.ok(
    'POST',
    '/projects',
    ROOT_TOKEN,
    { name: 'p', namespace_id: group.id, visibility: 'public', initialize_with_readme: true },
    201,
  );
  const snippet = await t.ok(
    'POST',
    `/projects/${project.id}/snippets`,
    ROOT_TOKEN,
    { title: 's', visibility: 'public', files: [{ file_path: 'a.rb', content: 'puts 1' }] },
    201,
  );
  const user = await t.user('fuzzer');
  return {
    projectId: project.id,
    projectPath: project.path_with_namespace,
    snippetId: snippet.id,
    groupPath: 'fuzz',
    userId: user.id,
    rootToken: ROOT_TOKEN,
    userToken: user.token,
  };
}

/**
 * Undoes what generated requests do to the world's own users (root blocked or no longer an administrator,
 * tokens revoked or expired), so that later requests still reach the code behind authentication. Through
 * the store: the API itself may be what the run broke.
 */
export async function restoreWorld(store: Store, world: World): Promise<void> {
  await store.kysely.updateTable('users').set({ state: 'active' }).where('id', 'in', [1, world.userId]).execute();
  await store.kysely.updateTable('users').set({ admin: 1 }).where('id', '=', 1).execute();
  await store.kysely
    .updateTable('personal_access_tokens')
    .set({ revoked: 0, expires_at: null })
    .where('token_digest', 'in', [digestToken(world.rootToken), digestToken(world.userToken)])
    .execute();
}

export interface FuzzRequest {
  method: string;
  /** Sent byte for byte as the request target. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

const ODD_IDS = ['0', '-1', '2147483648', '9'.repeat(30), 'abc', '1.5', '%00', 'a%2Fb', '%E2%82%AC', '%', '..', '1e3'];
const ODD_TEXT = [
  '',
  '%00',
  'a%00b',
  '..%2F..%2Fetc%2Fpasswd',
  ':(glob)a',
  '%3A%28glob%29x',
  'x'.repeat(300),
  '-',
  '%ZZ',
];
const QUERY_KEYS = [
  'page',
  'per_page',
  'ref',
  'path',
  'sudo',
  'search',
  'order_by',
  'sort',
  'visibility',
  'recursive',
  'private_token',
  'a[][b]',
  'page[]',
  'per_page[x]',
  'scope',
  'inline',
  'service',
];
const QUERY_VALUES = [
  '1',
  '0',
  '-1',
  '2147483648',
  '9'.repeat(30),
  'abc',
  '',
  '%00',
  'true',
  'x%5B%5D',
  'a'.repeat(500),
];
const FIELDS = [
  'title',
  'files',
  'content',
  'file_name',
  'visibility',
  'description',
  'name',
  'path',
  'namespace_id',
  'parent_id',
  'access_level',
  'user_id',
  'username',
  'email',
  'password',
  'branch',
  'commit_message',
  'file_template_project_id',
  'expires_at',
  'scopes',
  'default_branch',
  'snippets_access_level',
  'repository_access_level',
  'restricted_visibility_levels',
];

/** A value of any JSON type, odd ones often: NULs, huge numbers, nesting, long text. */
const jsonValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(null, true, false, 0, -1, 2147483648, 1e30, 1.5, '', '\u0000', 'a\u0000b', 'public', 'main'),
    fc.string({ maxLength: 20 }),
    fc.constant('x'.repeat(5000)),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('file_path', 'content', 'action', 'previous_path', 'x'), tie('value'), {
      maxKeys: 3,
    }),
  ),
})).value;

const fieldsObject = fc.dictionary(fc.constantFrom(...FIELDS), jsonValue, { maxKeys: 4 });

/** Form or query text from fields: Rack's nested names, repeated keys, odd encodings. */
const formText = fc
  .array(
    fc.tuple(
      fc.constantFrom(...FIELDS, 'files[][file_path]', 'files[][content]', 'a[b][c]'),
      fc.constantFrom(...QUERY_VALUES),
    ),
    {
      maxLength: 5,
    },
  )
  .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&'));

const body: fc.Arbitrary<{ type: string | null; text: string } | null> = fc.oneof(
  fc.constant(null),
  fieldsObject.map((o) => ({ type: 'application/json', text: JSON.stringify(o) })),
  fc.constantFrom('{', '[]', '7', '"x"', '{"title":', '\u0000').map((text) => ({ type: 'application/json', text })),
  formText.map((text) => ({ type: 'application/x-www-form-urlencoded', text })),
  fieldsObject.map((o) => ({
    type: 'multipart/form-data; boundary=B',
    text: `${Object.entries(o)
      .map(([k, v]) => `--B\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${JSON.stringify(v)}\r\n`)
      .join('')}--B--\r\n`,
  })),
  fc.constantFrom('0000', 'junk', '\u0000\u0001').map((text) => ({ type: 'text/plain', text })),
  fc.constant({
    type: 'application/x-git-upload-pack-request',
    text: '0032want 0000000000000000000000000000000000000000\n0000',
  }),
  fc.constant({ type: 'multipart/form-data', text: '--nope' }),
  fc.constant({ type: null, text: 'title=t' }),
);

/** A value for one `:param` of a route: one that exists, or an odd one. */
function paramValue(name: string, world: World): fc.Arbitrary<string> {
  const real: Record<string, string[]> = {
    id: [String(world.projectId), encodeURIComponent(world.projectPath), encodeURIComponent(world.groupPath)],
    snippet_id: [String(world.snippetId)],
    user_id: [String(world.userId)],
    ref: ['main', 'HEAD', 'v1'],
    file_path: ['README.md', 'a.rb', 'dir%2Fb.txt'],
    key: ['mit', 'Node', 'Ruby'],
    type: ['licenses', 'gitignores', 'dockerfiles', 'gitlab_ci_ymls', 'issues', 'merge_requests'],
    name: ['main'],
  };
  // Mostly real values, so that requests get past the lookups to the code behind them.
  return fc.oneof(
    { arbitrary: fc.constantFrom(...(real[name] ?? ['1'])), weight: 3 },
    { arbitrary: fc.constantFrom(...ODD_IDS, ...ODD_TEXT), weight: 1 },
  );
}

/** What fills a wildcard: page paths, git paths, raw paths, junk. */
function wildcardValue(world: World): fc.Arbitrary<string> {
  const p = world.projectPath;
  const s = world.snippetId;
  return fc.constantFrom(
    p,
    `${p}/-/snippets/${s}`,
    `${p}/-/snippets/${s}/raw`,
    `${p}/-/snippets/${s}/raw/main/a.rb`,
    `${p}/-/snippets/${s}.js`,
    `${p}/-/snippets`,
    `${p}/-/tree/main`,
    `${p}/-/blob/main/README.md`,
    `${p}.git/info/refs?service=git-upload-pack`,
    `${p}.git/info/refs?service=git-receive-pack`,
    `${p}.git/git-upload-pack`,
    `${p}.git/git-receive-pack`,
    `${p}/snippets/${s}.git/info/refs?service=git-upload-pack`,
    `${p}/snippets/${s}.git/git-receive-pack`,
    `${p}/snippets/2147483648.git/info/refs?service=git-upload-pack`,
    `${p}%00.git/info/refs`,
    world.groupPath,
    'root',
    'users/sign_in',
    'explore/snippets',
    'dashboard/snippets',
    '-/liveness',
    '-/snippetd/reset',
    '%00',
    'a'.repeat(300),
    'x/y/-/snippets/99999999999999999999',
  );
}

export function requestArbitrary(routes: Route[], world: World): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      route: fc.constantFrom(...routes),
      methodPick: fc.nat(),
      otherMethod: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND'),
      declared: fc.boolean(),
      seed: fc.nat(),
      query: fc.array(fc.tuple(fc.constantFrom(...QUERY_KEYS), fc.constantFrom(...QUERY_VALUES)), { maxLength: 3 }),
      token: fc.oneof(
        { arbitrary: fc.constant(world.rootToken), weight: 3 },
        { arbitrary: fc.constant(world.userToken), weight: 2 },
        { arbitrary: fc.constantFrom(null, 'garbage-token', ''), weight: 2 },
      ),
      sudo: fc.option(fc.constantFrom('1', 'root', '2147483648', 'nobody', ''), { freq: 5 }),
      body,
      params: fc.array(fc.integer(), { minLength: 4, maxLength: 4 }),
    })
    .chain((r) => {
      const names = [...r.route.url.matchAll(/:(\w+)/g)].map((m) => m[1]);
      const pieces = names.map((name) => paramValue(name, world));
      const wildcard = r.route.url.endsWith('*') ? wildcardValue(world) : fc.constant('');
      return fc.tuple(fc.tuple(...pieces), wildcard).map(([values, rest]) => {
        let path = r.route.url;
        names.forEach((name, i) => {
          path = path.replace(`:${name}`, values[i]);
        });
        // The catch-all `*` is declared without its leading slash.
        if (path.endsWith('*')) path = `${path.slice(0, -1)}/${rest}`.replace(/^\/\//, '/');
        const query = r.query.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&');
        if (query) path += (path.includes('?') ? '&' : '?') + query;
        const method = r.declared ? r.route.methods[r.methodPick % r.route.methods.length] : r.otherMethod;
        const headers: Record<string, string> = {};
        if (r.token !== null) headers['private-token'] = r.token;
        if (r.sudo !== null) headers.sudo = r.sudo;
        if (r.body?.type) headers['content-type'] = r.body.type;
        return { method, path, headers, body: method === 'GET' || method === 'HEAD' ? undefined : r.body?.text };
      });
    });
}

export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** Sends the request as it is (the path byte for byte); rejects when the connection drops without an answer. */
export function send(port: number, req: FuzzRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const r = http.request(
      { host: '127.0.0.1', port, method: req.method, path: req.path, headers: req.headers, agent },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text }),
        );
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.setTimeout(30_000, () => r.destroy(new Error('no answer within 30 s')));
    r.end(req.body);
  });
}

/** What is wrong with an answer, or null: never a 5xx, and an API refusal in JSON has GitLab's shape. */
export function problemWith(req: FuzzRequest, answer: Answer): string | null {
  if (answer.status >= 500) return `${answer.status} ${answer.text.slice(0, 200)}`;
  const api = req.path.startsWith('/api/');
  if (api && answer.status >= 400 && answer.contentType.startsWith('application/json') && req.method !== 'HEAD') {
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return `a ${answer.status} whose body is not JSON: ${answer.text.slice(0, 200)}`;
    }
    const keys = body && typeof body === 'object' ? Object.keys(body) : [];
    if (!keys.includes('message') && !keys.includes('error'))
      return `a ${answer.status} without message or error: ${answer.text.slice(0, 200)}`;
  }
  return null;
}
