// GET /projects/:id/repository/contributors (GitLab's lib/api/repositories.rb, Repository#contributors, Commit.order_by,
// Entities::Contributor): the authors of the newest non-merge commits, one per email. git log --no-merges is the
// oracle of who wrote what.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createTestApp, type TestApp } from '../helper.ts';

describe('repository contributors API', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, guest: U;
  let P: number;
  const contributors = (query = '', id = P) => `/projects/${id}/repository/contributors${query}`;
  const git = async (...args: string[]) =>
    execFileSync('git', ['--git-dir', (await t.gitDir('project', P))!, ...args], { encoding: 'utf8' }).trim();
  let n = 0;
  const commit = (branch: string, author: [string, string]) =>
    t.ok(
      'POST',
      `/projects/${P}/repository/commits`,
      alice.token,
      {
        branch,
        commit_message: `change ${++n}`,
        author_name: author[0],
        author_email: author[1],
        actions: [{ action: 'create', file_path: `f${n}.txt`, content: `${n}\n` }],
      },
      201,
    );
  /** Who wrote the newest non-merge commits at `ref`, counted by email, named by their newest named commit. */
  const oracle = async (ref: string) => {
    const rows = (await git('log', '--no-merges', '-n', '2000', '--format=%ae%x00%an', ref)).split('\n');
    const byEmail = new Map<string, { name: string; email: string; commits: number; additions: 0; deletions: 0 }>();
    for (const [email, name] of rows.map((r) => r.split('\0'))) {
      const c = byEmail.get(email) ?? { name: '', email, commits: 0, additions: 0, deletions: 0 };
      c.name ||= name;
      c.commits++;
      byEmail.set(email, c);
    }
    return [...byEmail.values()];
  };

  before(async () => {
    t = await createTestApp();
    [alice, guest] = [await t.user('alice'), await t.user('guest')];
    P = (await t.ok('POST', '/projects', alice.token, { path: 'repo', visibility: 'private' }, 201)).id;
    await t.ok('POST', `/projects/${P}/members`, alice.token, { user_id: guest.id, access_level: 10 }, 201);
    const ann: [string, string] = ['Ann', 'ann@example.com'];
    const bob: [string, string] = ['Bob', 'bob@example.com'];
    const cat: [string, string] = ['Cat', 'cat@example.com'];
    for (const author of [ann, bob, ann, cat, bob, ann]) await commit('main', author);
    // Bob's email with another name, newest: the contributor is named by it.
    await commit('main', ['Robert', 'bob@example.com']);
    await t.ok('POST', `/projects/${P}/repository/branches`, alice.token, { branch: 'side', ref: 'main~3' }, 201);
    await commit('side', ['Dan', 'dan@example.com']);
    // A merge by someone who wrote nothing else: merges are not counted.
    const dir = (await t.gitDir('project', P))!;
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: 'Mel',
      GIT_AUTHOR_EMAIL: 'mel@example.com',
      GIT_COMMITTER_NAME: 'Mel',
      GIT_COMMITTER_EMAIL: 'mel@example.com',
    };
    const merge = execFileSync(
      'git',
      ['--git-dir', dir, 'commit-tree', 'main^{tree}', '-p', 'main', '-p', 'side', '-m', 'merge'],
      { env, encoding: 'utf8' },
    ).trim();
    execFileSync('git', ['--git-dir', dir, 'update-ref', 'refs/heads/main', merge]);
    await t.importGitDir('project', P);
  });
  after(() => t.close());

  it('counts the authors of the non-merge commits by email, fewest commits first, equals newest first', async () => {
    const answer = await t.ok('GET', contributors(), alice.token, undefined, 200);
    const expected = (await oracle('main')).sort((a, b) => a.commits - b.commits);
    assert.deepEqual(answer, expected);
    assert.deepEqual(
      answer.map((c: { name: string; commits: number }) => [c.name, c.commits]),
      [
        ['Dan', 1],
        ['Cat', 1],
        ['Robert', 3],
        ['Ann', 3],
      ],
    );
    assert.equal(
      answer.some((c: { email: string }) => c.email === 'mel@example.com'),
      false,
    );
  });

  it('orders by name or email, either way, and pages', async () => {
    const all = await oracle('main');
    const by = (key: 'name' | 'email', sign: number) =>
      [...all].sort((a, b) => sign * (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0));
    assert.deepEqual(await t.ok('GET', contributors('?order_by=name'), alice.token, undefined, 200), by('name', 1));
    assert.deepEqual(
      await t.ok('GET', contributors('?order_by=email&sort=desc'), alice.token, undefined, 200),
      by('email', -1),
    );
    const page = await t.expect('GET', contributors('?order_by=name&per_page=3&page=2'), alice.token, undefined, 200);
    assert.deepEqual(page.json, by('name', 1).slice(3));
    assert.equal(page.headers['x-total'], '4');
    await t.fails('GET', contributors('?order_by=lines'), alice.token, undefined, 400, {
      error: 'order_by does not have a valid value',
    });
  });

  it('reads another ref; one that names no commit is 404, an empty repository has none', async () => {
    assert.deepEqual(
      await t.ok('GET', contributors('?ref=side'), alice.token, undefined, 200),
      (await oracle('side')).sort((a, b) => a.commits - b.commits),
    );
    await t.fails('GET', contributors('?ref=nowhere'), alice.token, undefined, 404, { message: '404 Not Found' });
    const empty = (await t.ok('POST', '/projects', alice.token, { path: 'empty' }, 201)).id;
    assert.deepEqual(await t.ok('GET', contributors('', empty), alice.token, undefined, 200), []);
    await t.fails('GET', contributors(), guest.token, undefined, 403, { message: '403 Forbidden' });
  });
});

describe('repository contributors of commits with large messages', () => {
  let t: TestApp;
  after(() => t?.close());

  it('holds no commit message while it counts: 90 of 900 KB each', async () => {
    t = await createTestApp();
    const alice = await t.user('alice');
    const P = (await t.ok('POST', '/projects', alice.token, { path: 'big' }, 201)).id;
    await t.ok(
      'POST',
      `/projects/${P}/repository/commits`,
      alice.token,
      { branch: 'main', commit_message: 'root', actions: [{ action: 'create', file_path: 'a', content: 'a' }] },
      201,
    );
    // A commit may be 1 MB; 1 MB of one letter packs into a few hundred bytes.
    const dir = (await t.gitDir('project', P))!;
    const stream = path.join(dir, '..', `fast-import-${P}`);
    const message = 'm'.repeat(900_000);
    const fd = fs.openSync(stream, 'w');
    for (let i = 0; i < 90; i++) {
      const from = i === 0 ? 'from refs/heads/main^0\n' : '';
      fs.writeSync(fd, `commit refs/heads/main\ncommitter A${i % 3} <a${i % 3}@e> ${1600000000 + i} +0000\n`);
      fs.writeSync(fd, `data ${message.length + 1}\n${message}\n${from}`);
    }
    fs.closeSync(fd);
    execFileSync('git', ['--git-dir', dir, 'fast-import', '--quiet'], {
      stdio: [fs.openSync(stream, 'r'), 'ignore', 'inherit'],
    });
    fs.rmSync(stream);
    await t.importGitDir('project', P);
    // What stays reachable while the request runs: a full collection, then the heap, at each turn of the loop.
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    let done = false;
    const sampling = (async () => {
      while (!done) {
        await new Promise((go) => setTimeout(go, 25));
        gc();
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }
    })();
    const answer = await t.ok('GET', `/projects/${P}/repository/contributors`, alice.token, undefined, 200);
    done = true;
    await sampling;
    assert.deepEqual(
      answer.map((c: { email: string; commits: number }) => [c.email, c.commits]),
      [
        ['alice@example.com', 1],
        ['a2@e', 30],
        ['a1@e', 30],
        ['a0@e', 30],
      ],
    );
    // The messages whole were 81 MB (and twice that as UTF-16 had they not been one byte a character).
    const grew = (peak - before) / 2 ** 20;
    assert.ok(grew < 40, `the heap grew ${grew.toFixed(0)} MB`);
  });
});
