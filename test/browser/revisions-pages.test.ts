// A snippet's revisions pages in real Chromium (as test/browser/snippet-pages.test.ts: Debian's chromium through
// playwright-core, a real server process): from the snippet page to its revisions, to one revision's diff with
// a rename and highlighted lines, to a file's raw at that revision; both pages, light and dark, with no
// accessibility violation of any impact (axe-core) and no sideways scrolling on a phone. Screenshots go to
// test-artifacts/.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import {
  axeViolations,
  BROWSER_PASS,
  launchChromium,
  type BrowserTestServer,
  mustApi,
  startServer,
  screenshot,
} from './support.ts';

const TOKEN = 'browser-test-root-token-0123456789';

describe('revisions pages in Chromium', BROWSER_PASS, () => {
  let server: BrowserTestServer;
  let browser: Browser;
  let projectSnippet: any;
  let personalSnippet: any;
  /** A commit of a project's repository: its page is a revision's, with the project's links. */
  let commitPage: string;
  /** Two commits of it compared (the compare API's web_url): the commits between, and the diff. */
  let comparePage: string;

  const api = (method: string, route: string, body: unknown) => mustApi(server, TOKEN, method, route, body);

  before(async () => {
    server = await startServer('snippetd-browser-revisions-', TOKEN);
    const project = await api('POST', '/projects', { name: 'web', visibility: 'public' });
    projectSnippet = await api('POST', `/projects/${project.id}/snippets`, {
      title: 'Greeting',
      visibility: 'public',
      files: [
        { file_path: 'hello.rb', content: 'def hello\n  puts "hello"\nend\n' },
        { file_path: 'notes.txt', content: 'first\nsecond\nthird\n' },
      ],
    });
    await api('PUT', `/projects/${project.id}/snippets/${projectSnippet.id}`, {
      files: [
        { action: 'update', file_path: 'hello.rb', content: 'def hello(name)\n  puts "hello #{name}"\nend\n' },
        { action: 'move', previous_path: 'notes.txt', file_path: 'NOTES.txt', content: 'first\nsecond\nthird\n' },
      ],
    });
    personalSnippet = await api('POST', '/snippets', {
      title: 'Counter',
      visibility: 'public',
      files: [{ file_path: 'count.py', content: 'n = 0\n' }],
    });
    for (let i = 1; i <= 24; i++)
      await api('PUT', `/snippets/${personalSnippet.id}`, {
        files: [{ action: 'update', file_path: 'count.py', content: `n = ${i}\nprint("n is", n)\n` }],
      });
    for (const [method, content] of [
      ['POST', 'def hello\n  puts "hello"\nend\n'],
      ['PUT', 'def hello(name)\n  puts "hello #{name}"\nend\n'],
    ])
      await api(method, `/projects/${project.id}/repository/files/hello.rb`, {
        branch: 'main',
        content,
        commit_message: `${method} hello.rb`,
      });
    commitPage = (await api('GET', `/projects/${project.id}/repository/commits`, undefined))[0].web_url;
    const compared = await api('GET', `/projects/${project.id}/repository/compare?from=main~1&to=main`, undefined);
    comparePage = compared.web_url;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('goes from the snippet to its revisions, to a diff with a rename, to a file raw at that revision', async () => {
    const page = await browser.newPage();
    const refused: string[] = [];
    page.on('console', (m) => m.type() === 'error' && refused.push(m.text()));
    await page.goto(projectSnippet.web_url);
    await page.getByRole('link', { name: 'Revisions' }).click();
    await page.waitForURL(`${projectSnippet.web_url}/revisions`);
    assert.equal(await page.locator('h1').textContent(), 'Revisions');
    assert.deepEqual(await page.locator('.revision h2').allTextContents(), ['Update snippet', 'Initial commit']);
    await screenshot(page, 'revisions-list.png');

    await page.locator('.revision h2 a').first().click();
    await page.waitForURL(new RegExp(`${projectSnippet.web_url}/revisions/[0-9a-f]{40}$`));
    const sha = page.url().split('/').at(-1)!;
    assert.equal(await page.locator('h1').textContent(), 'Update snippet');
    assert.deepEqual(await page.locator('.diff-file h2').allTextContents(), ['notes.txt → NOTES.txt', 'hello.rb']);
    assert.equal(await page.locator('#diff-1 .notice').textContent(), 'Renamed without changes.');
    assert.equal(await page.locator('#diff-2 tr.added .hljs-keyword').first().textContent(), 'def');
    assert.equal(await page.locator('#diff-2 tr.deleted del').first().textContent(), 'def hello');
    await screenshot(page, 'revisions-diff.png');

    await page.locator('#diff-2 a', { hasText: 'Raw' }).click();
    await page.waitForURL(`${projectSnippet.web_url}/raw/${sha}/hello.rb`);
    assert.equal(await page.locator('body').textContent(), 'def hello(name)\n  puts "hello #{name}"\nend\n');
    assert.deepEqual(refused, []);
    await page.close();
  });

  it("pages a personal snippet's revisions with Older and Newer", async () => {
    const page = await browser.newPage();
    await page.goto(`${personalSnippet.web_url}/revisions`);
    assert.equal(await page.locator('.revision').count(), 20);
    await page.getByRole('link', { name: 'Older' }).click();
    await page.waitForURL(`${personalSnippet.web_url}/revisions?page=2`);
    assert.deepEqual(await page.locator('.revision h2').allTextContents(), [
      'Update snippet',
      'Update snippet',
      'Update snippet',
      'Update snippet',
      'Initial commit',
    ]);
    await page.getByRole('link', { name: 'Newer' }).click();
    await page.waitForURL(`${personalSnippet.web_url}/revisions?page=1`);
    assert.equal(await page.locator('.revision').count(), 20);
    await page.close();
  });

  /** Both new pages of both kinds of snippet: [name, url]. */
  async function revisionPages(): Promise<[string, string][]> {
    const firstRevision = async (web: string) => {
      const page = await browser.newPage();
      await page.goto(`${web}/revisions`);
      const href = (await page.locator('.revision h2 a').first().getAttribute('href'))!;
      await page.close();
      return href;
    };
    return [
      ['project-revisions', `${projectSnippet.web_url}/revisions`],
      ['project-revision', await firstRevision(projectSnippet.web_url)],
      ['personal-revisions', `${personalSnippet.web_url}/revisions`],
      ['personal-revision', await firstRevision(personalSnippet.web_url)],
      ['project-commit', commitPage],
      ['project-compare', comparePage],
    ];
  }

  it('fits both pages on a phone-width screen without sideways scrolling', async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
    // One tab goes from page to page: a new tab for each cost a quarter of a second.
    const page = await context.newPage();
    for (const [name, url] of await revisionPages()) {
      await page.goto(url);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${name}: ${overflow}px wider than the screen`);
      await screenshot(page, `page-${name}-phone.png`);
    }
    await context.close();
  });

  it('both pages, light and dark, have no accessibility violations (axe-core)', async () => {
    const pages = await revisionPages();
    for (const colorScheme of ['light', 'dark'] as const) {
      // axe is injected as a script, which the page's policy rightly refuses: this context bypasses it.
      const context = await browser.newContext({ colorScheme });
      // One tab goes from page to page (a new tab for each cost a quarter of a second, and axe's compile more).
      const page = await context.newPage();
      for (const [name, url] of pages) {
        await page.goto(url);
        assert.deepEqual(await axeViolations(page), [], `${name} (${colorScheme}): ${url}`);
        await screenshot(page, `page-${name}-${colorScheme}.png`);
      }
      await context.close();
    }
  });
});
