// Read requests answer their token, project, membership and settings lookups from memory
// (src/storage/db/read-cache.ts). These tests change that data behind a node's back, from a second node
// on the same database and from a CLI process, and check that the very next request sees the change.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';
import { cliCommand } from '../../scripts/spawn-server.ts';
import { ReadCache } from '../../src/storage/db/read-cache.ts';

const NOT_FOUND_PROJECT = { message: '404 Project Not Found' };

describe('cached lookups are never served stale', () => {
  let a: TestApp;
  let b: TestApp;
  let alice: { id: number; username: string; token: string };

  before(async () => {
    a = await createTestApp();
    // A second node: its own process state and cache, the same database and repositories.
    b = await createTestApp({ databaseUrl: a.config.databaseUrl, dataDir: a.config.dataDir });
    alice = await a.user('alice');
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  const createProject = async (node: TestApp, path: string, visibility: string) =>
    (await node.ok('POST', '/projects', ROOT_TOKEN, { path, visibility }, 201)).id as number;

  it('a project made private on another node is hidden from the next anonymous read', async () => {
    const id = await createProject(a, 'goes-private', 'public');
    await a.ok('GET', `/projects/${id}/templates/licenses?per_page=1`, null, undefined, 200);
    await a.ok('GET', `/projects/root%2Fgoes-private`, null, undefined, 200);

    await b.ok('PUT', `/projects/${id}`, ROOT_TOKEN, { visibility: 'private' }, 200);

    assert.deepEqual(
      await a.ok('GET', `/projects/${id}/templates/licenses?per_page=1`, null, undefined, 404),
      NOT_FOUND_PROJECT,
    );
    assert.deepEqual(await a.ok('GET', `/projects/root%2Fgoes-private`, null, undefined, 404), NOT_FOUND_PROJECT);
  });

  it('a change on the same node is seen by its next read', async () => {
    const id = await createProject(a, 'same-node', 'public');
    await a.ok('GET', `/projects/${id}/templates/dockerfiles/Node`, null, undefined, 200);
    await a.ok('PUT', `/projects/${id}`, ROOT_TOKEN, { visibility: 'private' }, 200);
    assert.deepEqual(
      await a.ok('GET', `/projects/${id}/templates/dockerfiles/Node`, null, undefined, 404),
      NOT_FOUND_PROJECT,
    );
  });

  it('a caller renamed on another node gets a license with the new name on the next request', async () => {
    const id = await createProject(a, 'license-name', 'public');
    const url = `/projects/${id}/templates/licenses/mit`;
    assert.match((await a.ok('GET', url, alice.token, undefined, 200)).content, /Copyright \(c\) \d{4} ALICE\n/);
    assert.match((await a.ok('GET', url, alice.token, undefined, 200)).content, /Copyright \(c\) \d{4} ALICE\n/);

    await b.ok('PUT', `/users/${alice.id}`, ROOT_TOKEN, { name: 'Alice Renamed' }, 200);

    assert.match(
      (await a.ok('GET', url, alice.token, undefined, 200)).content,
      /Copyright \(c\) \d{4} Alice Renamed\n/,
    );
    assert.match(
      (await a.ok('GET', url, null, undefined, 200)).content,
      /Copyright \(c\) \d{4} \[fullname\]\n/,
      "not another caller's answer",
    );
  });

  /** A token of alice's of its own, which a test may revoke. */
  const newTokenOfAlice = (name: string) =>
    a.ok('POST', `/users/${alice.id}/personal_access_tokens`, ROOT_TOKEN, { name, scopes: ['api'] }, 201);

  it('a token revoked on another node is refused by the next request', async () => {
    const created = await newTokenOfAlice('short-lived');
    assert.equal((await a.ok('GET', '/user', created.token, undefined, 200)).username, 'alice');

    await b.ok('DELETE', `/personal_access_tokens/${created.id}`, ROOT_TOKEN, undefined, 204);

    const res = await a.api('GET', '/user', created.token);
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json, {
      error: 'invalid_token',
      error_description: 'Token was revoked. You have to re-authorize from the user.',
    });
  });

  it('a membership added or removed on another node applies to the next request', async () => {
    const id = await createProject(a, 'members-only', 'private');
    assert.deepEqual(
      await a.ok('GET', `/projects/${id}/templates/gitignores/Ruby`, alice.token, undefined, 404),
      NOT_FOUND_PROJECT,
    );

    await b.ok('POST', `/projects/${id}/members`, ROOT_TOKEN, { user_id: alice.id, access_level: 20 }, 201);
    assert.equal(
      (await a.ok('GET', `/projects/${id}/templates/gitignores/Ruby`, alice.token, undefined, 200)).name,
      'Ruby',
    );

    await b.ok('DELETE', `/projects/${id}/members/${alice.id}`, ROOT_TOKEN, undefined, 204);
    assert.deepEqual(
      await a.ok('GET', `/projects/${id}/templates/gitignores/Ruby`, alice.token, undefined, 404),
      NOT_FOUND_PROJECT,
    );
  });

  it('snippet writes (which look up caller and project through the cache) see a change from another node', async () => {
    const id = await createProject(a, 'snippet-writers', 'private');
    const files = [{ file_path: 'a.txt', content: 'a' }];
    const created = await newTokenOfAlice('writer');
    await b.ok('POST', `/projects/${id}/members`, ROOT_TOKEN, { user_id: alice.id, access_level: 30 }, 201);
    const snippet = await a.ok('POST', `/projects/${id}/snippets`, created.token, { title: 't', files }, 201);
    await a.ok('PUT', `/projects/${id}/snippets/${snippet.id}`, created.token, { title: 'u' }, 200);

    await b.ok('DELETE', `/projects/${id}/members/${alice.id}`, ROOT_TOKEN, undefined, 204);
    assert.deepEqual(
      await a.ok('PUT', `/projects/${id}/snippets/${snippet.id}`, created.token, { title: 'v' }, 404),
      NOT_FOUND_PROJECT,
    );
    assert.deepEqual(
      await a.ok('POST', `/projects/${id}/snippets`, created.token, { title: 't', files }, 404),
      NOT_FOUND_PROJECT,
    );

    await b.ok('POST', `/projects/${id}/members`, ROOT_TOKEN, { user_id: alice.id, access_level: 30 }, 201);
    await a.ok('PUT', `/projects/${id}/snippets/${snippet.id}`, created.token, { title: 'w' }, 200);
    await b.ok('DELETE', `/personal_access_tokens/${created.id}`, ROOT_TOKEN, undefined, 204);
    const res = await a.api('POST', `/projects/${id}/snippets`, created.token, { title: 't', files });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json.error_description, 'Token was revoked. You have to re-authorize from the user.');
  });

  it('an instance template project named on another node is used by the next request', async () => {
    const id = await createProject(a, 'uses-templates', 'public');
    const source = await createProject(a, 'instance-templates', 'public');
    await a.ok(
      'POST',
      `/projects/${source}/repository/files/Dockerfile%2FHouse.dockerfile`,
      ROOT_TOKEN,
      { branch: 'main', content: 'FROM scratch\n', commit_message: 'add' },
      201,
    );
    const before = await a.ok('GET', `/projects/${id}/templates/dockerfiles?per_page=100`, null, undefined, 200);
    assert.equal(
      before.some((t: { key: string }) => t.key === 'House'),
      false,
    );

    await b.ok('PUT', '/application/settings', ROOT_TOKEN, { file_template_project_id: source }, 200);
    try {
      const after = await a.ok('GET', `/projects/${id}/templates/dockerfiles?per_page=100`, null, undefined, 200);
      assert.deepEqual(after[0], { key: 'House', name: 'House' });
      assert.equal(after.length, before.length + 1);
    } finally {
      await b.ok('PUT', '/application/settings', ROOT_TOKEN, { file_template_project_id: null }, 200);
    }
  });

  it('a user created by the CLI (another process) is found by the next request', async () => {
    const sudo = () => a.request({ method: 'GET', url: '/api/v4/user', headers: { sudo: 'from-cli' } });
    const missing = await sudo();
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json, { message: "404 User with ID or username 'from-cli' Not Found" });

    const cli = spawnSync(
      ...cliCommand('users', 'create', '--username', 'from-cli', '--email', 'cli@example.com', '--name', 'From CLI'),
      {
        env: {
          ...process.env,
          SNIPPETD_DATA_DIR: a.config.dataDir,
          SNIPPETD_DATABASE_URL: a.config.databaseUrl,
          SNIPPETD_LOG_LEVEL: 'warn',
        },
        encoding: 'utf8',
      },
    );
    assert.equal(cli.status, 0, cli.stderr);

    const found = await sudo();
    assert.equal(found.statusCode, 200, found.body);
    assert.equal(found.json.username, 'from-cli');
  });
});

/** ReadCache.refresh as a promise. */
const refreshed = (cache: ReadCache) =>
  new Promise<void>((resolve, reject) => cache.refresh((error) => (error ? reject(error) : resolve())));

/** Epochs with this access epoch, the content epoch at 1 unless given. */
const at = (access: number, content = 1) => ({ access, content });

describe('ReadCache', () => {
  it('reads the epoch once for the requests of one event-loop turn, after all of them arrived', async () => {
    let reads = 0;
    const cache = new ReadCache(() => at(++reads));
    const turn = [refreshed(cache), refreshed(cache), refreshed(cache)];
    assert.equal(reads, 0, 'not read before the turn ends');
    await Promise.all(turn);
    assert.equal(reads, 1);
    await refreshed(cache);
    assert.equal(reads, 2, 'a later request gets a read of its own');
  });

  it('while a read is under way, requests arriving wait for the next read, started when it ends', async () => {
    const pending: ((epochs: ReturnType<typeof at>) => void)[] = [];
    const cache = new ReadCache(() => new Promise((resolve) => pending.push(resolve)));
    const first = refreshed(cache);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(pending.length, 1, 'the first read is under way');
    let laterDone = false;
    const later = [refreshed(cache), refreshed(cache)];
    void Promise.all(later).then(() => (laterDone = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(pending.length, 1, 'no second read while the first is under way');
    pending[0](at(1));
    await first;
    assert.equal(laterDone, false, 'a read that began before they arrived does not answer them');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(pending.length, 2, 'their read starts once the first ended');
    pending[1](at(1));
    await Promise.all(later);
  });

  it('hands a failed epoch read to every request that waited for it', async () => {
    const cache = new ReadCache(() => {
      throw new Error('database gone');
    });
    const results = await Promise.allSettled([refreshed(cache), refreshed(cache)]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    const pgLike = new ReadCache(() => Promise.reject(new Error('connection refused')));
    await assert.rejects(refreshed(pgLike), /connection refused/);
  });

  it('keeps nothing that finished loading after the epoch moved, and drops everything when it moves', async () => {
    let epoch = 1;
    const cache = new ReadCache(() => at(epoch));
    await refreshed(cache);
    let release!: (v: string) => void;
    const slow = cache.get('k', () => new Promise<string>((resolve) => (release = resolve)));
    epoch = 2;
    await refreshed(cache); // the epoch moved while 'k' was loading
    release('old');
    assert.equal(await slow, 'old');
    assert.equal(await cache.get('k', async () => 'new'), 'new', 'a value loaded across a move is not kept');
    assert.equal(await cache.get('k', async () => 'newer'), 'new', 'a value loaded within one epoch is kept');
    epoch = 3;
    await refreshed(cache);
    assert.equal(await cache.get('k', async () => 'newest'), 'newest');
  });

  it('a move of the content epoch drops the answers but not the lookups; a move of the access epoch both', async () => {
    let epochs = at(1, 1);
    const cache = new ReadCache(() => epochs);
    /** An answer asked by a request whose epochs were read just now. */
    const answer = async (key: string, value: string) => {
      await refreshed(cache);
      return cache.answer(key, async () => value, { since: cache.generation });
    };
    await refreshed(cache);
    await cache.get('lookup', async () => 'lookup 1');
    await answer('answer', 'answer 1');
    epochs = at(1, 2);
    await refreshed(cache);
    assert.equal(await cache.get('lookup', async () => 'lookup 2'), 'lookup 1');
    assert.equal(await answer('answer', 'answer 2'), 'answer 2');
    assert.equal(await answer('answer', 'answer 2 again'), 'answer 2');
    epochs = at(2, 2);
    await refreshed(cache);
    assert.equal(await cache.get('lookup', async () => 'lookup 3'), 'lookup 3');
    assert.equal(await answer('answer', 'answer 3'), 'answer 3');
    // An answer loading while only the content epoch moves is not kept either.
    await refreshed(cache);
    let release!: (v: string) => void;
    const slow = cache.answer('slow', () => new Promise<string>((resolve) => (release = resolve)), {
      since: cache.generation,
    });
    epochs = at(2, 3);
    await refreshed(cache);
    release('old');
    assert.equal(await slow, 'old');
    assert.equal(await answer('slow', 'new'), 'new');
  });

  it('keeps no answer of a request whose epochs moved before its load began (what it read before, e.g. its caller, may be old)', async () => {
    let epochs = at(1, 1);
    const cache = new ReadCache(() => epochs);
    await refreshed(cache);
    const since = cache.generation; // this request's epochs were read; it looks up its caller, then pauses
    epochs = at(2, 1); // the caller lost an access; another request sees the move
    await refreshed(cache);
    assert.equal(
      await cache.answer('a', async () => 'built from the old caller', { since }),
      'built from the old caller',
    );
    assert.equal(
      await cache.answer('a', async () => 'built again', { since: cache.generation }),
      'built again',
      'what the first request built was not kept',
    );
  });

  it('keeps a value only when its rules allow, and drops everything past the byte budget', async () => {
    const cache = new ReadCache(() => at(1));
    await refreshed(cache);
    const notKept = { keep: (v: string) => v !== 'from git' };
    assert.equal(await cache.get('g', async () => 'from git', notKept), 'from git');
    assert.equal(await cache.get('g', async () => 'again', notKept), 'again', 'a refused value is loaded again');

    const heavy = { bytes: () => 20 * 1024 * 1024 };
    await cache.get('small', async () => 'small');
    await cache.get('a', async () => 'first', heavy);
    assert.equal(await cache.get('a', async () => 'reloaded', heavy), 'first');
    await cache.get('b', async () => 'second', heavy); // 40 MiB would be over the 32 MiB budget: everything goes first
    assert.equal(await cache.get('a', async () => 'reloaded', heavy), 'reloaded');
    assert.equal(await cache.get('small', async () => 'small again'), 'small again');
  });

  it('keeps no key over 1,024 characters, and counts the others against the byte budget', async () => {
    const cache = new ReadCache(() => at(1));
    await refreshed(cache);
    // A path from a URL may be 16 KB (V8 hashes such a string by its length alone: kept, they all collide).
    const long = `project-path:${'x'.repeat(16 * 1024)}`;
    let loads = 0;
    for (let i = 0; i < 3; i++) await cache.get(long, async () => ++loads);
    assert.equal(loads, 3);
    // 40 keys of 1,000 characters and a 32 MiB value: the keys count, so the budget is passed and all goes.
    await cache.get('small', async () => 'small');
    for (let i = 0; i < 40; i++) await cache.get(String(i).padStart(1000, 'k'), async () => i);
    await cache.get('heavy', async () => 'heavy', { bytes: () => 32 * 1024 * 1024 - 30_000 });
    assert.equal(await cache.get('small', async () => 'small again'), 'small again');
  });

  it('keeps nothing while the epoch cannot be read', async () => {
    const cache = new ReadCache(() => null);
    await refreshed(cache);
    assert.equal(await cache.get('k', async () => 1), 1);
    assert.equal(await cache.get('k', async () => 2), 2);
  });

  it('hands out frozen values, so a request cannot change what the next one reads', async () => {
    const cache = new ReadCache(() => at(1));
    await refreshed(cache);
    const value = await cache.get('k', async () => ({ project: { id: 1 } }));
    assert.throws(() => {
      (value.project as { id: number }).id = 2;
    }, TypeError);
  });
});
