// A snippet's revisions pages (beyond GitLab, docs/pages.md): every commit newest first with the files it
// changed, paged; each commit's diff, highlighted, renames as renames, binary files and large diffs said so,
// raw links at that revision; project and personal snippets alike, commits made through the API and pushed
// with git; hidden from whoever may not see the snippet (sent to sign in, or 404 when signed in).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createTestApp, gitLogChanges, ROOT_TOKEN, runGit, signInCookie, type TestApp } from '../helper.ts';

const PASSWORD = 'correct horse battery';
const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
/** What a reader sees of some HTML: its text, tags gone, blanks squeezed. */
const textOf = (markup: string) =>
  markup
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e])
    .replace(/\s+/g, ' ')
    .trim();

interface ListedRevision {
  href: string;
  subject: string;
  meta: string;
  changes: string[];
}

/** The revisions a list page shows, in its order. */
function listed(body: string): ListedRevision[] {
  return [...body.matchAll(/<li class="revision">([\s\S]*?)\n<\/li>/g)].map(([, item]) => ({
    href: /<h2><a href="([^"]+)">/.exec(item)![1],
    subject: textOf(/<h2>([\s\S]*?)<\/h2>/.exec(item)![1]),
    meta: textOf(/<p class="meta">([\s\S]*?)<\/p>/.exec(item)![1]),
    changes: [...item.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => textOf(m[1])),
  }));
}

interface ShownFile {
  header: string;
  raw: string;
  /** [line before, line after, marker, text] per row; the note when the file's lines are not shown. */
  rows: string[][] | string;
}

/** The files a diff page shows, in its order. */
function shownFiles(body: string): ShownFile[] {
  return [...body.matchAll(/<section class="file diff-file"[^>]*>([\s\S]*?)<\/section>/g)].map(([, section]) => {
    const header = /<header class="file-header">([\s\S]*?)<\/header>/.exec(section)![1];
    const table = /<tbody>([\s\S]*?)<\/tbody>/.exec(section);
    return {
      header: textOf(header.replace(/<nav[\s\S]*<\/nav>/, '')),
      raw: /<nav class="file-actions"[^>]*><a href="([^"]+)">/.exec(header)![1],
      rows: table
        ? [...table[1].matchAll(/<tr class="([a-z]+)">([\s\S]*?)<\/tr>/g)].map(([, type, row]) => {
            const cells = [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => c[1]);
            return cells.length === 2
              ? ['', '', type, textOf(cells[1])]
              : [
                  textOf(cells[0]),
                  textOf(cells[1]),
                  type,
                  textOf(cells[2].replace(/<span class="marker"[^>]*>.<\/span>/, '')),
                ];
          })
        : textOf(section.slice(section.indexOf('</header>'))),
    };
  });
}

describe('snippet revisions pages', () => {
  let t: TestApp;
  let host: string;
  let work: string;
  let alice: any;
  let aliceToken: string;
  let aliceCookie: string;
  let bobCookie: string;
  let project: any;
  let privateProject: any;

  const view = (url: string, cookie?: string) =>
    t.request({
      method: 'GET',
      url: url.startsWith('http') ? pathOf(url) : url,
      token: null,
      headers: cookie ? { cookie } : {},
    });
  /** A page that must open: 200, HTML, the pages' policy. */
  const page = async (url: string, cookie?: string) => {
    const res = await view(url, cookie);
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(String(res.headers['content-security-policy']), /^default-src 'none'; /);
    assert.equal(res.headers['cache-control'], 'private, no-store');
    return res.body;
  };
  /**
   * What a page hidden from the viewer answers: a visitor not signed in is sent to sign in and back, as
   * GitLab does; a signed-in user who may not see it gets the 404 page, which names nothing of it.
   */
  const hidden = async (url: string, cookie?: string) => {
    const res = await view(url, cookie);
    const path = url.startsWith('http') ? pathOf(url) : url;
    if (!cookie) {
      assert.equal(res.statusCode, 302, url);
      assert.equal(res.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent(path)}`, url);
      return;
    }
    assert.equal(res.statusCode, 404, url);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(res.body, /<h1>Page not found<\/h1>/);
    assert.doesNotMatch(res.body, /p\.txt|q\.txt|Initial commit/);
  };
  /** The commits of a snippet's default branch, newest first, as git lists them. */
  const gitLog = async (snippetId: number) => {
    const dir = (await t.gitDir('snippet', snippetId))!;
    const log = await runGit(['--git-dir', dir, 'log', '--format=%H', 'HEAD']);
    return log.stdout.trim().split('\n');
  };

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    host = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-revisions-'));
    alice = await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'alice',
      email: 'alice@example.com',
      name: 'Alice Liddell',
      password: PASSWORD,
    });
    aliceToken = (
      await t.must('POST', `/users/${alice.id}/personal_access_tokens`, ROOT_TOKEN, { name: 'git', scopes: ['api'] })
    ).token;
    await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'bob',
      email: 'bob@example.com',
      name: 'Bob',
      password: PASSWORD,
    });
    project = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'tools', visibility: 'public' });
    privateProject = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'secret', visibility: 'private' });
    for (const p of [project, privateProject])
      await t.must('POST', `/projects/${p.id}/members`, ROOT_TOKEN, { user_id: alice.id, access_level: 30 });
    aliceCookie = await signInCookie(t, 'alice', PASSWORD);
    bobCookie = await signInCookie(t, 'bob', PASSWORD);
  });
  after(async () => {
    await t.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("lists a project snippet's revisions with their files, and shows each diff with renames as renames", async () => {
    const snippet = await t.must('POST', `/projects/${project.id}/snippets`, aliceToken, {
      title: 'Tools <b>',
      visibility: 'public',
      files: [
        { file_path: 'run.js', content: 'const a = 1;\n/* two\nlines */\nfunction f() { return "x"; }\n' },
        { file_path: 'notes.txt', content: 'one\ntwo\nthree\n' },
      ],
    });
    await t.must('PUT', `/projects/${project.id}/snippets/${snippet.id}`, aliceToken, {
      files: [
        {
          action: 'update',
          file_path: 'run.js',
          content: 'const a = 2;\n/* two\nlines */\nfunction f() { return "y"; }\n',
        },
        { action: 'move', previous_path: 'notes.txt', file_path: 'renamed.txt', content: 'one\ntwo\nthree\nfour\n' },
      ],
    });
    await t.must('PUT', `/projects/${project.id}/snippets/${snippet.id}`, aliceToken, {
      files: [{ action: 'delete', file_path: 'renamed.txt' }],
    });
    const [third, second, first] = await gitLog(snippet.id);
    const web = snippet.web_url as string;
    assert.equal(pathOf(web), `/${project.path_with_namespace}/-/snippets/${snippet.id}`);

    // The snippet page links to its revisions.
    assert.ok((await page(web)).includes(`<a href="${web}/revisions">Revisions</a>`));

    const list = await page(`${web}/revisions`);
    assert.match(list, /<title>Revisions · Tools &lt;b&gt; · snippetd<\/title>/);
    assert.ok(list.includes(`<p class="meta">of <a href="${web}">Tools &lt;b&gt;</a></p>`));
    const today = new Date().toISOString().slice(0, 10);
    const revisions = listed(list).map((r) => ({ ...r, meta: r.meta.replace(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/, 'T') }));
    assert.ok(list.includes(`<time datetime="${today}`));
    assert.deepEqual(revisions, [
      {
        href: `${web}/revisions/${third}`,
        subject: 'Update snippet',
        meta: `Alice Liddell · T · ${third.slice(0, 8)}`,
        changes: ['deleted renamed.txt +0 −4'],
      },
      {
        href: `${web}/revisions/${second}`,
        subject: 'Update snippet',
        meta: `Alice Liddell · T · ${second.slice(0, 8)}`,
        // In git's order: by path, a rename by its new one.
        changes: ['renamed (73% similar) notes.txt → renamed.txt +1 −0', 'modified run.js +2 −2'],
      },
      {
        href: `${web}/revisions/${first}`,
        subject: 'Initial commit',
        meta: `Alice Liddell · T · ${first.slice(0, 8)}`,
        changes: ['added notes.txt +3 −0', 'added run.js +4 −0'],
      },
    ]);
    assert.doesNotMatch(list, /rel="(prev|next)"/);

    const diff = await page(`${web}/revisions/${second}`);
    assert.match(diff, /<h1>Update snippet<\/h1>/);
    assert.ok(diff.includes(`<code>${second}</code>`));
    assert.ok(diff.includes(`<a href="${web}">Tools &lt;b&gt;</a>`));
    assert.ok(diff.includes(`<a href="${web}/revisions">All revisions</a>`));
    assert.ok(
      diff.includes(`<a href="${web}/revisions/${first}">Previous revision <code>${first.slice(0, 8)}</code></a>`),
    );
    assert.match(
      diff,
      /<p class="summary">2 files changed, <span class="plus">\+3<\/span> <span class="minus">−2<\/span><\/p>/,
    );
    assert.deepEqual(shownFiles(diff), [
      {
        header: 'notes.txt → renamed.txt renamed (73% similar) +1 −0',
        raw: `${web}/raw/${second}/renamed.txt`,
        rows: [
          ['', '', 'hunk', '@@ -1,3 +1,4 @@'],
          ['1', '1', 'context', 'one'],
          ['2', '2', 'context', 'two'],
          ['3', '3', 'context', 'three'],
          ['', '4', 'added', 'four'],
        ],
      },
      {
        header: 'run.js modified +2 −2',
        raw: `${web}/raw/${second}/run.js`,
        rows: [
          ['', '', 'hunk', '@@ -1,4 +1,4 @@'],
          ['1', '', 'deleted', 'const a = 1;'],
          ['', '1', 'added', 'const a = 2;'],
          ['2', '2', 'context', '/* two'],
          ['3', '3', 'context', 'lines */'],
          ['4', '', 'deleted', 'function f() { return "x"; }'],
          ['', '4', 'added', 'function f() { return "y"; }'],
        ],
      },
    ]);
    // Highlighted by the file's name, each side as one text: the comment's second line is still a comment.
    assert.ok(
      diff.includes('<del><span class="hljs-keyword">const</span> a = <span class="hljs-number">1</span>;</del>'),
    );
    assert.ok(diff.includes('<span class="hljs-comment">lines */</span>'));

    // Raw links open the file as it was at that revision; a deleted file's, as it was before.
    const raw = await view(`${web}/raw/${first}/run.js`);
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.body, 'const a = 1;\n/* two\nlines */\nfunction f() { return "x"; }\n');
    assert.equal(raw.headers['content-type'], 'text/plain; charset=utf-8');
    const deleted = shownFiles(await page(`${web}/revisions/${third}`));
    assert.equal(deleted[0].header, 'renamed.txt deleted +0 −4');
    assert.equal(deleted[0].raw, `${web}/raw/${second}/renamed.txt`);
    assert.equal((await view(deleted[0].raw)).body, 'one\ntwo\nthree\nfour\n');

    // The first revision is against nothing.
    const initial = await page(`${web}/revisions/${first}`);
    assert.match(
      initial,
      /2 files changed, <span class="plus">\+7<\/span> <span class="minus">−0<\/span> \(the first revision\)/,
    );
    assert.doesNotMatch(initial, /Previous revision/);
    // A branch name or an abbreviated id names a commit too.
    assert.deepEqual(shownFiles(await page(`${web}/revisions/${second.slice(0, 10)}`)), shownFiles(diff));
  });

  it("takes an abbreviated id of 7 hex digits at least, as GitLab's commit pages: 4 were a guess away from any commit", async () => {
    // A commit no branch reaches any more (the history force-pushed away) stays in the repository; with ids of 4
    // digits taken, 65,536 requests listed every such commit of a public snippet to anyone, with its diff.
    const snippet = await t.must('POST', '/snippets', aliceToken, {
      title: 'abbreviated',
      visibility: 'public',
      files: [{ file_path: 'secret.txt', content: 'a secret\n' }],
    });
    const web = snippet.web_url as string;
    const [first] = await gitLog(snippet.id);
    const dir = path.join(work, 'abbreviated');
    assert.equal(
      (await runGit(['clone', `http://oauth2:${aliceToken}@${host}/snippets/${snippet.id}.git`, dir])).code,
      0,
    );
    assert.equal((await runGit(['checkout', '-q', '--orphan', 'clean'], dir)).code, 0);
    fs.rmSync(path.join(dir, 'secret.txt'));
    fs.writeFileSync(path.join(dir, 'public.txt'), 'nothing to see\n');
    await runGit(['add', '-A'], dir);
    assert.equal((await runGit(['commit', '-qm', 'Clean history'], dir)).code, 0);
    const push = await runGit(['push', '-f', 'origin', 'clean:main'], dir);
    assert.equal(push.code, 0, push.stderr);
    const [clean] = await gitLog(snippet.id);
    // Nor with ancestry steps after it (`abcd^0` is the commit abcd names).
    for (const id of [first, clean])
      for (const ref of [id.slice(0, 4), id.slice(0, 6), `${id.slice(0, 4)}^0`, `${id.slice(0, 6)}~0`])
        await hidden(`${web}/revisions/${encodeURIComponent(ref)}`, bobCookie);
    assert.match(await page(`${web}/revisions/${clean.slice(0, 7)}`, bobCookie), /<h1>Clean history<\/h1>/);
    assert.match(await page(`${web}/revisions/main`, bobCookie), /<h1>Clean history<\/h1>/);
  });

  it("pages a personal snippet's revisions, 20 a page, newest first", async () => {
    const snippet = await t.must('POST', '/snippets', aliceToken, {
      title: 'counter',
      visibility: 'public',
      files: [{ file_path: 'n.txt', content: '0\n' }],
    });
    for (let i = 1; i <= 44; i++)
      await t.must('PUT', `/snippets/${snippet.id}`, aliceToken, {
        files: [{ action: 'update', file_path: 'n.txt', content: `${i}\n` }],
      });
    const commits = await gitLog(snippet.id);
    assert.equal(commits.length, 45);
    const web = snippet.web_url as string;
    assert.equal(pathOf(web), `/-/snippets/${snippet.id}`);
    const pages = [];
    for (const n of [1, 2, 3]) pages.push(await page(`${web}/revisions${n === 1 ? '' : `?page=${n}`}`));
    assert.deepEqual(
      pages.map((p) => listed(p).map((r) => r.href)),
      [commits.slice(0, 20), commits.slice(20, 40), commits.slice(40)].map((ids) =>
        ids.map((id) => `${web}/revisions/${id}`),
      ),
    );
    assert.deepEqual(listed(pages[0])[0].changes, ['modified n.txt +1 −1']);
    assert.deepEqual(listed(pages[2]).at(-1)!.changes, ['added n.txt +1 −0']);
    const links = (p: string) =>
      [...p.matchAll(/<a rel="(prev|next)" href="([^"]+)">(\w+)<\/a>/g)].map((m) => m.slice(1));
    assert.deepEqual(links(pages[0]), [['next', `${web}/revisions?page=2`, 'Older']]);
    assert.deepEqual(links(pages[1]), [
      ['prev', `${web}/revisions?page=1`, 'Newer'],
      ['next', `${web}/revisions?page=3`, 'Older'],
    ]);
    assert.deepEqual(links(pages[2]), [['prev', `${web}/revisions?page=2`, 'Newer']]);
    const beyond = await page(`${web}/revisions?page=4`);
    assert.deepEqual(listed(beyond), []);
    assert.match(beyond, /<p class="empty">No revisions on this page\./);
    // Not a page number: the first page.
    assert.deepEqual(listed(await page(`${web}/revisions?page=x`)), listed(pages[0]));
    assert.deepEqual(listed(await page(`${web}/revisions?page=999999999999`)), []);

    const diff = shownFiles(await page(`${web}/revisions/${commits[0]}`));
    assert.deepEqual(diff, [
      {
        header: 'n.txt modified +1 −1',
        raw: `${web}/raw/${commits[0]}/n.txt`,
        rows: [
          ['', '', 'hunk', '@@ -1 +1 @@'],
          ['1', '', 'deleted', '43'],
          ['', '1', 'added', '44'],
        ],
      },
    ]);
  });

  it('shows a pushed commit as any other: author, message, a binary file and a rename without changes', async () => {
    const snippet = await t.must('POST', '/snippets', aliceToken, {
      title: 'pushed',
      visibility: 'internal',
      files: [{ file_path: 'a.txt', content: 'alpha\n' }],
    });
    const web = snippet.web_url as string;
    // Seen before the push: the page after it still shows the push (pages are kept by the branch's commit).
    assert.deepEqual(
      listed(await page(`${web}/revisions`, bobCookie)).map((r) => r.subject),
      ['Initial commit'],
    );
    const dir = path.join(work, 'pushed');
    const clone = await runGit(['clone', `http://oauth2:${aliceToken}@${host}/snippets/${snippet.id}.git`, dir]);
    assert.equal(clone.code, 0, clone.stderr);
    assert.equal((await runGit(['mv', 'a.txt', 'b.txt'], dir)).code, 0);
    fs.writeFileSync(path.join(dir, 'logo.bin'), Buffer.from([0, 1, 2, 3, 0, 255]));
    await runGit(['add', '.'], dir);
    assert.equal((await runGit(['commit', '-m', 'Pushed <change>\n\nWith a body.'], dir)).code, 0);
    const push = await runGit(['push', 'origin', 'HEAD:main'], dir);
    assert.equal(push.code, 0, push.stderr);
    const [pushed] = await gitLog(snippet.id);
    assert.equal(pushed, (await runGit(['rev-parse', 'HEAD'], dir)).stdout.trim());

    // Internal: any signed-in user, not a visitor.
    await hidden(`${web}/revisions`);
    await hidden(`${web}/revisions/${pushed}`);
    const [top] = listed(await page(`${web}/revisions`, bobCookie));
    assert.deepEqual(
      { ...top, meta: top.meta.replace(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/, 'T') },
      {
        href: `${web}/revisions/${pushed}`,
        subject: 'Pushed <change>',
        meta: `Pusher · T · ${pushed.slice(0, 8)}`,
        changes: ['renamed a.txt → b.txt +0 −0', 'added logo.bin binary'],
      },
    );
    const diff = await page(`${web}/revisions/${pushed}`, bobCookie);
    assert.match(diff, /<h1>Pushed &lt;change&gt;<\/h1>/);
    assert.ok(diff.includes('<pre class="message">With a body.</pre>'));
    assert.deepEqual(shownFiles(diff), [
      { header: 'a.txt → b.txt renamed +0 −0', raw: `${web}/raw/${pushed}/b.txt`, rows: 'Renamed without changes.' },
      {
        header: 'logo.bin added binary',
        raw: `${web}/raw/${pushed}/logo.bin`,
        rows: 'Binary file. Download it.',
      },
    ]);
    const bin = await view(`${web}/raw/${pushed}/logo.bin`, bobCookie);
    assert.equal(bin.statusCode, 200);
    assert.deepEqual(bin.rawPayload, Buffer.from([0, 1, 2, 3, 0, 255]));
  });

  it("shows a commit of 1,200 files pushed between others: git's list of them read over many chunks", async () => {
    const snippet = await t.must('POST', '/snippets', aliceToken, {
      title: 'many files',
      visibility: 'internal',
      files: [{ file_path: 'a.txt', content: 'alpha\n' }],
    });
    const web = snippet.web_url as string;
    const dir = path.join(work, 'many-files');
    assert.equal(
      (await runGit(['clone', `http://oauth2:${aliceToken}@${host}/snippets/${snippet.id}.git`, dir])).code,
      0,
    );
    const names = Array.from({ length: 1200 }, (_, i) => `${String(i).padStart(4, '0')}-${'n'.repeat(60)}.txt`);
    for (const name of names) fs.writeFileSync(path.join(dir, name), `${name}\n`);
    await runGit(['add', '.'], dir);
    assert.equal((await runGit(['commit', '-qm', 'Many files'], dir)).code, 0);
    await runGit(['rm', '-q', ...names.slice(0, 600)], dir);
    await runGit(['rm', '-q', ...names.slice(600)], dir);
    assert.equal((await runGit(['commit', '-qm', 'Fewer files'], dir)).code, 0);
    const push = await runGit(['push', '-q', 'origin', 'HEAD:main'], dir);
    assert.equal(push.code, 0, push.stderr);
    const [, many] = await gitLog(snippet.id);
    const diff = await page(`${web}/revisions/${many}`, bobCookie);
    assert.match(diff, /<h1>Many files<\/h1>/);
    assert.ok(diff.includes('This revision changes more than can be displayed: some files are not shown.'));
    const shown = shownFiles(diff);
    assert.equal(shown.length, 1000);
    assert.deepEqual(shown[0].header, `${names[0]} added +1 −0`);
    assert.deepEqual(shown[999].header, `${names[999]} added +1 −0`);
  });

  it('cuts a long subject at 300 characters and shows a long message body whole, escaped', async () => {
    const snippet = await t.must('POST', '/snippets', aliceToken, {
      title: 'long message',
      visibility: 'internal',
      files: [{ file_path: 'a.txt', content: 'alpha\n' }],
    });
    const web = snippet.web_url as string;
    const dir = path.join(work, 'long-message');
    assert.equal(
      (await runGit(['clone', `http://oauth2:${aliceToken}@${host}/snippets/${snippet.id}.git`, dir])).code,
      0,
    );
    fs.writeFileSync(path.join(dir, 'a.txt'), 'beta\n');
    // 900 KB: a subject of 600,000 characters and a body of 300,000, under the 1 MB a commit may be.
    const subject = `${'<s>'.repeat(200_000)}`;
    const body = `${'<b>'.repeat(100_000)}`;
    fs.writeFileSync(path.join(work, 'long-message.txt'), `${subject}\n\n${body}\n`);
    assert.equal((await runGit(['commit', '-qaF', path.join(work, 'long-message.txt')], dir)).code, 0);
    assert.equal((await runGit(['push', '-q', 'origin', 'HEAD:main'], dir)).code, 0);
    const [pushed] = await gitLog(snippet.id);
    const cut = `${'&lt;s&gt;'.repeat(100)}…`;
    const list = await page(`${web}/revisions`, bobCookie);
    assert.ok(list.includes(`<h2><a href="${web}/revisions/${pushed}">${cut}</a></h2>`));
    assert.ok(list.length < 100_000, `${list.length} characters`);
    const diff = await page(`${web}/revisions/${pushed}`, bobCookie);
    assert.ok(diff.includes(`<title>${cut} · Revisions · long message · snippetd</title>`));
    assert.ok(diff.includes(`<h1>${cut}</h1>`));
    assert.ok(diff.includes(`<pre class="message">${'&lt;b&gt;'.repeat(100_000)}</pre>`));

    // Never cut between the halves of 😀; a first line of blanks is no subject.
    const subjects = [`${'x'.repeat(299)}😀 tail`, `${' '.repeat(400)}\n\nbody`];
    for (const [n, message] of subjects.entries()) {
      fs.writeFileSync(path.join(dir, 'a.txt'), `gamma ${n}\n`);
      fs.writeFileSync(path.join(work, 'long-message.txt'), message);
      const commit = await runGit(
        ['commit', '-qa', '--cleanup=verbatim', '-F', path.join(work, 'long-message.txt')],
        dir,
      );
      assert.equal(commit.code, 0, commit.stderr);
    }
    assert.equal((await runGit(['push', '-q', 'origin', 'HEAD:main'], dir)).code, 0);
    assert.deepEqual(
      listed(await page(`${web}/revisions`, bobCookie))
        .slice(0, 2)
        .map((r) => r.subject),
      ['(no message)', `${'x'.repeat(299)}…`],
    );
  });

  it("lists each commit's files as git itself lists them: counts, renames, modes, directories, merges", async () => {
    const gitChanges = async (snippetId: number) => gitLogChanges((await t.gitDir('snippet', snippetId))!);
    const listedChanges = async (web: string) =>
      listed(await page(`${web}/revisions`)).map((r) => ({
        id: r.href.slice(`${web}/revisions/`.length),
        changes: r.changes,
      }));

    // A block rewritten around a blank line that has many matches: git counts that line as changed (its
    // xdiff discards it), where a minimal diff would keep it.
    const pairs = Array.from({ length: 40 }, (_, i) => [`c${i}`, '']).flat();
    const rewritten = (p: string) => [
      ...pairs.slice(0, 40),
      ...[1, 2, 3, 4, 5].map((i) => `${p}${i}`),
      '',
      ...[6, 7, 8, 9, 10].map((i) => `${p}${i}`),
      ...pairs.slice(40),
    ];
    const snippet = await t.must('POST', '/snippets', aliceToken, {
      title: 'as git lists',
      visibility: 'public',
      files: [
        { file_path: 'block.txt', content: `${rewritten('u').join('\n')}\n` },
        { file_path: 'tail.txt', content: 'one\ntwo' },
        { file_path: 'keep.txt', content: 'kept\n' },
      ],
    });
    await t.must('PUT', `/snippets/${snippet.id}`, aliceToken, {
      files: [
        { action: 'update', file_path: 'block.txt', content: `${rewritten('v').join('\n')}\n` },
        { action: 'update', file_path: 'tail.txt', content: 'one\ntwo\n' },
        { action: 'move', previous_path: 'keep.txt', file_path: 'dir/kept.txt', content: 'kept\n' },
        { action: 'create', file_path: 'bin.dat', content: 'a\u0000b' },
      ],
    });
    const dir = path.join(work, 'as-git-lists');
    const clone = await runGit(['clone', `http://oauth2:${aliceToken}@${host}/snippets/${snippet.id}.git`, dir]);
    assert.equal(clone.code, 0, clone.stderr);
    const commit = async (message: string) => {
      await runGit(['add', '-A'], dir);
      assert.equal((await runGit(['commit', '-m', message], dir)).code, 0);
    };
    // A mode change alone, an empty file, a file in a directory, and a copy of a file (no rename).
    fs.chmodSync(path.join(dir, 'tail.txt'), 0o755);
    fs.writeFileSync(path.join(dir, 'empty.txt'), '');
    fs.mkdirSync(path.join(dir, 'dir', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'dir', 'sub', 'deep.txt'), 'deep\n');
    fs.writeFileSync(path.join(dir, 'dir', 'copy.txt'), 'kept\n');
    await commit('Modes and directories');
    // An exact rename with its mode, a deletion, the binary file changed.
    assert.equal((await runGit(['mv', 'tail.txt', 'dir/tail.sh'], dir)).code, 0);
    fs.rmSync(path.join(dir, 'empty.txt'));
    fs.writeFileSync(path.join(dir, 'bin.dat'), Buffer.from([1, 0, 2]));
    await commit('Renamed and deleted');
    // A branch merged back: the merge lists its changes against its first parent.
    assert.equal((await runGit(['checkout', '-q', '-b', 'side', 'HEAD~1'], dir)).code, 0);
    fs.writeFileSync(path.join(dir, 'side.txt'), 'side\n');
    await commit('On the side');
    assert.equal((await runGit(['checkout', '-q', 'main'], dir)).code, 0);
    const merge = await runGit(['merge', '--no-ff', '-m', 'Merge side', 'side'], dir);
    assert.equal(merge.code, 0, merge.stderr);
    const push = await runGit(['push', 'origin', 'HEAD:main'], dir);
    assert.equal(push.code, 0, push.stderr);

    const expected = await gitChanges(snippet.id);
    assert.equal(expected.length, 6);
    // The oracle says what the rows must match: the rewrite counted as git's xdiff counts it.
    assert.deepEqual(expected.at(-2)!.changes, [
      'added bin.dat binary',
      'modified block.txt +11 −11',
      'renamed keep.txt → dir/kept.txt +0 −0',
      'modified tail.txt +1 −1',
    ]);
    assert.deepEqual(await listedChanges(snippet.web_url), expected);
  });

  it("works a new commit's diff out after the update, for a snippet whose diffs are looked at", async () => {
    /** The node's git serving caches brought up to date (hit) and built (miss), from /-/metrics. */
    const serving = async () => {
      const metrics = (await t.request({ method: 'GET', url: '/-/metrics', token: null })).body;
      const count = (result: string) =>
        Number(
          new RegExp(`^snippetd_cache_requests_total\\{cache="git_serving",result="${result}"\\} (\\d+)$`, 'm').exec(
            metrics,
          )?.[1] ?? 0,
        );
      return { hits: count('hit'), misses: count('miss') };
    };
    const update = (id: number, content: string) =>
      t.must('PUT', `/snippets/${id}`, aliceToken, { files: [{ action: 'update', file_path: 'w.js', content }] });
    const watched = await t.must('POST', '/snippets', aliceToken, {
      title: 'watched',
      visibility: 'public',
      files: [{ file_path: 'w.js', content: 'let a = 0;\n' }],
    });
    const web = watched.web_url as string;
    await update(watched.id, 'let a = 1;\n');
    const [first] = await gitLog(watched.id);
    await page(`${web}/revisions/${first}`);
    const before = await serving();
    await update(watched.id, 'let a = 2;\n');
    // Worked out in the background: git reads it from the node's serving cache, brought up to date.
    for (let waited = 0; (await serving()).hits === before.hits; waited += 20) {
      assert.ok(waited < 10_000, 'the new commit was not worked out');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const prepared = await serving();
    const [top] = listed(await page(`${web}/revisions`));
    const second = top.href.slice(`${web}/revisions/`.length);
    assert.deepEqual(shownFiles(await page(top.href)), [
      {
        header: 'w.js modified +1 −1',
        raw: `${web}/raw/${second}/w.js`,
        rows: [
          ['', '', 'hunk', '@@ -1 +1 @@'],
          ['1', '', 'deleted', 'let a = 1;'],
          ['', '1', 'added', 'let a = 2;'],
        ],
      },
    ]);
    // Its first view, and the list's, found what they show without git.
    assert.deepEqual(await serving(), prepared);
    assert.equal((await gitLog(watched.id))[0], second);

    // A snippet whose diffs nobody looked at costs its updates nothing: no serving cache is made for it.
    const unwatched = await t.must('POST', '/snippets', aliceToken, {
      title: 'unwatched',
      visibility: 'public',
      files: [{ file_path: 'w.js', content: 'let b = 0;\n' }],
    });
    const quiet = await serving();
    await update(unwatched.id, 'let b = 1;\n');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(await serving(), quiet);
  });

  it('bounds a large change: a file whose patch is over 200 KB is said to be too large to display', async () => {
    const big = Array.from({ length: 30_000 }, (_, i) => `line ${i}\n`).join('');
    const snippet = await t.must('POST', '/snippets', aliceToken, {
      title: 'big',
      visibility: 'public',
      files: [
        { file_path: 'big.txt', content: 'small\n' },
        { file_path: 'small.txt', content: 'a\n' },
      ],
    });
    await t.must('PUT', `/snippets/${snippet.id}`, aliceToken, {
      files: [
        { action: 'update', file_path: 'big.txt', content: big },
        { action: 'update', file_path: 'small.txt', content: 'b\n' },
      ],
    });
    const [id] = await gitLog(snippet.id);
    const web = snippet.web_url as string;
    const body = await page(`${web}/revisions/${id}`);
    const files = shownFiles(body);
    assert.deepEqual(files, [
      {
        header: 'big.txt modified +30000 −1',
        raw: `${web}/raw/${id}/big.txt`,
        rows: 'This diff is too large to display: its changes are larger than 200 KB. You can view the file raw instead.',
      },
      {
        header: 'small.txt modified +1 −1',
        raw: `${web}/raw/${id}/small.txt`,
        rows: [
          ['', '', 'hunk', '@@ -1 +1 @@'],
          ['1', '', 'deleted', 'a'],
          ['', '1', 'added', 'b'],
        ],
      },
    ]);
    assert.ok(body.length < 20_000, `${body.length} bytes`);
  });

  it('is hidden from whoever may not see the snippet, and 404 for a commit the snippet does not have', async () => {
    const personal = await t.must('POST', '/snippets', aliceToken, {
      title: 'private',
      visibility: 'private',
      files: [{ file_path: 'p.txt', content: 'p\n' }],
    });
    const inPrivateProject = await t.must('POST', `/projects/${privateProject.id}/snippets`, aliceToken, {
      title: 'in a private project',
      visibility: 'public',
      files: [{ file_path: 'q.txt', content: 'q\n' }],
    });
    const other = await t.must('POST', '/snippets', aliceToken, {
      title: 'other',
      visibility: 'public',
      files: [{ file_path: 'o.txt', content: 'o\n' }],
    });
    const [otherCommit] = await gitLog(other.id);
    for (const snippet of [personal, inPrivateProject]) {
      const [commit] = await gitLog(snippet.id);
      for (const url of [`${snippet.web_url}/revisions`, `${snippet.web_url}/revisions/${commit}`]) {
        for (const cookie of [undefined, bobCookie]) await hidden(url, cookie);
        assert.equal((await view(url, aliceCookie)).statusCode, 200, url);
      }
    }
    // Another snippet's commit, an unknown one and a name that is no ref: not this snippet's.
    for (const ref of [otherCommit, '0'.repeat(40), 'nope', 'main..HEAD']) {
      const res = await view(`${personal.web_url}/revisions/${encodeURIComponent(ref)}`, aliceCookie);
      assert.equal(res.statusCode, 404, ref);
      assert.match(res.body, /<h1>Page not found<\/h1>/);
    }
    // No such snippet and an id beyond any row are hidden alike; a path not well-formed is refused before any
    // page (docs/gitlab-compatibility.md#d17), as on every other path.
    for (const url of [
      `/-/snippets/${other.id + 1000}/revisions`,
      '/-/snippets/99999999999999999999999/revisions',
      `/${project.path_with_namespace}/-/snippets/99999999999999999999999/revisions/main`,
    ]) {
      await hidden(url);
      await hidden(url, bobCookie);
    }
    for (const url of [`/-/snippets/${other.id}/revisions/%E0%A4%A`, `/-/snippets/${other.id}/revisions/%00`]) {
      const res = await view(url);
      assert.equal(res.statusCode, 400, `${url}: ${res.body.slice(0, 300)}`);
    }
  });
});
