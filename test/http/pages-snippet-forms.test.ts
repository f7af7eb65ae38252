// Writing snippets in the browser, over HTTP as a browser sends forms: new (personal and in a project), edit
// (files edited, renamed, added and deleted in one commit; a save over someone else's change refused with
// both versions shown), delete with confirmation; each POST refused without this session's form token or
// from another origin, changing nothing; every message of the API shown next to its field, what was typed
// kept. The API is the oracle of what was written.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, runGit, signInCookie, type TestApp } from '../helper.ts';

const PASSWORD = 'correct horse battery';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The value of a hidden input of the page. */
const hidden = (body: string, name: string) =>
  new RegExp(`name="${name.replace(/[[\]]/g, '\\$&')}" value="([^"]*)"`).exec(body)?.[1];
const decodeHtml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
/** The text of a textarea as the browser would take it (the first line break after the tag is not content). */
const textarea = (body: string, name: string) => {
  const m = new RegExp(`<textarea[^>]*name="${name.replace(/[[\]]/g, '\\$&')}"[^>]*>\\n([\\s\\S]*?)</textarea>`).exec(
    body,
  );
  return m ? decodeHtml(m[1]) : undefined;
};

describe('snippet forms', () => {
  let t: TestApp;
  let alice: any;
  let bob: any;
  let aliceCookie: string;
  let bobCookie: string;
  let project: any;

  const page = (url: string, cookie?: string) =>
    t.request({ method: 'GET', url, token: null, headers: cookie ? { cookie } : {} });
  /** Opens the form at `url` and posts `fields` with its token (unless `token` is given), as a browser does. */
  async function submit(
    url: string,
    cookie: string,
    fields: [string, string][],
    opts: { token?: string; origin?: string; formUrl?: string } = {},
  ) {
    const form = await page(opts.formUrl ?? url, cookie);
    assert.equal(form.statusCode, 200, form.body);
    const token = opts.token ?? hidden(form.body, 'authenticity_token')!;
    const body = new URLSearchParams([['authenticity_token', token], ...fields]);
    return t.request({
      method: 'POST',
      url,
      token: null,
      headers: { ...FORM, cookie, ...(opts.origin && { origin: opts.origin }) },
      payload: body.toString(),
    });
  }
  const mySnippets = async (token: string) => (await t.must('GET', '/snippets', token)).map((s: any) => s.id);

  before(async () => {
    t = await createTestApp();
    for (const name of ['alice', 'bob']) {
      await t.must('POST', '/users', ROOT_TOKEN, {
        username: name,
        email: `${name}@example.com`,
        name,
        password: PASSWORD,
      });
    }
    alice = (await t.must('GET', '/users?username=alice', ROOT_TOKEN))[0];
    bob = (await t.must('GET', '/users?username=bob', ROOT_TOKEN))[0];
    alice.token = (
      await t.must('POST', `/users/${alice.id}/personal_access_tokens`, ROOT_TOKEN, { name: 't', scopes: ['api'] })
    ).token;
    bob.token = (
      await t.must('POST', `/users/${bob.id}/personal_access_tokens`, ROOT_TOKEN, { name: 't', scopes: ['api'] })
    ).token;
    project = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'team', visibility: 'internal' });
    await t.must('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: alice.id, access_level: 30 });
    aliceCookie = await signInCookie(t, 'alice', PASSWORD);
    bobCookie = await signInCookie(t, 'bob', PASSWORD);
  });
  after(() => t.close());

  it('a visitor who is not signed in is sent to sign in, and back to the form afterwards', async () => {
    const res = await page('/-/snippets/new');
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, '/users/sign_in?redirect_to=%2F-%2Fsnippets%2Fnew');
  });

  it('the new snippet form offers the levels the instance allows, the default chosen, and one file', async () => {
    await t.must('PUT', '/application/settings', ROOT_TOKEN, {
      restricted_visibility_levels: ['public'],
      default_snippet_visibility: 'internal',
    });
    try {
      const res = await page('/-/snippets/new', aliceCookie);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      const radios = [...res.body.matchAll(/<input type="radio" name="visibility" value="(\w+)"( checked)?>/g)];
      assert.deepEqual(
        radios.map((m) => [m[1], !!m[2]]),
        [
          ['private', false],
          ['internal', true],
        ],
      );
      assert.equal(textarea(res.body, 'files[0][content]'), '');
      assert.equal(res.body.match(/name="files\[\d+\]\[file_path\]"/g)?.length, 1);
      assert.match(res.body, /<form method="post" action="\/-\/snippets\/new" class="snippet-form">/);
      // Private means the author alone for a personal snippet (the project's members for a project one).
      assert.match(
        res.body,
        /value="private"> <strong>Private<\/strong> <span class="hint">Only you can see it\.<\/span>/,
      );
    } finally {
      await t.must('PUT', '/application/settings', ROOT_TOKEN, {
        restricted_visibility_levels: [],
        default_snippet_visibility: 'private',
      });
    }
  });

  it('creates a personal snippet with two files, line breaks as typed in a textarea stored as LF', async () => {
    const res = await submit('/-/snippets/new', aliceCookie, [
      ['title', 'Two files'],
      ['description', 'Some *notes*'],
      ['visibility', 'internal'],
      ['files[0][file_path]', 'a.txt'],
      ['files[0][content]', 'line one\r\nline two\r\n'],
      ['files[1][file_path]', 'dir/b.py'],
      ['files[1][content]', 'print(1)'],
      ['save', '1'],
    ]);
    assert.equal(res.statusCode, 303, res.body);
    const id = Number(/^\/-\/snippets\/(\d+)$/.exec(res.headers.location as string)?.[1]);
    const snippet = await t.must('GET', `/snippets/${id}`, alice.token);
    assert.equal(snippet.title, 'Two files');
    assert.equal(snippet.description, 'Some *notes*');
    assert.equal(snippet.visibility, 'internal');
    assert.equal(snippet.author.username, 'alice');
    assert.deepEqual(snippet.files.map((f: any) => f.path).sort(), ['a.txt', 'dir/b.py']);
    const raw = await t.api('GET', `/snippets/${id}/files/main/a.txt/raw`, alice.token);
    assert.equal(raw.body, 'line one\nline two\n');
    // The snippet page it lands on offers its author Edit and Delete.
    const shown = await page(res.headers.location as string, aliceCookie);
    assert.match(shown.body, new RegExp(`<a class="button" href="/-/snippets/${id}/edit">Edit</a>`));
    assert.match(shown.body, new RegExp(`<a class="button danger" href="/-/snippets/${id}/delete">Delete</a>`));
  });

  it('refuses a form without the session token, or from another site, and creates nothing', async () => {
    const before = await mySnippets(alice.token);
    const fields: [string, string][] = [
      ['title', 'Forged'],
      ['files[0][file_path]', 'x.txt'],
      ['files[0][content]', 'x'],
    ];
    const noToken = await submit('/-/snippets/new', aliceCookie, fields, { token: '' });
    assert.equal(noToken.statusCode, 422);
    assert.match(noToken.body, /<h1>The change you requested was rejected<\/h1>/);
    const wrongToken = await submit('/-/snippets/new', aliceCookie, fields, { token: 'A'.repeat(43) });
    assert.equal(wrongToken.statusCode, 422);
    const bobsToken = hidden((await page('/-/snippets/new', bobCookie)).body, 'authenticity_token')!;
    const otherSession = await submit('/-/snippets/new', aliceCookie, fields, { token: bobsToken });
    assert.equal(otherSession.statusCode, 422);
    const crossSite = await submit('/-/snippets/new', aliceCookie, fields, { origin: 'https://evil.example' });
    assert.equal(crossSite.statusCode, 422);
    assert.deepEqual(await mySnippets(alice.token), before);
    // The same origin passes.
    const sameSite = await submit('/-/snippets/new', aliceCookie, fields, { origin: 'http://localhost' });
    assert.equal(sameSite.statusCode, 303, sameSite.body);
  });

  it('shows each message next to its field and keeps what was typed', async () => {
    const before = await mySnippets(alice.token);
    const res = await submit('/-/snippets/new', aliceCookie, [
      ['title', '  '],
      ['description', 'kept <description>'],
      ['visibility', 'private'],
      ['files[0][file_path]', 'keep.txt'],
      ['files[0][content]', 'typed\ntext & more'],
      ['files[1][file_path]', ''],
      ['files[1][content]', 'second'],
      ['save', '1'],
    ]);
    assert.equal(res.statusCode, 422);
    assert.match(
      res.body,
      /<input id="snippet-title" name="title" value=" {2}" aria-invalid="true" aria-describedby="snippet-title-error">/,
    );
    assert.match(res.body, /<p class="field-error" id="snippet-title-error">Title can&#39;t be blank<\/p>/);
    assert.match(res.body, /<p class="field-error" id="file-1-path-error">File name can&#39;t be blank<\/p>/);
    assert.equal(textarea(res.body, 'description'), 'kept <description>');
    assert.equal(textarea(res.body, 'files[0][content]'), 'typed\ntext & more');
    assert.equal(textarea(res.body, 'files[1][content]'), 'second');
    assert.match(res.body, /<input type="radio" name="visibility" value="private" checked>/);
    assert.deepEqual(await mySnippets(alice.token), before);
  });

  it('takes a title of 255 characters as the API counts them and refuses a longer one next to its field', async () => {
    // The field has no maxlength (which counts UTF-16 code units: 127 emoji): the API's limit is the one held.
    const fields = (title: string): [string, string][] => [
      ['title', title],
      ['visibility', 'private'],
      ['files[0][file_path]', 'a.txt'],
      ['files[0][content]', 'a'],
      ['save', '1'],
    ];
    const long = await submit('/-/snippets/new', aliceCookie, fields('😀'.repeat(256)));
    assert.equal(long.statusCode, 422);
    assert.match(
      long.body,
      /<p class="field-error" id="snippet-title-error">Title is too long \(maximum is 255 characters\)<\/p>/,
    );
    const saved = await submit('/-/snippets/new', aliceCookie, fields('😀'.repeat(255)));
    assert.equal(saved.statusCode, 303, saved.body.slice(0, 300));
    const id = Number(/(\d+)$/.exec(saved.headers.location as string)?.[1]);
    assert.equal((await t.must('GET', `/snippets/${id}`, alice.token)).title, '😀'.repeat(255));
  });

  it('refuses a visibility the API does not know, with its message next to the field, on new and edit', async () => {
    // The oracle: the API's own answer to the same value (Grape's values check), worded for a form.
    const api = 'visibility does not have a valid value';
    await t.fails(
      'POST',
      '/snippets',
      alice.token,
      { title: 'x', visibility: 'secret', files: [{ file_path: 'a.txt', content: 'a' }] },
      400,
      { error: api },
    );
    const message = `V${api.slice(1)}`;
    const field = new RegExp(
      `<fieldset class="visibility" aria-invalid="true" aria-describedby="snippet-visibility-error">[\\s\\S]*<p class="field-error" id="snippet-visibility-error">${message}</p>`,
    );

    const before = await mySnippets(alice.token);
    const created = await submit('/-/snippets/new', aliceCookie, [
      ['title', 'Secret?'],
      ['visibility', 'secret'],
      ['files[0][file_path]', 'a.txt'],
      ['files[0][content]', 'kept'],
      ['save', '1'],
    ]);
    assert.equal(created.statusCode, 422);
    assert.match(created.body, field);
    // No level is shown chosen: the refused value was none of them.
    assert.doesNotMatch(created.body, /name="visibility" value="\w+" checked/);
    assert.equal(textarea(created.body, 'files[0][content]'), 'kept');
    assert.deepEqual(await mySnippets(alice.token), before);

    const snippet = await t.must('POST', '/snippets', alice.token, {
      title: 'Stays private',
      visibility: 'private',
      files: [{ file_path: 'a.txt', content: 'a' }],
    });
    const editUrl = `/-/snippets/${snippet.id}/edit`;
    const edited = await submit(editUrl, aliceCookie, [
      ['base_version', hidden((await page(editUrl, aliceCookie)).body, 'base_version')!],
      ['title', 'Renamed'],
      ['visibility', 'secret'],
      ['files[0][previous_path]', 'a.txt'],
      ['files[0][file_path]', 'a.txt'],
      ['files[0][content]', 'a'],
      ['save', '1'],
    ]);
    assert.equal(edited.statusCode, 422);
    assert.match(edited.body, field);
    const after = await t.must('GET', `/snippets/${snippet.id}`, alice.token);
    assert.equal(after.title, 'Stays private');
    assert.equal(after.visibility, 'private');
  });

  it('answers a rule of the domain as the API words it, next to the files', async () => {
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { max_snippet_files: 1 });
    try {
      const res = await submit('/-/snippets/new', aliceCookie, [
        ['title', 'Too many'],
        ['files[0][file_path]', 'a.txt'],
        ['files[0][content]', 'a'],
        ['files[1][file_path]', 'b.txt'],
        ['files[1][content]', 'b'],
        ['save', '1'],
      ]);
      assert.equal(res.statusCode, 422);
      assert.match(
        res.body,
        /<div class="alert" role="alert"><ul><li>Repository Error creating the snippet - Snippet can&#39;t have more than 1 files<\/li><\/ul><\/div>/,
      );
      // At the limit, no button offers another file.
      assert.doesNotMatch(res.body, /name="add_file"/);
    } finally {
      await t.must('PUT', '/application/settings', ROOT_TOKEN, { max_snippet_files: 10 });
    }
  });

  it('adds a file row and previews the description without saving, keeping what was typed', async () => {
    const before = await mySnippets(alice.token);
    const typed: [string, string][] = [
      ['title', 'Draft'],
      ['description', '# Heading\n\n**bold**'],
      ['files[0][file_path]', 'one.txt'],
      ['files[0][content]', 'first'],
    ];
    const added = await submit('/-/snippets/new', aliceCookie, [...typed, ['add_file', '1']]);
    assert.equal(added.statusCode, 200);
    assert.equal(textarea(added.body, 'files[0][content]'), 'first');
    assert.equal(textarea(added.body, 'files[1][content]'), '');
    const previewed = await submit('/-/snippets/new', aliceCookie, [...typed, ['preview', '1']]);
    assert.equal(previewed.statusCode, 200);
    assert.match(previewed.body, /<section class="preview" aria-label="Description preview"><h2>Preview<\/h2>/);
    assert.match(previewed.body, /<strong>bold<\/strong>/);
    assert.deepEqual(await mySnippets(alice.token), before);
  });

  it('creates a project snippet for a developer; others who may not are told not found', async () => {
    const url = `/${project.path_with_namespace}/-/snippets/new`;
    const res = await submit(url, aliceCookie, [
      ['title', 'Team notes'],
      ['visibility', 'internal'],
      ['files[0][file_path]', 'team.md'],
      ['files[0][content]', '# team'],
    ]);
    assert.equal(res.statusCode, 303, res.body);
    const id = Number(
      new RegExp(`^/${project.path_with_namespace}/-/snippets/(\\d+)$`).exec(res.headers.location as string)?.[1],
    );
    const snippet = await t.must('GET', `/projects/${project.id}/snippets/${id}`, alice.token);
    assert.equal(snippet.title, 'Team notes');
    assert.equal(snippet.project_id, project.id);
    // The project allows internal at most: public is not offered.
    const form = await page(url, aliceCookie);
    assert.doesNotMatch(form.body, /value="public"/);
    // Bob can see the internal project but is no member: no form, and no post goes through.
    assert.equal((await page(url, bobCookie)).statusCode, 404);
    // The session token of a form Bob may open.
    const refused = await submit(
      url,
      bobCookie,
      [
        ['title', 'x'],
        ['files[0][file_path]', 'x'],
        ['files[0][content]', 'x'],
      ],
      { formUrl: '/-/snippets/new' },
    );
    assert.equal(refused.statusCode, 404);
    assert.deepEqual(await t.must('GET', `/projects/${project.id}/snippets`, ROOT_TOKEN).then((l) => l.length), 1);
  });

  it('offers no form and takes no post in a project whose snippets feature is off, as the API refuses', async () => {
    const closed = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'closed', visibility: 'public' });
    await t.must('POST', `/projects/${closed.id}/members`, ROOT_TOKEN, { user_id: alice.id, access_level: 30 });
    await t.must('PUT', `/projects/${closed.id}`, ROOT_TOKEN, { snippets_access_level: 'disabled' });
    const files = [{ file_path: 'a.txt', content: 'hello' }];
    await t.expect('POST', `/projects/${closed.id}/snippets`, alice.token, { title: 'x', files }, 403);
    const url = `/${closed.path_with_namespace}/-/snippets/new`;
    assert.equal((await page(url, aliceCookie)).statusCode, 404);
    const refused = await submit(
      url,
      aliceCookie,
      [
        ['title', 'via the page'],
        ['visibility', 'public'],
        ['files[0][file_path]', 'a.txt'],
        ['files[0][content]', 'hello'],
      ],
      { formUrl: '/-/snippets/new' },
    );
    assert.equal(refused.statusCode, 404);
    // Turned back on, the project has no snippet a closed form let through.
    await t.must('PUT', `/projects/${closed.id}`, ROOT_TOKEN, { snippets_access_level: 'enabled' });
    assert.deepEqual(await t.must('GET', `/projects/${closed.id}/snippets`, ROOT_TOKEN), []);
  });

  describe('editing', () => {
    let id: number;
    let editUrl: string;
    before(async () => {
      const snippet = await t.must('POST', '/snippets', alice.token, {
        title: 'Editable',
        visibility: 'private',
        files: [
          { file_path: 'keep.txt', content: 'one\ntwo\n' },
          { file_path: 'old-name.sh', content: 'echo hi\n' },
          { file_path: 'gone.txt', content: 'bye' },
        ],
      });
      id = snippet.id;
      editUrl = `/-/snippets/${id}/edit`;
    });

    it('shows the snippet in the form, as it is', async () => {
      const res = await page(editUrl, aliceCookie);
      assert.equal(res.statusCode, 200);
      assert.equal(textarea(res.body, 'files[0][content]'), 'bye');
      assert.equal(hidden(res.body, 'files[0][previous_path]'), 'gone.txt');
      assert.equal(hidden(res.body, 'files[1][previous_path]'), 'keep.txt');
      assert.equal(textarea(res.body, 'files[1][content]'), 'one\ntwo\n');
      assert.match(res.body, /<input id="snippet-title" name="title" value="Editable">/);
    });

    it('keeps a file larger than a page shows out of the form, and as it is through an edit', async () => {
      const large = `${'<b>&amp;</b>\n'.repeat(100_000)}`;
      const s = await t.must('POST', '/snippets', alice.token, {
        title: 'Large',
        files: [
          { file_path: 'large.html', content: large },
          { file_path: 'small.txt', content: 'small' },
        ],
      });
      const url = `/-/snippets/${s.id}/edit`;
      const form = await page(url, aliceCookie);
      assert.equal(form.statusCode, 200);
      assert.equal(hidden(form.body, 'files[0][previous_path]'), 'large.html');
      assert.equal(textarea(form.body, 'files[0][content]'), undefined);
      assert.match(form.body, /Larger than 1 MB, too large to edit here: it is kept as it is\./);
      assert.ok(form.body.length < 100_000, `${form.body.length} characters`);
      const res = await submit(url, aliceCookie, [
        ['base_version', hidden(form.body, 'base_version')!],
        ['title', 'Large'],
        ['visibility', 'private'],
        ['files[0][previous_path]', 'large.html'],
        ['files[0][file_path]', 'large.html'],
        ['files[1][previous_path]', 'small.txt'],
        ['files[1][file_path]', 'small.txt'],
        ['files[1][content]', 'changed'],
        ['save', '1'],
      ]);
      assert.equal(res.statusCode, 303, res.body);
      const raw = (path: string) => t.api('GET', `/snippets/${s.id}/files/main/${path}/raw`, alice.token);
      assert.equal((await raw('large.html')).body, large);
      assert.equal((await raw('small.txt')).body, 'changed');
    });

    it('shows a file the form showed again after Preview, though the browser posts it with CRLF, longer than 1 MB', async () => {
      // 800,000 bytes stored; 1,200,000 as a browser posts them.
      const content = 'a\n'.repeat(400_000);
      const s = await t.must('POST', '/snippets', alice.token, {
        title: 'Lines',
        files: [{ file_path: 'lines.txt', content }],
      });
      const url = `/-/snippets/${s.id}/edit`;
      const form = await page(url, aliceCookie);
      assert.equal(textarea(form.body, 'files[0][content]'), content);
      const fields: [string, string][] = [
        ['base_version', hidden(form.body, 'base_version')!],
        ['title', 'Lines'],
        ['visibility', 'private'],
        ['files[0][previous_path]', 'lines.txt'],
        ['files[0][file_path]', 'lines.txt'],
        ['files[0][content]', `${content.replace(/\n/g, '\r\n')}b\r\n`],
      ];
      const previewed = await submit(url, aliceCookie, [...fields, ['preview', '1']]);
      assert.equal(previewed.statusCode, 200);
      assert.equal(textarea(previewed.body, 'files[0][content]'), `${content.replace(/\n/g, '\r\n')}b\r\n`);
      assert.doesNotMatch(previewed.body, /file-0-content-error/);
      const saved = await submit(url, aliceCookie, [...fields, ['save', '1']]);
      assert.equal(saved.statusCode, 303, saved.body.slice(0, 300));
      assert.equal(
        (await t.api('GET', `/snippets/${s.id}/files/main/lines.txt/raw`, alice.token)).body,
        `${content}b\n`,
      );
    });

    it('edits one file, renames another, deletes a third and adds one, in one commit', async () => {
      const res = await submit(editUrl, aliceCookie, [
        ['base_version', hidden((await page(editUrl, aliceCookie)).body, 'base_version')!],
        ['title', 'Edited'],
        ['description', ''],
        ['visibility', 'private'],
        ['files[0][previous_path]', 'gone.txt'],
        ['files[0][file_path]', 'gone.txt'],
        ['files[0][content]', 'bye'],
        ['files[0][remove]', '1'],
        ['files[1][previous_path]', 'keep.txt'],
        ['files[1][file_path]', 'keep.txt'],
        ['files[1][content]', 'one\r\nTWO\r\n'],
        ['files[2][previous_path]', 'old-name.sh'],
        ['files[2][file_path]', 'new-name.sh'],
        ['files[2][content]', 'echo hi\r\n'],
        ['files[3][file_path]', 'added.txt'],
        ['files[3][content]', 'new'],
        ['save', '1'],
      ]);
      assert.equal(res.statusCode, 303, res.body);
      assert.equal(res.headers.location, `/-/snippets/${id}`);
      const snippet = await t.must('GET', `/snippets/${id}`, alice.token);
      assert.equal(snippet.title, 'Edited');
      assert.deepEqual(snippet.files.map((f: any) => f.path).sort(), ['added.txt', 'keep.txt', 'new-name.sh']);
      const raw = (path: string) => t.api('GET', `/snippets/${id}/files/main/${path}/raw`, alice.token);
      assert.equal((await raw('keep.txt')).body, 'one\nTWO\n');
      assert.equal((await raw('new-name.sh')).body, 'echo hi\n');
      assert.equal((await raw('added.txt')).body, 'new');
      const dir = (await t.gitDir('snippet', id))!;
      const log = await runGit(['log', '--format=%s', '--name-status', '-M', 'main'], dir);
      assert.equal(log.code, 0);
      assert.deepEqual(log.stdout.trim().split('\n').filter(Boolean), [
        'Update snippet',
        'A\tadded.txt',
        'D\tgone.txt',
        'M\tkeep.txt',
        'R100\told-name.sh\tnew-name.sh',
        'Initial commit',
        'A\tgone.txt',
        'A\tkeep.txt',
        'A\told-name.sh',
      ]);
    });

    it('refuses a save over a change made since the form was opened, showing both versions, losing nothing', async () => {
      const opened = await page(editUrl, aliceCookie);
      const version = hidden(opened.body, 'base_version')!;
      await t.must('PUT', `/snippets/${id}`, alice.token, {
        files: [{ action: 'update', file_path: 'added.txt', content: 'their change' }],
      });
      const res = await submit(editUrl, aliceCookie, [
        ['base_version', version],
        ['title', 'Mine'],
        ['visibility', 'private'],
        ['files[0][previous_path]', 'added.txt'],
        ['files[0][file_path]', 'added.txt'],
        ['files[0][content]', 'my change'],
        ['save', '1'],
      ]);
      assert.equal(res.statusCode, 409);
      assert.match(res.body, /This snippet was changed since you opened it\. Nothing was saved\./);
      assert.match(res.body, /<h2 id="theirs-heading">The snippet as it is now<\/h2>/);
      assert.match(res.body, /<summary>added\.txt<\/summary>\n<pre class="code"><code>their change<\/code><\/pre>/);
      assert.equal(textarea(res.body, 'files[0][content]'), 'my change');
      const raw = await t.api('GET', `/snippets/${id}/files/main/added.txt/raw`, alice.token);
      assert.equal(raw.body, 'their change');
      assert.equal((await t.must('GET', `/snippets/${id}`, alice.token)).title, 'Edited');
      // The refused form carries the version it showed: saving it now is a choice made knowing both.
      const again = await t.request({
        method: 'POST',
        url: editUrl,
        token: null,
        headers: { ...FORM, cookie: aliceCookie },
        payload: new URLSearchParams([
          ['authenticity_token', hidden(res.body, 'authenticity_token')!],
          ['base_version', hidden(res.body, 'base_version')!],
          ['title', 'Mine'],
          ['visibility', 'private'],
          ['files[0][previous_path]', 'added.txt'],
          ['files[0][file_path]', 'added.txt'],
          ['files[0][content]', 'my change'],
        ]).toString(),
      });
      assert.equal(again.statusCode, 303, again.body);
      assert.equal((await t.api('GET', `/snippets/${id}/files/main/added.txt/raw`, alice.token)).body, 'my change');
    });

    it('a save racing another write made after the form was opened never overwrites it (the version is checked as written)', async () => {
      const post = (url: string, form: string, fields: [string, string][]) =>
        t.request({
          method: 'POST',
          url,
          token: null,
          headers: { ...FORM, cookie: aliceCookie },
          payload: new URLSearchParams([
            ['authenticity_token', hidden(form, 'authenticity_token')!],
            ...fields,
          ]).toString(),
        });
      const saved = (form: string, title: string): [string, string][] => [
        ['base_version', hidden(form, 'base_version')!],
        ['title', title],
        ['description', 'old'],
        ['visibility', 'public'],
        ['files[0][previous_path]', 'a.txt'],
        ['files[0][file_path]', 'a.txt'],
        ['files[0][content]', 'a'],
        ['save', '1'],
      ];
      for (let round = 0; round < 15; round++) {
        const s = await t.must('POST', '/snippets', alice.token, {
          title: 'orig',
          description: 'old',
          visibility: 'public',
          files: [{ file_path: 'a.txt', content: 'a' }],
        });
        const url = `/-/snippets/${s.id}/edit`;
        const [one, two] = [(await page(url, aliceCookie)).body, (await page(url, aliceCookie)).body];
        // Two saves from one opened version: at most one is taken.
        const saves = await Promise.all([post(url, one, saved(one, 'one')), post(url, two, saved(two, 'two'))]);
        assert.deepEqual(saves.map((r) => r.statusCode).sort(), [303, 409], `round ${round}`);
        // A save from a version an API write moved on meanwhile: the API's change stands (private, its description).
        const three = (await page(url, aliceCookie)).body;
        const [pageSave, api] = await Promise.all([
          post(url, three, saved(three, 'three')),
          t.api('PUT', `/snippets/${s.id}`, alice.token, { visibility: 'private', description: 'from the API' }),
        ]);
        assert.equal(api.statusCode, 200);
        const now = await t.must('GET', `/snippets/${s.id}`, alice.token);
        assert.deepEqual(
          [now.visibility, now.description],
          ['private', 'from the API'],
          `round ${round}: ${pageSave.statusCode}`,
        );
        assert.equal(now.title, pageSave.statusCode === 303 ? 'three' : saves[0].statusCode === 303 ? 'one' : 'two');
      }
    });

    it('is neither offered nor open to someone who may not edit', async () => {
      await t.must('PUT', `/snippets/${id}`, alice.token, { visibility: 'internal' });
      const shown = await page(`/-/snippets/${id}`, bobCookie);
      assert.equal(shown.statusCode, 200);
      assert.doesNotMatch(shown.body, /\/edit"|\/delete"/);
      assert.equal((await page(editUrl, bobCookie)).statusCode, 404);
      assert.equal((await page(`/-/snippets/${id}/delete`, bobCookie)).statusCode, 404);
    });
  });

  it('deletes after a confirmation, and only with the form token', async () => {
    const snippet = await t.must('POST', '/snippets', alice.token, {
      title: 'Doomed',
      files: [{ file_path: 'd.txt', content: 'd' }],
    });
    const url = `/-/snippets/${snippet.id}/delete`;
    const confirm = await page(url, aliceCookie);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /Delete <strong>Doomed<\/strong> with all its files and revisions\?/);
    const forged = await submit(url, aliceCookie, [], { token: 'nope' });
    assert.equal(forged.statusCode, 422);
    await t.ok('GET', `/snippets/${snippet.id}`, alice.token, undefined, 200);
    const res = await submit(url, aliceCookie, []);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/dashboard/snippets');
    await t.fails('GET', `/snippets/${snippet.id}`, alice.token, undefined, 404, { message: '404 Snippet Not Found' });
  });

  it('takes a form larger than an anonymous body from a signed-in visitor, its line breaks stored as LF', async () => {
    const content = 'x\r\n'.repeat(512 * 1024);
    const res = await submit('/-/snippets/new', aliceCookie, [
      ['title', 'Large'],
      ['files[0][file_path]', 'large.txt'],
      ['files[0][content]', content],
    ]);
    assert.equal(res.statusCode, 303, res.body.slice(0, 300));
    const id = Number(/(\d+)$/.exec(res.headers.location as string)?.[1]);
    assert.equal((await t.api('GET', `/snippets/${id}/raw`, alice.token)).body, 'x\n'.repeat(512 * 1024));
  });

  it('does not show again a text posted larger than a form shows, and says so next to its field', async () => {
    const large = 'x'.repeat(1024 * 1024 + 1);
    const res = await submit('/-/snippets/new', aliceCookie, [
      ['title', 'Large'],
      ['description', large],
      ['files[0][file_path]', 'small.txt'],
      ['files[0][content]', 'small'],
      ['files[1][file_path]', 'large.txt'],
      ['files[1][content]', large],
      ['preview', '1'],
    ]);
    assert.equal(res.statusCode, 200);
    assert.equal(textarea(res.body, 'description'), '');
    assert.equal(textarea(res.body, 'files[0][content]'), 'small');
    assert.equal(textarea(res.body, 'files[1][content]'), '');
    assert.doesNotMatch(res.body, /<h2>Preview<\/h2>/);
    assert.match(
      res.body,
      /<p class="field-error" id="snippet-description-error">Description is too long \(1 MB\)\. The maximum size is 1 MB\.<\/p>/,
    );
    assert.match(
      res.body,
      /<p class="field-error" id="file-1-content-error">Larger than 1 MB, too large to edit here, so it is not shown again: paste it again and save at once, or add the file with the API or git\.<\/p>/,
    );
    assert.doesNotMatch(res.body, /file-0-content-error/);
    assert.ok(res.body.length < 100_000, `${res.body.length} characters`);
  });

  it("shows a form of at most the instance's file rows and 8 MB of text, however many and whatever characters are sent", async () => {
    // A megabyte of '"' escapes to six: 45 such rows made a 283 MB page (helper-61).
    const quotes = '"'.repeat(1024 * 1024 - 1);
    const rows = Array.from({ length: 14 }, (_, n): [string, string][] => [
      [`files[${n}][file_path]`, `q${n}.txt`],
      [`files[${n}][content]`, quotes],
    ]).flat();
    const res = await submit('/-/snippets/new', aliceCookie, [['title', 'Quotes'], ...rows, ['preview', '1']]);
    assert.equal(res.statusCode, 200);
    assert.ok(res.body.length < 10 * 1024 * 1024, `${res.body.length} characters`);
    // The instance's 10 files and one more, which a save refuses with the API's message.
    assert.equal(res.body.match(/<fieldset class="snippet-file">/g)?.length, 11);
    const shown = Array.from({ length: 11 }, (_, n) => textarea(res.body, `files[${n}][content]`));
    assert.deepEqual(
      shown.map((text) => (text === quotes ? 'shown' : text)),
      ['shown', ...Array(10).fill('')], // 6 MB escaped: a second would pass 8
    );
    assert.match(
      res.body,
      /<p class="field-error" id="file-1-content-error">The form shows at most 8 MB of text, so it is not shown again: paste it again and save at once, or add the file with the API or git\.<\/p>/,
    );
    const saved = await submit('/-/snippets/new', aliceCookie, [['title', 'Quotes'], ...rows]);
    assert.equal(saved.statusCode, 422);
    assert.match(saved.body, /Repository Error creating the snippet - Snippet can&#39;t have more than 10 files/);
  });

  it('an edit form keeps the files past its 8 MB of text as they are, and a save leaves them so', async () => {
    const quotes = (n: number) => `${n}${'"'.repeat(1024 * 1024 - 2)}`;
    const files = Array.from({ length: 4 }, (_, n) => ({ file_path: `q${n}.txt`, content: quotes(n) }));
    const snippet = await t.must('POST', '/snippets', alice.token, { title: 'Quotes', visibility: 'private', files });
    const form = await page(`/-/snippets/${snippet.id}/edit`, aliceCookie);
    assert.equal(form.statusCode, 200);
    assert.ok(form.body.length < 10 * 1024 * 1024, `${form.body.length} characters`);
    assert.equal(textarea(form.body, 'files[0][content]'), quotes(0));
    assert.equal(textarea(form.body, 'files[1][content]'), undefined); // 6 MB escaped: a second would pass 8
    assert.match(form.body, /The form shows at most 8 MB of text: it is kept as it is\. You can rename or delete it\./);
    const fields: [string, string][] = [
      ['title', 'Quotes edited'],
      ['base_version', hidden(form.body, 'base_version')!],
      ...files.flatMap((f, n): [string, string][] => [
        [`files[${n}][previous_path]`, f.file_path],
        [`files[${n}][file_path]`, f.file_path],
        ...(n === 0 ? [['files[0][content]', 'edited'] as [string, string]] : []),
      ]),
    ];
    const saved = await submit(`/-/snippets/${snippet.id}/edit`, aliceCookie, fields);
    assert.equal(saved.statusCode, 303, saved.body.slice(0, 500));
    for (const [n, expected] of ['edited', quotes(1), quotes(2), quotes(3)].entries()) {
      const raw = await t.api('GET', `/snippets/${snippet.id}/files/main/q${n}.txt/raw`, alice.token);
      assert.equal(raw.body, expected, `q${n}.txt`);
    }
  });

  it('an edit form shows again, after Preview, the texts it showed, though the browser posts them with CRLF', async () => {
    // 3,670,016 characters escaped each: the two fit the form's 8 MB with LF, not with CRLF (helper-62).
    const text = '"\n'.repeat(512 * 1024);
    const files = ['a.txt', 'b.txt'].map((file_path) => ({ file_path, content: text }));
    const snippet = await t.must('POST', '/snippets', alice.token, { title: 'Lines', visibility: 'private', files });
    const form = await page(`/-/snippets/${snippet.id}/edit`, aliceCookie);
    assert.equal(textarea(form.body, 'files[1][content]'), text);
    const crlf = text.replace(/\n/g, '\r\n');
    const previewed = await submit(`/-/snippets/${snippet.id}/edit`, aliceCookie, [
      ['title', 'Lines'],
      ['base_version', hidden(form.body, 'base_version')!],
      ...files.flatMap((f, n): [string, string][] => [
        [`files[${n}][previous_path]`, f.file_path],
        [`files[${n}][file_path]`, f.file_path],
        [`files[${n}][content]`, crlf],
      ]),
      ['preview', '1'],
    ]);
    assert.equal(previewed.statusCode, 200);
    assert.equal(textarea(previewed.body, 'files[0][content]'), crlf);
    assert.equal(textarea(previewed.body, 'files[1][content]'), crlf);
  });

  it("leaves a file's line breaks as they are when the form sends its text back as the browser shows it", async () => {
    // A textarea's text has LF for every CR, CRLF and LF of the page, and a browser posts each as CRLF: a file of
    // mixed or CR line breaks comes back changed though no one touched it. Before, renaming the snippet (or another
    // file) rewrote them: mixed.txt all CRLF, cr.txt all LF.
    const files = [
      { file_path: 'cr.txt', content: 'x\ry\rz\n' },
      { file_path: 'mixed.txt', content: 'a\r\nb\nc\n' },
      { file_path: 'moved.txt', content: 'm\r\nn\n' },
    ];
    const snippet = await t.must('POST', '/snippets', alice.token, { title: 'Endings', visibility: 'private', files });
    const url = `/-/snippets/${snippet.id}/edit`;
    const form = await page(url, aliceCookie);
    const asPosted = (text: string) => text.replace(/\r\n?/g, '\n').replace(/\n/g, '\r\n');
    for (const [n, f] of files.entries())
      assert.equal(asPosted(textarea(form.body, `files[${n}][content]`)!), asPosted(f.content));
    const res = await submit(url, aliceCookie, [
      ['title', 'Endings renamed'],
      ['visibility', 'private'],
      ['base_version', hidden(form.body, 'base_version')!],
      ...files.flatMap((f, n): [string, string][] => [
        [`files[${n}][previous_path]`, f.file_path],
        [`files[${n}][file_path]`, n === 2 ? 'renamed.txt' : f.file_path],
        [`files[${n}][content]`, asPosted(f.content)],
      ]),
      ['save', '1'],
    ]);
    assert.equal(res.statusCode, 303, res.body.slice(0, 300));
    assert.equal((await t.must('GET', `/snippets/${snippet.id}`, alice.token)).title, 'Endings renamed');
    const raw = (path: string) => t.api('GET', `/snippets/${snippet.id}/files/main/${path}/raw`, alice.token);
    assert.equal((await raw('mixed.txt')).body, 'a\r\nb\nc\n');
    assert.equal((await raw('cr.txt')).body, 'x\ry\rz\n');
    assert.equal((await raw('renamed.txt')).body, 'm\r\nn\n');
  });

  it("keeps a description's line breaks through an edit of the title, and stores a typed one's as LF", async () => {
    // Before, the browser's CRLF went into the description as posted: renaming a snippet rewrote its description.
    const snippet = await t.must('POST', '/snippets', alice.token, {
      title: 'Described',
      description: 'one\ntwo\n\nthree',
      visibility: 'private',
      files: [{ file_path: 'a.txt', content: 'a\n' }],
    });
    const url = `/-/snippets/${snippet.id}/edit`;
    const save = async (title: string, description: string) => {
      const form = await page(url, aliceCookie);
      const res = await submit(url, aliceCookie, [
        ['title', title],
        ['description', description],
        ['visibility', 'private'],
        ['base_version', hidden(form.body, 'base_version')!],
        ['files[0][previous_path]', 'a.txt'],
        ['files[0][file_path]', 'a.txt'],
        ['files[0][content]', 'a\r\n'],
        ['save', '1'],
      ]);
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      return (await t.must('GET', `/snippets/${snippet.id}`, alice.token)).description;
    };
    assert.equal(await save('Renamed', 'one\r\ntwo\r\n\r\nthree'), 'one\ntwo\n\nthree');
    assert.equal(await save('Renamed', 'one\r\ntwo\r\n\r\nfour\r\n'), 'one\ntwo\n\nfour\n');
  });

  it('keeps a title of several lines through an edit of something else, as its field sends it back without them', async () => {
    // A text field drops line breaks from its value (HTML's value sanitization): before, any save of the form
    // joined the lines of a title set through the API.
    const snippet = await t.must('POST', '/snippets', alice.token, {
      title: 'line one\nline two',
      visibility: 'private',
      files: [{ file_path: 'a.txt', content: 'a\n' }],
    });
    const url = `/-/snippets/${snippet.id}/edit`;
    const save = async (title: string, content: string) => {
      const form = await page(url, aliceCookie);
      const res = await submit(url, aliceCookie, [
        ['title', title],
        ['visibility', 'private'],
        ['base_version', hidden(form.body, 'base_version')!],
        ['files[0][previous_path]', 'a.txt'],
        ['files[0][file_path]', 'a.txt'],
        ['files[0][content]', content],
        ['save', '1'],
      ]);
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      return (await t.must('GET', `/snippets/${snippet.id}`, alice.token)).title;
    };
    assert.equal(await save('line oneline two', 'b\r\n'), 'line one\nline two');
    assert.equal(await save('line one, line two', 'c\r\n'), 'line one, line two');
  });

  it('an edit of a snippet with more files than the instance now allows is refused, not dropped', async () => {
    const files = ['a', 'b', 'c', 'd'].map((name) => ({ file_path: `${name}.txt`, content: name }));
    const snippet = await t.must('POST', '/snippets', alice.token, { title: 'Four', visibility: 'private', files });
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { max_snippet_files: 2 });
    try {
      const form = await page(`/-/snippets/${snippet.id}/edit`, aliceCookie);
      const res = await submit(`/-/snippets/${snippet.id}/edit`, aliceCookie, [
        ['title', 'Four'],
        ['base_version', hidden(form.body, 'base_version')!],
        ...files.flatMap((f, n): [string, string][] => [
          [`files[${n}][previous_path]`, f.file_path],
          [`files[${n}][file_path]`, f.file_path],
          [`files[${n}][content]`, n === 3 ? 'd edited' : f.content],
        ]),
      ]);
      // GitLab's answer to a write past the limit; before, rows past it were not read and the save said nothing.
      assert.equal(res.statusCode, 422);
      assert.match(res.body, /Snippet can&#39;t have more than 2 files/);
      assert.equal((await t.api('GET', `/snippets/${snippet.id}/files/main/d.txt/raw`, alice.token)).body, 'd');
    } finally {
      await t.must('PUT', '/application/settings', ROOT_TOKEN, { max_snippet_files: 10 });
    }
  });
});
