// Writing snippets in real Chromium against a real server process: from the header's "New snippet", a
// two-file personal snippet; then edit one file and rename the other, and see both revisions and the
// edit's diff; delete it after the confirmation; a
// project snippet from the project's list; a personal access token made on its page and used with the API.
// Files are typed into the code editor over each textarea, as a person does (snippet-editor.test.ts tests
// the editor itself). What was written is read back through the API. Every new page has no accessibility
// violation at all (axe-core), light and dark; screenshots go to test-artifacts/.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  axeViolations,
  BROWSER_PASS,
  launchChromium,
  type BrowserTestServer,
  startServer,
  screenshot,
} from './support.ts';

const TOKEN = 'browser-forms-root-token-0123456789';
const PASSWORD = 'correct horse battery';

describe('snippet forms in Chromium', BROWSER_PASS, () => {
  let server: BrowserTestServer;
  let browser: Browser;
  let context: BrowserContext;
  let project: any;

  async function api(method: string, route: string, body?: unknown, token = TOKEN) {
    const res = await fetch(`${server.url}/api/v4${route}`, {
      method,
      headers: { 'PRIVATE-TOKEN': token, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json().catch(() => null)) as any };
  }
  const raw = async (id: number, file: string) =>
    (
      await fetch(`${server.url}/api/v4/snippets/${id}/files/main/${file}/raw`, { headers: { 'PRIVATE-TOKEN': TOKEN } })
    ).text();

  async function signIn(page: Page) {
    await page.goto(`${server.url}/users/sign_in`);
    await page.getByLabel('Username or email').fill('alice');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/`);
  }

  /** No accessibility violation of any impact on the page as it is now, light and dark. */
  async function accessible(page: Page, name: string) {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      assert.deepEqual(await axeViolations(page), [], `${name} (${colorScheme}): ${page.url()}`);
      await screenshot(page, `form-${name}-${colorScheme}.png`);
    }
  }
  /** Where a person types file `n`: the code editor over its textarea (editor.ts), which the form posts. */
  const editorOf = (page: Page, n: number) => page.locator(`#file-${n}-content + .cm-editor .cm-content`);

  before(async () => {
    server = await startServer('snippetd-browser-forms-', TOKEN);
    const alice = await api('POST', '/users', {
      username: 'alice',
      email: 'alice@example.com',
      name: 'Alice',
      password: PASSWORD,
    });
    project = (await api('POST', '/projects', { name: 'team', visibility: 'internal' })).json;
    await api('POST', `/projects/${project.id}/members`, { user_id: alice.json.id, access_level: 30 });
    browser = await launchChromium();
    // axe is injected as a script, which the pages' policy rightly refuses: this context bypasses it.
    context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    // Signed in once: the sign-in page sends someone already signed in on, as GitLab's does.
    const page = await context.newPage();
    await signIn(page);
    await page.close();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('creates a two-file personal snippet, edits one file and renames the other, then deletes it', async () => {
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New snippet' }).click();
    await page.waitForURL(`${server.url}/-/snippets/new`);
    await accessible(page, 'new');

    await page.getByLabel('Title').fill('Made in the browser');
    await page.getByLabel('Description (optional, Markdown)').fill('Two *files*');
    await page.getByLabel('File name').fill('hello.py');
    await editorOf(page, 0).fill('print("hello")\n');
    // A title left empty is refused with its message, and nothing typed is lost.
    await page.getByLabel('Title').fill('');
    await page.getByRole('button', { name: 'Create snippet' }).click();
    await page.waitForSelector('#snippet-title-error');
    assert.equal(await page.locator('#snippet-title-error').textContent(), "Title can't be blank");
    assert.equal(await page.locator('#file-0-content').inputValue(), 'print("hello")\n');
    assert.equal(await editorOf(page, 0).textContent(), 'print("hello")');
    await accessible(page, 'new-refused');

    await page.getByLabel('Title').fill('Made in the browser');
    await page.getByRole('button', { name: 'Add another file' }).click();
    await page.waitForSelector('#file-1-path');
    await page.locator('#file-1-path').fill('notes.txt');
    await editorOf(page, 1).fill('first line\nsecond line\n');
    await page.getByRole('radio', { name: /Internal/ }).check();
    await page.getByRole('button', { name: 'Create snippet' }).click();
    await page.waitForURL(/\/-\/snippets\/\d+$/);
    const id = Number(/(\d+)$/.exec(page.url())![1]);
    assert.equal(await page.locator('h1').textContent(), 'Made in the browser');
    const created = (await api('GET', `/snippets/${id}`)).json;
    assert.deepEqual(
      [created.title, created.description, created.visibility, created.author.username],
      ['Made in the browser', 'Two *files*', 'internal', 'alice'],
    );
    assert.equal(await raw(id, 'notes.txt'), 'first line\nsecond line\n');

    await page.getByRole('link', { name: 'Edit' }).click();
    await page.waitForURL(`${server.url}/-/snippets/${id}/edit`);
    await accessible(page, 'edit');
    await page.locator('#file-0-path').fill('greet.py');
    await editorOf(page, 1).fill('first line\nchanged line\n');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(`${server.url}/-/snippets/${id}`);
    const edited = (await api('GET', `/snippets/${id}`)).json;
    assert.deepEqual(edited.files.map((f: any) => f.path).sort(), ['greet.py', 'notes.txt']);
    assert.equal(await raw(id, 'greet.py'), 'print("hello")\n');
    assert.equal(await raw(id, 'notes.txt'), 'first line\nchanged line\n');

    // Both revisions, newest first; the edit's diff shows the rename as a rename and the changed line.
    await page.getByRole('link', { name: 'Revisions' }).click();
    await page.waitForURL(`${server.url}/-/snippets/${id}/revisions`);
    assert.deepEqual(await page.locator('li.revision h2').allTextContents(), ['Update snippet', 'Initial commit']);
    await page.getByRole('link', { name: 'Update snippet' }).click();
    await page.waitForURL(new RegExp(`/-/snippets/${id}/revisions/[0-9a-f]{40}$`));
    const files = await page.locator('.revision-diff h2').allTextContents();
    assert.deepEqual(files.sort(), ['hello.py → greet.py', 'notes.txt']);
    assert.match((await page.locator('.revision-diff').textContent()) ?? '', /changed line/);
    await screenshot(page, 'form-revision-diff.png');
    await page.goto(`${server.url}/-/snippets/${id}`);

    await page.getByRole('link', { name: 'Delete' }).click();
    await page.waitForURL(`${server.url}/-/snippets/${id}/delete`);
    await accessible(page, 'delete');
    await page.getByRole('button', { name: 'Delete snippet' }).click();
    await page.waitForURL(`${server.url}/dashboard/snippets`);
    assert.equal((await api('GET', `/snippets/${id}`)).status, 404);
    await page.close();
  });

  it("creates a project snippet from the project's snippet list", async () => {
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await page.goto(`${project.web_url}/-/snippets`);
    await page.getByRole('link', { name: 'New snippet' }).last().click();
    await page.waitForURL(`${project.web_url}/-/snippets/new`);
    // The project is internal: public is not offered.
    assert.equal(await page.getByRole('radio', { name: /Public/ }).count(), 0);
    await page.getByLabel('Title').fill('Team notes');
    await page.getByLabel('File name').fill('team.md');
    await editorOf(page, 0).fill('# Team\n');
    await page.getByRole('button', { name: 'Create snippet' }).click();
    await page.waitForURL(new RegExp(`${project.path_with_namespace}/-/snippets/\\d+$`));
    const id = Number(/(\d+)$/.exec(page.url())![1]);
    const snippet = (await api('GET', `/projects/${project.id}/snippets/${id}`)).json;
    assert.deepEqual([snippet.title, snippet.project_id], ['Team notes', project.id]);
    await page.close();
  });

  it("keeps the edit form within a phone's width when a file is one long line", async () => {
    const page = await context.newPage();
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(`${server.url}/`);
    const [alice] = (await api('GET', '/users?username=alice')).json;
    const token = (await api('POST', `/users/${alice.id}/personal_access_tokens`, { name: 'phone', scopes: ['api'] }))
      .json.token;
    const body = {
      title: 'Minified',
      visibility: 'private',
      files: [{ file_path: 'app.min.js', content: `var a=${'1+'.repeat(5000)}1;` }],
    };
    const created = await api('POST', '/snippets', body, token);
    await page.goto(`${created.json.web_url}/edit`);
    await page.locator('.cm-editor').waitFor();
    // A fieldset is as wide as its widest content by default: the whole form ran off the screen.
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(widths[0] <= widths[1], `the page is ${widths[0]} px wide in a ${widths[1]} px window`);
    await accessible(page, 'edit-long-line');
    await page.close();
  });

  it('saves a title of 255 characters beyond the BMP, as the API counts them, typed or edited', async () => {
    // maxlength counts UTF-16 code units: a title of 200 emoji (400 of them), which the API takes, could not be
    // saved once its field was edited, and no more than 127 could be typed.
    const page = await context.newPage();
    await page.goto(`${server.url}/-/snippets/new`);
    await page.getByLabel('Title').fill('😀'.repeat(255));
    await page.getByLabel('File name').fill('a.txt');
    await editorOf(page, 0).fill('a\n');
    await page.getByRole('button', { name: 'Create snippet' }).click();
    await page.waitForURL(/\/-\/snippets\/\d+$/);
    await page.goto(`${page.url()}/edit`);
    await page.getByLabel('Title').press('End');
    await page.getByLabel('Title').press('Backspace');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(/\/-\/snippets\/\d+$/);
    const id = Number(/(\d+)$/.exec(page.url())![1]);
    assert.equal((await api('GET', `/snippets/${id}`)).json.title, '😀'.repeat(254));
    await page.close();
  });

  it('makes a personal access token, shown once, that works with the API', async () => {
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await page.locator('.user-menu summary').click();
    await page.getByRole('link', { name: 'Access tokens' }).click();
    await page.waitForURL(`${server.url}/-/user_settings/personal_access_tokens`);
    await accessible(page, 'tokens');
    await page.getByLabel('Token name').fill('laptop');
    await page.getByRole('checkbox', { name: /^read_api/ }).check();
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.waitForSelector('#created-token');
    const plain = await page.locator('#created-token').inputValue();
    const me = await api('GET', '/user', undefined, plain);
    assert.deepEqual([me.status, me.json.username], [200, 'alice']);
    await accessible(page, 'token-created');
    // Asked again first: the summary opens the confirmation, whose button revokes.
    await page.getByLabel('Revoke laptop').click();
    await accessible(page, 'token-revoke-confirm');
    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    await page.waitForURL(`${server.url}/-/user_settings/personal_access_tokens`);
    assert.equal((await api('GET', '/user', undefined, plain)).status, 401);
    await page.close();
  });
});
