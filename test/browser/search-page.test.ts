// The search page in real Chromium against a real server process: a term typed into the header's search box
// leads to the results, each with its matching line marked and linked to the snippet; a filter narrows them;
// and no accessibility violation of any impact (axe-core), light and dark. Screenshots go to test-artifacts/.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  axeViolations,
  BROWSER_PASS,
  launchChromium,
  type BrowserTestServer,
  mustApi,
  startServer,
  screenshot,
} from './support.ts';

const TOKEN = 'browser-search-root-token-0123456789';

describe('search page in Chromium', BROWSER_PASS, () => {
  let server: BrowserTestServer;
  let browser: Browser;
  let context: BrowserContext;
  let ruby: any;

  const api = (method: string, route: string, body: unknown) => mustApi(server, TOKEN, method, route, body);

  /** No accessibility violation of any impact on the page as it is now, light and dark. */
  async function accessible(page: Page, name: string) {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      assert.deepEqual(await axeViolations(page), [], `${name} (${colorScheme}): ${page.url()}`);
      await screenshot(page, `search-${name}-${colorScheme}.png`);
    }
  }

  before(async () => {
    server = await startServer('snippetd-browser-search-', TOKEN);
    ruby = await api('POST', '/snippets', {
      title: 'Ruby greeting',
      description: 'Says hello to the ocelot.',
      visibility: 'public',
      files: [
        { file_path: 'hello.rb', content: 'def hello\n  puts "hello, ocelot"\nend\n' },
        { file_path: 'README.md', content: '# Ocelot\n' },
      ],
    });
    await api('POST', '/snippets', {
      title: 'Python greeting',
      visibility: 'public',
      files: [{ file_path: 'hello.py', content: 'print("ocelot")\n' }],
    });
    await api('POST', '/snippets', {
      title: 'Hidden',
      visibility: 'private',
      files: [{ file_path: 'x.txt', content: 'ocelot\n' }],
    });
    browser = await launchChromium();
    // axe is injected as a script, which the pages' policy rightly refuses: this context bypasses it.
    context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('searches from the header, shows marked lines linked to the snippet, and narrows with a filter', async () => {
    const page = await context.newPage();
    await page.goto(`${server.url}/explore/snippets`);
    const box = page.getByRole('search').getByRole('searchbox', { name: 'Search snippets' });
    await box.fill('ocelot');
    await box.press('Enter');
    await page.waitForURL(`${server.url}/search?search=ocelot`);
    const results = page.locator('.search-result h2');
    assert.deepEqual((await results.allInnerTexts()).sort(), ['Python greeting', 'Ruby greeting']);
    assert.equal(await page.getByRole('status').innerText(), '2 snippets found');
    // Both the header's box and the page's form hold the search.
    assert.equal(await page.getByRole('searchbox', { name: 'Search snippets' }).first().inputValue(), 'ocelot');
    const line = page.getByRole('link', { name: 'hello.rb line 2' });
    assert.equal(
      await line.locator('xpath=following-sibling::code').innerHTML(),
      '  puts "hello, <mark>ocelot</mark>"',
    );
    await accessible(page, 'results');
    await line.click();
    await page.waitForURL(`${ruby.web_url}#file-2-L2`);
    assert.equal(await page.getByRole('heading', { level: 1, name: 'Ruby greeting' }).count(), 1);

    await page.goto(`${server.url}/search`);
    await accessible(page, 'empty');
    const form = page.getByLabel('Search snippets', { exact: true }).last();
    await form.fill('ocelot language:python');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\/search\?search=ocelot\+language%3Apython$/);
    assert.deepEqual(await page.locator('.search-result h2').allInnerTexts(), ['Python greeting']);
    await page.goto(`${server.url}/search?search=nothing+at+all`);
    assert.equal(await page.getByRole('status').innerText(), 'No snippets found.');
    await accessible(page, 'none-found');
    await page.close();
  });
});
