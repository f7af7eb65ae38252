// Pushed repositories that made one anonymous request hold a real `snippetd serve` process (test/stall.ts):
// three small trees naming each other a hundred times (a million paths: a recursive tree listing took 4 s and
// 800 MiB, at 100^4 the server died out of memory), a merge of 5,000 parents listed with a path (the walk
// sorted its queue whole at every step), and a snippet revision changing ten files of 256 KiB of short lines
// (its lines were counted on the event loop, 1.1-1.8 s). Each is now answered with the loop kept free. And two
// that held others differently: a push whose body drips in (it held the repository's cache, so every clone of it
// waited until the request timeout), and a 16 MiB file asked raw by clients that never read (the file was held
// whole, inflated, about three times a client).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { processServer } from '../helper.ts';
import type { Spawned } from '../../scripts/spawn-server.ts';
import { assertCalm, currentRss, MiB, whileHostile } from '../stall.ts';
import { apiOf, gitWork } from './pushed-repositories.ts';

const TOKEN = 'repository-stalls-root-token';
const git = gitWork('snippetd-repository-stalls-');
const { repository } = git;
const GIT_ENV = git.env;
const work = git.dir;

const get = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
};

describe('pushed repositories that would hold the server', () => {
  let started: Awaited<ReturnType<typeof processServer>>;
  let server: Spawned;
  let project: { id: number; path_with_namespace: string };
  const api = apiOf(() => server, TOKEN);
  const push = (dir: string, branch: string) => git.push(server, TOKEN, dir, project.path_with_namespace, branch);

  before(async () => {
    started = await processServer('snippetd-repository-stalls-', TOKEN);
    server = started.server;
    project = await api('POST', '/projects', { path: 'hostile', visibility: 'public' });
  });
  after(async () => {
    await started?.stop();
    git.remove();
  });

  it('a tree of a million paths: its recursive listing is refused (400), memory and loop bounded', async () => {
    const names = Array.from({ length: 100 }, (_, i) => `e${i}`);
    const dir = path.join(work, 'bomb');
    execFileSync('git', ['init', '-q', '-b', 'main', dir], { env: GIT_ENV });
    const git = (args: string[], input?: string) =>
      execFileSync('git', args, { cwd: dir, env: GIT_ENV, input, encoding: 'utf8' }).trim();
    let entry = `100644 blob ${git(['hash-object', '-w', '--stdin'], 'x\n')}`;
    for (let level = 0; level < 3; level++)
      entry = `040000 tree ${git(['mktree'], names.map((n) => `${entry}\t${n}\n`).join(''))}`;
    git(['update-ref', 'refs/heads/main', git(['commit-tree', entry.split(' ')[2], '-m', 'a million paths'])]);
    push(dir, 'bomb');
    const { answer, calm } = await whileHostile(server, () =>
      get(`${server.url}/api/v4/projects/${project.id}/repository/tree?ref=bomb&recursive=true`),
    );
    assert.deepEqual(answer, { status: 400, text: '{"message":"Tree is too large: more than 50000 entries"}' });
    assertCalm(calm);
  });

  it('a tree of 9,900 directories four deep: its recursive listing keeps the loop free', async () => {
    // 49,500 entries, 39,600 distinct trees: each not in the object cache is a query and an inflate on the loop.
    const lines = ['commit refs/heads/main', 'committer T <t@example.com> 1700000000 +0000', 'data 4', 'deep'];
    for (let i = 0; i < 9900; i++) lines.push(`M 100644 inline d${i}/a/b/c/f${i}`, 'data 0', '');
    push(repository('deep', `${lines.join('\n')}\n`), 'deep');
    // It yielded every 1,000 entries walked, and the listing was sorted whole: 240 ms of the loop (helper-73).
    // Trees first, each kind in git's order (d0, d0/a, d0/a/b, d0/a/b/c, d1, …): page 3 of 2.
    const { answer, calm } = await whileHostile(server, () =>
      get(`${server.url}/api/v4/projects/${project.id}/repository/tree?ref=deep&recursive=true&per_page=2&page=3`),
    );
    assert.equal(answer.status, 200);
    assert.deepEqual(
      JSON.parse(answer.text).map((e: { path: string; type: string }) => [e.path, e.type]),
      [
        ['d1', 'tree'],
        ['d1/a', 'tree'],
      ],
    );
    // Now 70 ms on SQLite, 87-101 on PostgreSQL, here.
    assertCalm(calm, { stallMs: 150 });
  });

  it('a merge of 5,000 parents: its history through a path is listed, the loop kept free', async () => {
    const lines: string[] = [];
    for (let i = 1; i <= 5000; i++)
      lines.push(
        'reset refs/heads/side',
        'commit refs/heads/side',
        `mark :${i}`,
        `committer T <t@example.com> ${1_600_000_000 + i} +0000`,
        'data 1',
        'c',
        'M 100644 inline f',
        'data 2',
        `${i % 10}\n`,
      );
    lines.push('commit refs/heads/main', 'committer T <t@example.com> 1700000000 +0000', 'data 5', 'merge', 'from :1');
    for (let i = 2; i <= 5000; i++) lines.push(`merge :${i}`);
    lines.push('', 'reset refs/heads/side', 'from 0000000000000000000000000000000000000000', '');
    push(repository('octopus', lines.join('\n')), 'octopus');
    const { answer, calm } = await whileHostile(server, () =>
      get(`${server.url}/api/v4/projects/${project.id}/repository/commits?ref_name=octopus&path=f&per_page=1`),
    );
    assert.equal(answer.status, 200);
    assert.equal(JSON.parse(answer.text).length, 1);
    assertCalm(calm);
  });

  it('a revision changing ten files of 256 KiB of short lines: the revisions page keeps the loop free', async () => {
    // "a" lines (many alike) between lines of one side only: the costliest to count.
    const file = (seed: string) => {
      const parts: string[] = [];
      for (let i = 0, size = 0; size < 250_000; i++) {
        const line = `${seed}${i.toString(36)}\n`;
        parts.push('a\n', line);
        size += 2 + line.length;
      }
      return parts.join('');
    };
    const names = Array.from({ length: 10 }, (_, i) => `f${i}.txt`);
    const snippet = await api('POST', `/projects/${project.id}/snippets`, {
      title: 'revisions',
      visibility: 'public',
      files: names.map((file_path, i) => ({ file_path, content: file(`p${i}x`) })),
    });
    await api('PUT', `/projects/${project.id}/snippets/${snippet.id}`, {
      files: names.map((file_path, i) => ({ action: 'update', file_path, content: file(`q${i}y`) })),
    });
    const { answer, calm } = await whileHostile(server, () => get(`${snippet.web_url}/revisions`));
    assert.equal(answer.status, 200);
    assert.match(answer.text, /Update snippet/);
    assertCalm(calm);
  });

  it('a push whose body drips in: clones of the same repository go on meanwhile', async () => {
    const dir = repository(
      'drip',
      'commit refs/heads/main\ncommitter T <t@example.com> 1700000000 +0000\ndata 1\nd\nM 100644 inline f\ndata 2\nd\n\n',
    );
    push(dir, 'drip');
    // A receive-pack request that sends its first command and then next to nothing: the rest would take minutes.
    const url = new URL(`${server.url}/${project.path_with_namespace}.git/git-receive-pack`);
    const drip = http.request(url, {
      method: 'POST',
      auth: `root:${TOKEN}`,
      headers: { 'content-type': 'application/x-git-receive-pack-request', 'transfer-encoding': 'chunked' },
    });
    drip.on('error', () => {});
    const command = `${'0'.repeat(40)} ${'1'.repeat(40)} refs/heads/x\n`;
    drip.write(`${(command.length + 4).toString(16).padStart(4, '0')}${command}`);
    const dripping = setInterval(() => drip.write('0'), 1000);
    const pushes = path.join(started.env.SNIPPETD_DATA_DIR!, 'cache', 'git');
    const waiting = () => fs.readdirSync(pushes).flatMap((node) => fs.readdirSync(path.join(pushes, node, 'pushes')));
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(waiting().length, 1);
      const remote = `${server.url}/${project.path_with_namespace}.git`;
      const start = performance.now();
      execFileSync(
        'git',
        ['clone', '-q', '--bare', '--single-branch', '-b', 'drip', remote, path.join(work, 'drip-clone')],
        {
          env: GIT_ENV,
          timeout: 30_000,
        },
      );
      const cloneMs = performance.now() - start;
      assert.ok(cloneMs < 10_000, `the clone took ${Math.round(cloneMs)} ms beside the dripping push`);
      assert.equal(
        execFileSync('git', ['rev-parse', 'drip'], { cwd: path.join(work, 'drip-clone'), encoding: 'utf8' }).trim(),
        execFileSync('git', ['rev-parse', 'main'], { cwd: dir, encoding: 'utf8' }).trim(),
      );
    } finally {
      clearInterval(dripping);
      drip.destroy();
    }
    // The body received so far waited in a file of the server's own: gone once the client is.
    for (let i = 0; i < 50 && waiting().length; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(waiting(), []);
  });

  /**
   * A public snippet of `content` (16 MiB), asked raw through the API and the page by sixteen clients that never
   * read, holds neither the loop nor memory: the server reads a piece of it ahead for each, not the file (which
   * it held whole, about three times a client: at 40 MiB and eight clients the loop 480 ms and 272 MiB more).
   * On a server of its own, so that memory another test freed cannot hide what this one takes.
   */
  async function rawNeverRead(content: string) {
    const own = await processServer('snippetd-raw-never-read-', TOKEN);
    const stalled: http.IncomingMessage[] = [];
    /** The three raw URLs of a new public snippet of `text`. */
    const rawUrls = async (text: string) => {
      const res = await fetch(`${own.server.url}/api/v4/snippets`, {
        method: 'POST',
        headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({
          title: 'large',
          visibility: 'public',
          files: [{ file_path: 'large.txt', content: text }],
        }),
      });
      assert.equal(res.status, 201);
      const snippet = await res.json();
      return [
        `${own.server.url}/api/v4/snippets/${snippet.id}/raw`,
        `${own.server.url}/api/v4/snippets/${snippet.id}/files/main/large.txt/raw`,
        `${snippet.web_url}/raw/main/large.txt`,
      ];
    };
    const askAll = async (urls: string[], into: http.IncomingMessage[]) => {
      for (let i = 0; i < 16; i++)
        into.push(
          await new Promise<http.IncomingMessage>((resolve, reject) =>
            http.get(urls[i % urls.length], (res) => resolve(res.pause())).on('error', reject),
          ),
        );
    };
    try {
      const urls = await rawUrls(content);
      // The first such round grows the process once (on PostgreSQL by 50-65 MiB, which it keeps; a second
      // round adds 5-15). It is taken by a file of 2 MiB, whose round cannot also make room for this one's.
      const warmUp: http.IncomingMessage[] = [];
      await askAll(await rawUrls(content.slice(0, 2 * MiB)), warmUp);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.deepEqual(
        warmUp.map((r) => r.statusCode),
        Array(16).fill(200),
      );
      for (const r of warmUp) r.destroy();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const rssBefore = currentRss(own.server);
      const { calm } = await whileHostile(own.server, async () => {
        await askAll(urls, stalled);
        await new Promise((resolve) => setTimeout(resolve, 2000));
      });
      assert.deepEqual(
        stalled.map((r) => r.statusCode),
        Array(16).fill(200),
      );
      assertCalm(calm, { rssBytes: rssBefore + 64 * MiB });
      // Each answer whole and exact.
      const digest = crypto.createHash('sha256').update(content).digest('hex');
      for (const url of urls) {
        const answer = await fetch(url);
        assert.equal(answer.status, 200, url);
        assert.equal(answer.headers.get('content-length'), String(content.length), url);
        const body = Buffer.from(await answer.arrayBuffer());
        assert.equal(crypto.createHash('sha256').update(body).digest('hex'), digest, url);
      }
    } finally {
      for (const r of stalled) r.destroy();
      await own.stop();
    }
  }

  it('a 16 MiB file asked raw by sixteen clients that never read: the server holds a part of it each', () =>
    rawNeverRead(crypto.randomBytes(8 * MiB).toString('hex')));

  it('the same with 16 MiB of one letter, which deflates to 16 KiB: it is not inflated whole either', () =>
    rawNeverRead('a'.repeat(16 * MiB)));

  describe('thirty commits, branches and tags of messages near the largest a push takes (1 MiB)', () => {
    // A page of them held every message whole and wrote them all: a hundred made the commits list answer 180 MB
    // and held the loop 0.4-2.4 s (helper-96). A page's messages now come to at most 8 MiB; past that, each is
    // shown as GitLab shows a message too big to display, its subject and `--commit message is too big`.
    const COUNT = 30;
    // Quotes and backslashes, which JSON doubles, on short lines: the subject is the first of them.
    const body = (i: number) => `${`"line" \\ of commit ${i}\n`.repeat(40_000)}`;
    let wordy: { id: number; path_with_namespace: string };

    before(async () => {
      wordy = await api('POST', '/projects', { path: 'wordy', visibility: 'public' });
      const lines: string[] = [];
      for (let i = 0; i < COUNT; i++) {
        const message = body(i);
        lines.push('commit refs/heads/main', `committer T <t@example.com> ${1700000000 + i} +0000`);
        lines.push(`data ${Buffer.byteLength(message)}`, message);
        lines.push(`reset refs/heads/b${String(i).padStart(3, '0')}`, 'from refs/heads/main', '');
        lines.push(
          `tag t${String(i).padStart(3, '0')}`,
          'from refs/heads/main',
          'tagger T <t@example.com> 1700000000 +0000',
        );
        lines.push(`data ${Buffer.byteLength(message)}`, message);
      }
      const dir = repository('wordy', `${lines.join('\n')}\n`);
      const remote = new URL(`${server.url}/${wordy.path_with_namespace}.git`);
      remote.username = 'root';
      remote.password = TOKEN;
      execFileSync('git', ['push', '-q', remote.href, 'refs/heads/*:refs/heads/*', 'refs/tags/*:refs/tags/*'], {
        cwd: dir,
        env: GIT_ENV,
      });
    });

    const listed = async (list: string) => {
      const { answer, calm } = await whileHostile(server, () =>
        get(`${server.url}/api/v4/projects/${wordy.id}/repository/${list}?per_page=100`),
      );
      assert.equal(answer.status, 200);
      assertCalm(calm);
      return JSON.parse(answer.text);
    };
    /** How many messages are whole, and that every other is GitLab's too-big form of its own. */
    const wholeOf = (messages: string[], numberOf: (at: number) => number) => {
      let whole = 0;
      messages.forEach((message, at) => {
        const i = numberOf(at);
        if (message === body(i).replace(/\n$/, '')) whole++;
        else assert.equal(message, `"line" \\ of commit ${i}\n\n--commit message is too big`);
      });
      return whole;
    };

    it('the commits list: the newest messages whole up to 8 MiB, the rest too big to show', async () => {
      const commits = await listed('commits');
      assert.equal(commits.length, COUNT);
      const whole = wholeOf(
        commits.map((c: { message: string }) => c.message),
        (at) => COUNT - 1 - at,
      );
      assert.ok(whole >= 3 && whole <= 10, `${whole} messages whole`);
      assert.ok(
        commits.every((c: { title: string }, at: number) => c.title === `"line" \\ of commit ${COUNT - 1 - at}`),
      );
    });

    it("the branches list: each branch's commit, its message within the same budget", async () => {
      const branches = await listed('branches');
      // By name: b000 to b029, then main.
      assert.deepEqual(
        branches.map((b: { name: string }) => b.name),
        [...Array.from({ length: COUNT }, (_, i) => `b${String(i).padStart(3, '0')}`), 'main'],
      );
      const whole = wholeOf(
        branches.slice(0, COUNT).map((b: { commit: { message: string } }) => b.commit.message),
        (at) => at,
      );
      assert.ok(whole >= 3 && whole <= 10, `${whole} messages whole`);
    });

    it("the tags list: each tag's message and its commit's, within the same budget", async () => {
      const tags = await listed('tags');
      assert.equal(tags.length, COUNT);
      // Newest commit first (GitLab's default order); a tag's message is GitLab's whole notice when too big.
      const tagMessages = tags.map((t: { message: string }) => t.message);
      const wholeTags = tagMessages.filter((m: string, at: number) => {
        if (m === '--tag message is too big') return false;
        assert.equal(m, body(COUNT - 1 - at));
        return true;
      }).length;
      const wholeCommits = wholeOf(
        tags.map((t: { commit: { message: string } }) => t.commit.message),
        (at) => COUNT - 1 - at,
      );
      assert.ok(wholeTags >= 2 && wholeTags + wholeCommits <= 10, `${wholeTags} and ${wholeCommits} messages whole`);
    });

    it('a message of one line of carriage returns: the list reads its subject in linear time', async () => {
      // Its subject, without the line's trailing carriage returns, was cut with /\r+$/, which tries every start in
      // the run: 64 KiB held the loop 6 s, the 1 MiB a push takes would hold it for minutes.
      const message = `${'\r'.repeat(128 * 1024)}x`;
      const lines = ['commit refs/heads/main', 'committer T <t@example.com> 1700000000 +0000'];
      lines.push(`data ${message.length}`, message, '');
      const returns = await api('POST', '/projects', { path: 'returns', visibility: 'public' });
      git.push(server, TOKEN, repository('returns', `${lines.join('\n')}\n`), returns.path_with_namespace);
      const { answer, calm } = await whileHostile(server, () =>
        get(`${server.url}/api/v4/projects/${returns.id}/repository/commits`),
      );
      assert.equal(answer.status, 200);
      assert.equal(JSON.parse(answer.text)[0].message, message);
      assertCalm(calm);
    });

    it('one commit: its message whole, as GitLab shows any under 10 MB', async () => {
      const res = await get(`${server.url}/api/v4/projects/${wordy.id}/repository/commits/b021`);
      assert.equal(res.status, 200);
      assert.equal(JSON.parse(res.text).message, body(21).replace(/\n$/, ''));
    });
  });

  it('a push of 20,000 tags: the fetch after it keeps the loop free while the refs git wrote go', async () => {
    // git writes a file for each ref a push moves in the node's cache; the next refresh, which puts the database's
    // refs in packed-refs, removed those files one by one on the event loop: 10,000 held it 290 ms, 20,000 twice that.
    const tagged = await api('POST', '/projects', { path: 'many-tags', visibility: 'public' });
    const dir = repository(
      'many-tags',
      'commit refs/heads/main\ncommitter T <t@example.com> 1700000000 +0000\ndata 1\nt\n',
    );
    push(dir, 'main');
    git.push(server, TOKEN, dir, tagged.path_with_namespace, 'main');
    const id = execFileSync('git', ['rev-parse', 'main'], { cwd: dir, env: GIT_ENV, encoding: 'utf8' }).trim();
    const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
    const commands = Array.from({ length: 20_000 }, (_, i) =>
      pkt(`${'0'.repeat(40)} ${id} refs/tags/t${i}${i === 0 ? '\0report-status' : ''}\n`),
    );
    const header = Buffer.from([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, 0]); // an empty pack: PACK, 2, 0
    const pack = Buffer.concat([header, crypto.createHash('sha1').update(header).digest()]);
    const pushed = await fetch(`${server.url}/${tagged.path_with_namespace}.git/git-receive-pack`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`root:${TOKEN}`).toString('base64')}`,
        'content-type': 'application/x-git-receive-pack-request',
      },
      body: Buffer.concat([Buffer.from(`${commands.join('')}0000`), pack]),
    });
    assert.equal(pushed.status, 200);
    assert.match(await pushed.text(), /unpack ok\n[\s\S]*ok refs\/tags\/t19999\n/);
    const { answer, calm } = await whileHostile(server, () =>
      get(`${server.url}/${tagged.path_with_namespace}.git/info/refs?service=git-upload-pack`),
    );
    assert.equal(answer.status, 200);
    assert.equal(answer.text.match(/ refs\/tags\/t\d+/g)?.length, 20_000);
    assertCalm(calm);
  });
});
