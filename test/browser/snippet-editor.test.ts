// The code editor of the snippet forms in real Chromium against a real server process, under the pages'
// own policy (no bypass): the editor replaces each file's textarea, takes the language from the file name
// and follows it when renamed, what is typed is what the API then reads (a round trip of the form, "Add
// another file", keeps it), no policy violation, no accessibility violation of any impact (axe-core) light
// or dark; with JavaScript off the textarea is the editor and the form works the same. Screenshots go to
// test-artifacts/.
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

const TOKEN = 'editor-test-root-token-0123456789';
const PASSWORD = 'correct horse battery';

describe('the code editor of the snippet forms in Chromium', BROWSER_PASS, () => {
  let server: BrowserTestServer;
  let browser: Browser;
  let project: any;

  async function api(method: string, route: string, body?: unknown) {
    const res = await fetch(`${server.url}/api/v4${route}`, {
      method,
      headers: { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    assert.ok(res.status < 300, `${method} ${route}: ${res.status}`);
    return res;
  }

  /** A file of a project snippet as the API reads it. */
  const rawFile = async (snippetId: number, file: string) =>
    (
      await api('GET', `/projects/${project.id}/snippets/${snippetId}/files/main/${encodeURIComponent(file)}/raw`)
    ).text();

  before(async () => {
    server = await startServer('snippetd-editor-', TOKEN);
    const writer = await (
      await api('POST', '/users', {
        username: 'writer',
        email: 'writer@example.com',
        name: 'Writer',
        password: PASSWORD,
      })
    ).json();
    project = await (await api('POST', '/projects', { name: 'notes', visibility: 'public' })).json();
    await api('POST', `/projects/${project.id}/members`, { user_id: writer.id, access_level: 30 });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** A signed-in page whose console errors (Chromium reports every policy violation there) are collected. */
  async function signedIn(context: BrowserContext): Promise<{ page: Page; errors: string[] }> {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.url}/users/sign_in`);
    await page.getByLabel('Username or email').fill('writer');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/`);
    return { page, errors };
  }

  /** Policy violations seen by the page itself since it loaded. */
  const watchViolations = (page: Page) =>
    page.addInitScript(() => {
      const seen: string[] = [];
      (window as any).policyViolations = seen;
      document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
    });

  const newForm = () => `${project.web_url}/-/snippets/new`;
  const content = (page: Page) => page.getByRole('textbox', { name: 'Content' });
  /** Waits for file `n`'s editor to highlight `language` (each language is a chunk fetched when first asked for). */
  const hasLanguage = (page: Page, n: number, language: string) =>
    page.locator(`#file-${n}-content + .cm-editor .cm-content[data-language="${language}"]`).waitFor();

  it('types into the editor, creates and edits a snippet; the API reads what was typed', async () => {
    const context = await browser.newContext();
    const { page, errors } = await signedIn(context);
    await watchViolations(page);
    const res = await page.goto(newForm());
    assert.equal(res?.status(), 200);
    assert.match(String(res?.headers()['content-security-policy']), /style-src 'self' 'nonce-[^']+';/);
    await page.locator('.cm-editor').waitFor();
    // The textarea is in the form, out of sight; the editor is named by its label.
    assert.equal(await page.locator('textarea.code-input').count(), 1);
    assert.equal(await page.locator('textarea.code-input').isVisible(), false);
    assert.equal(await content(page).isVisible(), true);
    assert.equal(await page.locator('.cm-lineNumbers').isVisible(), true);

    await page.getByLabel('Title').fill('Typed in the editor');
    await page.getByLabel('File name').fill('hello.rb');
    await hasLanguage(page, 0, 'ruby');
    await content(page).click();
    // The closing quote is the editor's own (bracket closing); typing it steps over it.
    await page.keyboard.type('puts "hi"');
    await page.keyboard.press('Enter');
    await page.keyboard.type('puts 2');
    assert.equal(await page.locator('textarea.code-input').inputValue(), 'puts "hi"\nputs 2');
    assert.equal(await page.locator('.cm-content .cm-line').count(), 2);
    // The page's highlighting palette (app.css), not CodeMirror's.
    assert.equal(
      await page.locator('.cm-line span', { hasText: '"hi"' }).evaluate((e) => getComputedStyle(e).color),
      await page.evaluate(() => {
        const probe = document.body.appendChild(document.createElement('span'));
        probe.style.color = 'var(--str)';
        const color = getComputedStyle(probe).color;
        probe.remove();
        return color;
      }),
    );
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(await page.evaluate(() => (window as any).policyViolations), []);
    await screenshot(page, 'snippet-editor-new.png');

    await page.getByRole('button', { name: 'Create snippet' }).click();
    await page.waitForURL(/\/-\/snippets\/\d+$/);
    const id = Number(/(\d+)$/.exec(page.url())![1]);
    assert.equal(await rawFile(id, 'hello.rb'), 'puts "hi"\nputs 2');

    // Edit: the editor opens on the file as saved; a rename changes its language; the change is saved.
    await page.goto(`${page.url()}/edit`);
    await page.locator('.cm-editor').waitFor();
    await hasLanguage(page, 0, 'ruby');
    assert.equal(await content(page).textContent(), 'puts "hi"puts 2');
    await page.getByLabel('File name').fill('hello.py');
    await hasLanguage(page, 0, 'python');
    await content(page).click();
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('# three');
    assert.deepEqual(await page.evaluate(() => (window as any).policyViolations), []);
    await screenshot(page, 'snippet-editor-edit.png');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(new RegExp(`/-/snippets/${id}$`));
    assert.equal(await rawFile(id, 'hello.py'), 'puts "hi"\nputs 2\n# three');
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('"Add another file" keeps what was typed in the editor; every row gets an editor of its own', async () => {
    const context = await browser.newContext();
    const { page, errors } = await signedIn(context);
    await page.goto(newForm());
    await page.locator('.cm-editor').waitFor();
    await page.getByLabel('Title').fill('Two files');
    await page.getByLabel('File name').fill('one.sh');
    await content(page).click();
    await page.keyboard.type('echo one');
    await page.getByRole('button', { name: 'Add another file' }).click();
    await page.locator('.cm-editor').nth(1).waitFor();
    const rows = page.locator('fieldset.snippet-file');
    assert.equal(await rows.count(), 2);
    await hasLanguage(page, 0, 'shell');
    assert.equal(await rows.nth(0).locator('.cm-content').textContent(), 'echo one');
    await rows.nth(1).getByLabel('File name').fill('two.json');
    await rows.nth(1).locator('.cm-content').click();
    await page.keyboard.type('[2');
    await hasLanguage(page, 1, 'json');
    await page.getByRole('button', { name: 'Create snippet' }).click();
    await page.waitForURL(/\/-\/snippets\/\d+$/);
    const id = Number(/(\d+)$/.exec(page.url())![1]);
    assert.equal(await rawFile(id, 'one.sh'), 'echo one');
    assert.equal(await rawFile(id, 'two.json'), '[2]');
    assert.deepEqual(errors, []);
    await context.close();
  });

  it('has no accessibility violation in the dark scheme either, nor a policy violation', async () => {
    const context = await browser.newContext({ colorScheme: 'dark' });
    const { page, errors } = await signedIn(context);
    await watchViolations(page);
    await page.goto(newForm());
    await page.locator('.cm-editor').waitFor();
    await page.getByLabel('File name').fill('app.ts');
    await content(page).click();
    await page.keyboard.type('const answer: number = 42; // typed');
    await hasLanguage(page, 0, 'typescript');
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(await page.evaluate(() => (window as any).policyViolations), []);
    assert.deepEqual(errors, []);
    await screenshot(page, 'snippet-editor-dark.png');
    await context.close();
  });

  it('with JavaScript off, the textarea is the editor and the form creates the snippet', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const { page } = await signedIn(context);
    await page.goto(newForm());
    assert.equal(await page.locator('.cm-editor').count(), 0);
    await page.getByLabel('Title').fill('Typed without JavaScript');
    await page.getByLabel('File name').fill('plain.txt');
    await page.getByLabel('Content').fill('line one\nline two\n');
    await page.getByRole('button', { name: 'Create snippet' }).click();
    await page.waitForURL(/\/-\/snippets\/\d+$/);
    const id = Number(/(\d+)$/.exec(page.url())![1]);
    assert.equal(await rawFile(id, 'plain.txt'), 'line one\nline two\n');
    await context.close();
  });
});
