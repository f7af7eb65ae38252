// The search page (/search?search=…, docs/pages.md#search): the header's search box on every page, results with
// where each snippet lives and its matching lines marked and linked, Opengist's filters, pages of results,
// and only what the visitor may see: anonymous, signed in, and the author of a private snippet.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';

const PASSWORD = 'correct horse battery';

describe('search page', () => {
  let t: TestApp;
  let aliceCookie: string;
  let bobCookie: string;
  let aliceToken: string;
  const page = (query: string, cookie?: string) =>
    t.request({ method: 'GET', url: `/search?${query}`, token: null, headers: cookie ? { cookie } : {} });
  /** The titles of the results, in order. */
  const titles = (body: string) =>
    [...body.matchAll(/<li class="search-result"><h2><a href="[^"]+">(.*?)<\/a><\/h2>/g)].map((m) =>
      m[1].replace(/<\/?mark>/g, ''),
    );

  before(async () => {
    t = await createTestApp();
    // These pages search more often than GitLab's limits allow a minute; the limits have their own tests
    // (rate-limits.test.ts).
    await t.must('PUT', '/application/settings', ROOT_TOKEN, {
      search_rate_limit: 0,
      search_rate_limit_unauthenticated: 0,
    });
    for (const username of ['alice', 'bob'])
      await t.must('POST', '/users', ROOT_TOKEN, {
        username,
        email: `${username}@example.com`,
        name: username,
        password: PASSWORD,
      });
    aliceToken = (await t.must('POST', '/users/2/personal_access_tokens', ROOT_TOKEN, { name: 't', scopes: ['api'] }))
      .token;
    const mk = (title: string, visibility: string, files: object[], extra: object = {}) =>
      t.ok('POST', '/snippets', aliceToken, { title, visibility, files, ...extra }, 201);
    await mk('Ruby hello', 'public', [{ file_path: 'hello.rb', content: 'def hello\n  puts "Wombat <b>"\nend\n' }]);
    await mk('Python hello', 'public', [{ file_path: 'hello.py', content: 'print("wombat")\n' }]);
    await mk('Secret', 'private', [{ file_path: 'plan.txt', content: 'the wombat plan\n' }]);
    await mk('Internal note', 'internal', [{ file_path: 'notes.md', content: '# wombat\n' }]);
    const project = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'zoo', visibility: 'public' });
    await t.ok(
      'POST',
      `/projects/${project.id}/snippets`,
      ROOT_TOKEN,
      { title: 'Zoo keeper', visibility: 'public', files: [{ file_path: 'keeper.rb', content: 'wombat = 1\n' }] },
      201,
    );
    aliceCookie = await signInCookie(t, 'alice', PASSWORD);
    bobCookie = await signInCookie(t, 'bob', PASSWORD);
  });
  after(() => t.close());

  it('has a labelled search box in the header of every page, holding the search on the search page', async () => {
    const explore = await t.request({ method: 'GET', url: '/explore/snippets', token: null });
    assert.match(
      explore.body,
      /<form class="header-search" role="search" aria-label="Site search" action="\/search" method="get">\n<label for="header-search-text" class="visually-hidden">Search snippets<\/label>\n<input id="header-search-text" type="search" name="search" placeholder="Search snippets" value="">/,
    );
    const res = await page('search=wombat');
    assert.match(
      res.body,
      /<input id="header-search-text" type="search" name="search" placeholder="Search snippets" value="wombat">/,
    );
  });

  it('finds what each visitor may see, with where it lives and the matching lines marked and linked', async () => {
    const anonymous = await page('search=wombat');
    assert.equal(anonymous.statusCode, 200);
    assert.equal(anonymous.headers['content-type'], 'text/html; charset=utf-8');
    assert.deepEqual(titles(anonymous.body).sort(), ['Python hello', 'Ruby hello', 'Zoo keeper']);
    assert.deepEqual(titles((await page('search=wombat', bobCookie)).body).sort(), [
      'Internal note',
      'Python hello',
      'Ruby hello',
      'Zoo keeper',
    ]);
    const own = await page('search=wombat', aliceCookie);
    assert.deepEqual(titles(own.body).sort(), ['Internal note', 'Python hello', 'Ruby hello', 'Secret', 'Zoo keeper']);
    assert.match(own.body, /<p class="meta" role="status">5 snippets found<\/p>/);
    // The line, escaped, the term marked, linked to the file's line on the snippet's page.
    const ruby =
      /<li class="search-result"><h2><a href="(http:\/\/[^"]+\/-\/snippets\/\d+)">Ruby hello<\/a><\/h2>\n<p class="meta">Personal snippet · @alice <span class="badge">public<\/span><\/p>\n\n<div class="search-file"><a href="\1#file-1">hello\.rb<\/a>\n<ol class="search-lines"><li><a href="\1#L2" aria-label="hello\.rb line 2">2<\/a> <code> {2}puts &quot;<mark>Wombat<\/mark> &lt;b&gt;&quot;<\/code><\/li><\/ol><\/div><\/li>/;
    assert.match(own.body, ruby);
    assert.match(own.body, /<p class="meta">zoo · @root|<p class="meta">root\/zoo · @root/);
  });

  it('marks the term where lowercasing lengthens a character before it (İ is two code units in lowercase)', async () => {
    await t.ok(
      'POST',
      '/snippets',
      aliceToken,
      {
        title: 'İİ Kestrel',
        visibility: 'public',
        files: [{ file_path: 'k.txt', content: 'İİİ kestrel İ KESTREL\n' }],
      },
      201,
    );
    const res = await page('search=kestrel');
    assert.match(res.body, /<h2><a href="[^"]+">İİ <mark>Kestrel<\/mark><\/a><\/h2>/);
    assert.match(res.body, /<code>İİİ <mark>kestrel<\/mark> İ <mark>KESTREL<\/mark><\/code>/);
  });

  it("shows a long description's first 300 characters, marked, with …", async () => {
    const description = `An osprey ${'é'.repeat(289)}😀 osprey ${'x'.repeat(1_000_000)}`;
    await t.ok(
      'POST',
      '/snippets',
      aliceToken,
      { title: 'Long', description, visibility: 'public', files: [{ file_path: 'o.txt', content: 'o' }] },
      201,
    );
    const res = await page('search=osprey');
    // 299 characters: the 300th would be the first half of 😀.
    assert.ok(res.body.includes(`<p class="description">An <mark>osprey</mark> ${'é'.repeat(289)}…</p>`));
    assert.ok(res.body.length < 100_000, `${res.body.length} characters`);
  });

  it('marks at most 20 matches of a text and shows a long path cut: a page of 200 such files stays small', async () => {
    // 20 snippets of 10 files: 1,000-character paths and ten 600-character lines of 'a', each matching
    // everywhere. Every match marked made an 18 MB page of 600,000 marks, 300 ms on the event loop (helper-61).
    const line = 'a'.repeat(600);
    for (let s = 0; s < 20; s++) {
      const files = Array.from({ length: 10 }, (_, f) => ({
        file_path: `${'a'.repeat(1000)}${f}.txt`,
        content: `${line}\n`.repeat(10),
      }));
      await t.ok('POST', '/snippets', aliceToken, { title: `Many marks ${s}`, visibility: 'public', files }, 201);
    }
    const res = await page('search=aaa');
    assert.equal(res.statusCode, 200);
    assert.equal(titles(res.body).length, 20);
    const paths = [...res.body.matchAll(/<div class="search-file"><a href="[^"]+">(.*?)<\/a>/g)].map((m) => m[1]);
    assert.equal(paths.length, 200);
    // The path's first 300 characters, cut with …, the first 20 of its 100 matches marked.
    assert.equal(paths[0], `${'<mark>aaa</mark>'.repeat(20)}${'a'.repeat(300 - 60)}…`);
    const lines = [...res.body.matchAll(/<\/a> <code>(.*?)<\/code>/g)].map((m) => m[1]);
    assert.equal(lines.length, 2000);
    assert.equal(lines[0], `${'<mark>aaa</mark>'.repeat(20)}${'a'.repeat(500 - 60)}`);
    assert.ok(res.body.length < 4_000_000, `${res.body.length} characters`);
  });

  it("narrows by Opengist's filters; an unknown author, project, visibility or language finds nothing", async () => {
    const found = async (q: string) => {
      const res = await page(new URLSearchParams({ search: q }).toString(), aliceCookie);
      assert.equal(res.statusCode, 200, q);
      return titles(res.body).sort();
    };
    assert.deepEqual(await found('wombat extension:rb'), ['Ruby hello', 'Zoo keeper']);
    assert.deepEqual(await found('wombat language:python'), ['Python hello']);
    assert.deepEqual(await found('wombat filename:plan'), ['Secret']);
    assert.deepEqual(await found('wombat visibility:internal'), ['Internal note']);
    assert.deepEqual(await found('wombat author:root'), ['Zoo keeper']);
    assert.deepEqual(await found('project:root/zoo'), ['Zoo keeper']);
    assert.deepEqual(await found('extension:rb author:alice'), ['Ruby hello']);
    for (const q of [
      'wombat author:nobody',
      'wombat project:no/where',
      'wombat visibility:secret',
      'wombat language:cobol',
      // Names an object has of its own: no language either.
      'wombat language:constructor',
      'wombat language:__proto__',
    ])
      assert.deepEqual(await found(q), [], q);
    const none = await page('search=nothing+like+it', aliceCookie);
    assert.match(none.body, /<p class="empty" role="status">No snippets found\.<\/p>/);
  });

  it('pages the results, 20 at a time, the search kept in the links', async () => {
    for (let i = 0; i < 21; i++)
      await t.ok(
        'POST',
        '/snippets',
        aliceToken,
        { title: `capybara ${i}`, visibility: 'public', files: [{ file_path: 'c.txt', content: 'x' }] },
        201,
      );
    const first = await page('search=capybara');
    assert.equal(titles(first.body).length, 20);
    assert.match(
      first.body,
      /<a rel="next" href="http:\/\/localhost:80\/search\?search=capybara&amp;page=2">Next<\/a>/,
    );
    const second = await page('search=capybara&page=2');
    assert.deepEqual(titles(second.body), ['capybara 0']);
    assert.match(
      second.body,
      /<a rel="prev" href="http:\/\/localhost:80\/search\?search=capybara&amp;page=1">Previous<\/a>/,
    );
  });

  it('says so while searching across the instance is off (403); a project: search goes on', async () => {
    const setting = (on: boolean) =>
      t.must('PUT', '/application/settings', ROOT_TOKEN, { global_search_snippet_titles_enabled: on });
    await setting(false);
    try {
      const refused = await page('search=wombat', aliceCookie);
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /<h1>Access denied<\/h1>/);
      assert.match(refused.body, /<p>Searching snippets across this instance is turned off\. Search within a project/);
      assert.deepEqual(titles((await page('search=project%3Aroot%2Fzoo', aliceCookie)).body), ['Zoo keeper']);
    } finally {
      await setting(true);
    }
  });

  it('says which files are searched by name only, after search_indexed_file_size_limit_kb', async () => {
    const help = async () => /<p id="search-help" class="meta">([^<]*)/.exec((await page('')).body)?.[1];
    assert.equal(
      await help(),
      'Title, description, file names and content (a binary file, or one over 1 MB, by its name only). Filters: ',
    );
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_indexed_file_size_limit_kb: 256 });
    try {
      assert.match((await help()) ?? '', /a binary file, or one over 256 KB, by its name only/);
      await t.ok(
        'POST',
        '/snippets',
        aliceToken,
        {
          title: 'Big',
          visibility: 'public',
          files: [{ file_path: 'big.txt', content: `${'x'.repeat(300_000)} okapi` }],
        },
        201,
      );
      assert.deepEqual(titles((await page('search=okapi', aliceCookie)).body), []);
      assert.deepEqual(titles((await page('search=big.txt', aliceCookie)).body), ['Big']);
    } finally {
      await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_indexed_file_size_limit_kb: 1024 });
    }
  });

  it('shows only the form without a search', async () => {
    const res = await page('');
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<label for="search-page-text">Search snippets<\/label>/);
    assert.doesNotMatch(res.body, /search-result|No snippets found/);
  });
});
