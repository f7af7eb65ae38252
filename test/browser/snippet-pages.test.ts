// Snippet pages in real Chromium (Debian's package, driven by playwright-core) against a real server
// process: open the web_url an API answer gives, see highlighted code and rendered Markdown, follow Raw,
// see the embed work on a page of another origin, and no serious accessibility violation (axe-core).
// Screenshots go to test-artifacts/.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
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

describe('snippet pages in Chromium', BROWSER_PASS, () => {
  let server: BrowserTestServer;
  let browser: Browser;
  let otherOrigin: http.Server;
  let snippet: any;
  let secret: any;
  let group: any;
  let groupProject: any;
  let lines: any;
  let notes: any;
  let wide: any;

  const api = (method: string, route: string, body: unknown) => mustApi(server, TOKEN, method, route, body);

  before(async () => {
    server = await startServer('snippetd-browser-', TOKEN, {
      // A budget no rendering here reaches on a loaded machine: the first page starts a render thread, which
      // loads its modules through tsx, and these pages are looked at rendered, not as the plain-text fallback.
      SNIPPETD_RENDER_BUDGET_MS: '60000',
    });
    const project = await api('POST', '/projects', { name: 'web', visibility: 'public' });
    snippet = await api('POST', `/projects/${project.id}/snippets`, {
      title: 'Greeting',
      description: 'Says **hello**.',
      visibility: 'public',
      files: [
        { file_path: 'hello.rb', content: 'def hello\n  puts "hello"\nend\n' },
        { file_path: 'NOTES.md', content: '# Notes\n\n| a | b |\n|---|---|\n| 1 | 2 |\n' },
      ],
    });
    lines = await api('POST', `/projects/${project.id}/snippets`, {
      title: 'Lines',
      visibility: 'public',
      files: [{ file_path: 'count.py', content: Array.from({ length: 40 }, (_, i) => `n = ${i + 1}\n`).join('') }],
    });
    // Lines wider than any screen: the code block scrolls, and a keyboard must reach it.
    wide = await api('POST', `/projects/${project.id}/snippets`, {
      title: 'Wide',
      visibility: 'public',
      files: [
        { file_path: 'wide.js', content: `const wide = '${'wide '.repeat(80)}';\n` },
        { file_path: 'WIDE.md', content: `# Wide\n\n\`\`\`\n${'wide '.repeat(80)}\n\`\`\`\n` },
      ],
    });
    notes = await api('POST', `/projects/${project.id}/snippets`, {
      title: 'Rendered Markdown',
      visibility: 'public',
      description: 'See the [usage](#usage).',
      files: [
        {
          file_path: 'GUIDE.md',
          content: `# Guide

## Usage

| Name | Count | Price |
|:-----|:-----:|------:|
| tea  | 2     | 3.50  |

- [x] boil the water
- [ ] pour it[^1]

<details><summary>Why <b>tea</b>?</summary>

Press <kbd>Enter</kbd> to agree, x<sup>2</sup>.

</details>

[^1]: Not too hot.
`,
        },
      ],
    });
    const member = await api('POST', '/users', {
      username: 'member',
      email: 'member@example.com',
      name: 'Member',
      password: 'correct horse battery',
    });
    // A token, so that the tokens page shows its table (481 px wide on a phone before it stacked its rows).
    await api('POST', `/users/${member.id}/personal_access_tokens`, { name: 'laptop', scopes: ['read_api'] });
    const privateProject = await api('POST', '/projects', { name: 'inner', visibility: 'private' });
    await api('POST', `/projects/${privateProject.id}/members`, { user_id: member.id, access_level: 20 });
    secret = await api('POST', `/projects/${privateProject.id}/snippets`, {
      title: 'Secret plan',
      visibility: 'private',
      files: [{ file_path: 'plan.txt', content: 'the plan' }],
    });
    group = await api('POST', '/groups', { name: 'Team', path: 'team', visibility: 'public' });
    groupProject = await api('POST', '/projects', { name: 'templates', namespace_id: group.id, visibility: 'public' });
    await api('POST', `/projects/${groupProject.id}/repository/files/${encodeURIComponent('ci/deploy.yml')}`, {
      branch: 'main',
      content: 'deploy:\n  script: make deploy\n',
      commit_message: 'Add a CI template',
    });
    browser = await launchChromium();
    // A page on another origin (localhost, not 127.0.0.1) that embeds the snippet.
    otherOrigin = http.createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(
        `<!doctype html><title>Blog</title><h1>My blog</h1><script src="${snippet.web_url}.js"></script>` +
          `<h2>Again</h2><script src="${snippet.web_url}.js"></script><h2>Notes</h2><script src="${notes.web_url}.js"></script>` +
          // A blog's own rules for code, which the embed must not take.
          '<style>pre{background:#272822;color:#f8f8f2;border:3px solid red}code{font-size:30px}a{color:red}</style>',
      );
    });
    await new Promise<void>((resolve) => otherOrigin.listen(0, '127.0.0.1', resolve));
  });

  /** One URL of each kind of page, [name, url, whether it needs a signed-in visitor]. */
  function pageTypes(): [name: string, url: string, signedIn?: boolean][] {
    const projectUrl =
      new URL(snippet.web_url).origin + new URL(snippet.web_url).pathname.replace(/\/-\/snippets\/\d+$/, '');
    return [
      ['snippet', snippet.web_url],
      ['markdown', notes.web_url],
      ['lines', `${lines.web_url}#L3-5`],
      ['wide', wide.web_url],
      ['sign-in', `${server.url}/users/sign_in`],
      ['project', projectUrl],
      ['project-snippets', `${projectUrl}/-/snippets`],
      ['tree', `${groupProject.web_url}/-/tree/main/ci`],
      ['blob', `${groupProject.web_url}/-/blob/main/ci/deploy.yml`],
      ['group', group.web_url],
      ['user', `${server.url}/root`],
      ['explore', `${server.url}/explore/snippets`],
      ['search', `${server.url}/search?search=hello`],
      ['not-found', `${server.url}/no/such/page`, true],
      ['dashboard', `${server.url}/dashboard/snippets`, true],
      ['new-snippet', `${server.url}/-/snippets/new`, true],
      ['access-tokens', `${server.url}/-/user_settings/personal_access_tokens`, true],
    ];
  }

  /** Signs in through the form, which then leads to `url`; a tab signed in already is sent there at once. */
  async function signIn(page: Page, username: string, url: string) {
    await page.goto(`${server.url}/users/sign_in?redirect_to=${encodeURIComponent(new URL(url).pathname)}`);
    if (page.url() === url) return;
    await page.getByLabel('Username or email').fill(username);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(url);
  }

  after(async () => {
    await browser?.close();
    otherOrigin?.close();
    await server?.stop();
  });

  it("opens the web_url: highlighted code, rendered Markdown, and the page's own script runs", async () => {
    const page = await browser.newPage();
    const refused: string[] = [];
    page.on('console', (m) => m.type() === 'error' && refused.push(m.text()));
    const res = await page.goto(snippet.web_url);
    assert.equal(res?.status(), 200);
    assert.equal(await page.locator('h1').first().textContent(), 'Greeting');
    assert.equal(await page.locator('#file-2 .hljs-keyword').first().textContent(), 'def');
    assert.equal(await page.locator('#file-1 .markdown table td').first().textContent(), '1');
    assert.equal(await page.locator('.description strong').textContent(), 'hello');
    // The copy buttons are shown by the page's nonce script: the policy let it run, and only it.
    assert.equal(await page.locator('button.copy').first().isVisible(), true);
    assert.deepEqual(refused, []);
    await screenshot(page, 'snippet-page.png');
    await page.close();
  });

  it('fits every page type on a phone-width screen without sideways scrolling', async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
    // One tab goes from page to page: a new tab for each cost a quarter of a second.
    const page = await context.newPage();
    for (const [name, url, signedIn] of pageTypes()) {
      if (signedIn) await signIn(page, 'member', url);
      else await page.goto(url);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${name}: ${overflow}px wider than the screen`);
      await screenshot(page, `page-${name}-phone.png`);
    }
    await context.close();
  });

  it('highlights the line #L10 names and the lines #L10-20 name; a click sets one, a shift-click a range', async () => {
    const page = await browser.newPage();
    const background = (n: number) => page.locator(`#L${n}`).evaluate((el) => getComputedStyle(el).backgroundColor);
    await page.goto(`${lines.web_url}#L10`);
    const plain = await background(9);
    const lit = await background(10);
    assert.notEqual(lit, plain, 'the named line stands out');
    assert.equal(await background(11), plain);
    // The line number is drawn, not text: the code's text is the file's.
    assert.equal(await page.locator('#L10').textContent(), 'n = 10\n');
    assert.equal(
      await page.locator('#L10 a.ln').evaluate((a) => getComputedStyle(a, '::before').content),
      'counter(line)',
    );
    assert.ok(((await page.locator('#L10 a.ln').boundingBox())?.width ?? 0) > 10, 'the number takes its room');
    // A range, opened as a link.
    await page.goto(`${lines.web_url}#L12-14`);
    await page.reload();
    for (const n of [12, 13, 14]) assert.equal(await background(n), lit, `line ${n} of #L12-14`);
    for (const n of [10, 11, 15]) assert.equal(await background(n), plain, `line ${n} outside #L12-14`);
    // A click on a number sets the hash; a shift-click on another extends it to a range.
    await page.locator('#L3 a.ln').click();
    assert.equal(new URL(page.url()).hash, '#L3');
    assert.equal(await background(3), lit);
    assert.equal(await background(12), plain, 'the earlier range is let go');
    await page.locator('#L6 a.ln').click({ modifiers: ['Shift'] });
    assert.equal(new URL(page.url()).hash, '#L3-6');
    for (const n of [3, 4, 5, 6]) assert.equal(await background(n), lit, `line ${n} of the shift-clicked range`);
    assert.equal(await background(7), plain);
    await screenshot(page, 'line-range.png');
    // A range named once the page is open (an edited address, a link on the page) is brought into view.
    await page.setViewportSize({ width: 800, height: 300 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.evaluate(() => {
      location.hash = '#L35-37';
    });
    await page.waitForFunction(() => document.getElementById('L35')?.classList.contains('hll'));
    const seen = await page
      .locator('#L35')
      .evaluate((el) => el.getBoundingClientRect().top >= 0 && el.getBoundingClientRect().bottom <= innerHeight);
    assert.ok(seen, 'line 35 is in view');
    // Its numbers keep their contrast on the highlight (axe-core: 4.36:1 before).
    assert.deepEqual(await axeViolations(page), []);
    // A repository file's lines too.
    await page.goto(`${groupProject.web_url}/-/blob/main/ci/deploy.yml#L2`);
    assert.notEqual(
      await page.locator('#L2').evaluate((el) => getComputedStyle(el).backgroundColor),
      await page.locator('#L1').evaluate((el) => getComputedStyle(el).backgroundColor),
    );
    await page.close();
  });

  it('takes an address whose fragment is not valid percent-encoding without failing, and still follows a line', async () => {
    // Before, decodeURIComponent threw on `#%E0`: the page's script ended with "URI malformed" at every load.
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${lines.web_url}#%E0`);
    await page.evaluate(() => {
      location.hash = '#L%E0-2';
    });
    await page.evaluate(() => {
      location.hash = '#L7';
    });
    await page.waitForFunction(() => document.getElementById('L7')?.classList.contains('hll'));
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('renders Markdown as GitLab: aligned table, task list with labels, details, footnote, heading anchors', async () => {
    const page = await browser.newPage({ viewport: { width: 1000, height: 400 } });
    const refused: string[] = [];
    page.on('console', (m) => m.type() === 'error' && refused.push(m.text()));
    await page.goto(notes.web_url);
    const md = page.locator('#file-1 .markdown');
    const align = (cell: string) => md.locator(cell).evaluate((el) => getComputedStyle(el).textAlign);
    assert.equal(await align('th:nth-child(1)'), 'left');
    assert.equal(await align('td:nth-child(2)'), 'center');
    assert.equal(await align('td:nth-child(3)'), 'right');
    assert.equal(await page.getByLabel('boil the water').isChecked(), true);
    assert.equal(await page.getByLabel('pour it').isChecked(), false);
    assert.equal(await page.getByLabel('pour it').isDisabled(), true);
    const details = md.locator('details');
    assert.equal(await details.locator('kbd').isVisible(), false, 'closed until opened');
    await details.locator('summary').click();
    assert.equal(await details.locator('kbd').textContent(), 'Enter');
    assert.equal(await details.locator('kbd').isVisible(), true);
    // The footnote reference leads to the note, and back.
    await md.locator('sup.footnote-ref a').click();
    assert.match(new URL(page.url()).hash, /^#fn-1-\d+$/);
    assert.equal(
      await md
        .locator('.footnotes li:target')
        .textContent()
        .then((t) => t?.trim()),
      'Not too hot. ↩︎',
    );
    // A link to a heading by its name reaches its anchor (user-content-usage), as GitLab's script does.
    await page.locator('.description a', { hasText: 'usage' }).click();
    assert.equal(new URL(page.url()).hash, '#usage');
    assert.ok(await page.locator('#user-content-usage').isVisible());
    const top = await page.locator('#user-content-usage').evaluate((el) => el.getBoundingClientRect().top);
    assert.ok(Math.abs(top) < 50, `the heading scrolled to the top: ${top}`);
    // A heading's text starts where a paragraph's does: its anchor sits in the margin (it pulled the text
    // against the file's border).
    const textLeft = (selector: string) =>
      md.locator(selector).evaluate((el) => {
        const range = document.createRange();
        range.selectNodeContents(el.lastChild as Node);
        return range.getBoundingClientRect().left;
      });
    assert.equal(await textLeft('h1'), await md.locator('table').evaluate((el) => el.getBoundingClientRect().left));
    assert.deepEqual(refused, []);
    await screenshot(page, 'markdown-page.png');
    await page.close();
  });

  it('copies the clone URL with its button', async () => {
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.url).origin });
    const page = await context.newPage();
    await page.goto(snippet.web_url);
    await page.getByRole('button', { name: 'Copy clone with https' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), snippet.http_url_to_repo);
    await page.getByRole('button', { name: 'Copy hello.rb' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'def hello\n  puts "hello"\nend\n');
    await context.close();
  });

  it('follows Raw to the file as plain text', async () => {
    const page = await browser.newPage();
    await page.goto(snippet.web_url);
    await page.locator('#file-2 a', { hasText: 'Raw' }).click();
    await page.waitForURL(snippet.files.find((f: any) => f.path === 'hello.rb').raw_url);
    assert.equal(await page.locator('body').textContent(), 'def hello\n  puts "hello"\nend\n');
    await page.close();
  });

  it('renders the embed on a page of another origin', async () => {
    const page = await browser.newPage();
    await page.goto(`http://localhost:${(otherOrigin.address() as AddressInfo).port}/`);
    assert.equal(await page.locator('.snippetd-embed .hljs-keyword').first().textContent(), 'def');
    assert.equal(await page.locator('.snippetd-embed-title a').first().getAttribute('href'), snippet.web_url);
    assert.equal(await page.locator('.snippetd-embed').count(), 3);
    // Three embeds, two of one snippet: no id twice, links within each embed to its own elements.
    const ids = await page.evaluate(() => [...document.querySelectorAll('[id]')].map((el) => el.id));
    assert.ok(ids.length > 10);
    assert.deepEqual(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
    );
    const dangling = await page.evaluate(() =>
      [...document.querySelectorAll('.snippetd-embed a[href^="#"]')]
        .map((a) => a.getAttribute('href')!.slice(1))
        .filter((id) => !document.getElementById(id)),
    );
    assert.deepEqual(dangling, []);
    // Line numbers lead to the line on the snippet's page.
    assert.equal(
      await page.locator('.snippetd-embed').first().locator('a.ln').first().getAttribute('href'),
      `${snippet.web_url}#file-2-L1`,
    );
    // The page's own pre, code and a rules reach none of the embed's colours or sizes.
    const pre = page.locator('.snippetd-embed pre').first();
    assert.deepEqual(
      await pre.evaluate((el) => {
        const style = getComputedStyle(el);
        const code = getComputedStyle(el.querySelector('code')!);
        return [style.backgroundColor, style.color, style.borderTopWidth, code.fontSize];
      }),
      ['rgb(255, 255, 255)', 'rgb(31, 31, 36)', '0px', '13px'],
    );
    assert.equal(
      await page
        .locator('.snippetd-embed-title a')
        .first()
        .evaluate((el) => getComputedStyle(el).color),
      'rgb(16, 104, 191)',
    );
    await screenshot(page, 'snippet-embed.png');
    await page.close();
  });

  it('every page type, light and dark, has no serious or critical accessibility violations (axe-core)', async () => {
    const pages = pageTypes();
    for (const colorScheme of ['light', 'dark'] as const) {
      // axe is injected as a script, which the page's policy rightly refuses: this context bypasses it.
      const context = await browser.newContext({ colorScheme });
      // One tab goes from page to page (a new tab for each cost a quarter of a second, and axe's compile more).
      const page = await context.newPage();
      for (const [name, url, signedIn] of pages) {
        if (signedIn) await signIn(page, 'member', url);
        else await page.goto(url);
        const violations = await axeViolations(page, ['serious', 'critical']);
        assert.deepEqual(violations, [], `${name} (${colorScheme}): ${url}`);
        await screenshot(page, `page-${name}-${colorScheme}.png`);
      }
      await context.close();
    }
  });

  it('a visitor opening a private snippet signs in and is back on it; signed out, is sent to sign in again', async () => {
    const page = await browser.newPage();
    const signInUrl = `${server.url}/users/sign_in?redirect_to=${encodeURIComponent(new URL(secret.web_url).pathname)}`;
    assert.equal((await page.goto(secret.web_url))?.status(), 200);
    assert.equal(page.url(), signInUrl);
    assert.equal(await page.locator('h1').textContent(), 'Sign in');
    await page.getByLabel('Username or email').fill('member');
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(secret.web_url);
    assert.equal(await page.locator('h1').textContent(), 'Secret plan');
    await screenshot(page, 'signed-in-private-snippet.png');
    await page.locator('.user-menu summary').click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${server.url}/`);
    await page.goto(secret.web_url);
    assert.equal(page.url(), signInUrl);
    await page.close();
  });

  it('a visitor sent to sign in from a line of a private snippet is back on that line', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${secret.web_url}#L1`);
    assert.equal(await page.locator('h1').textContent(), 'Sign in');
    await page.getByLabel('Username or email').fill('member');
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${secret.web_url}#L1`);
    assert.equal(await page.locator('h1').textContent(), 'Secret plan');
    await context.close();
  });

  it('a snippet a signed-in visitor may not see is a 404 page', async () => {
    const page = await browser.newPage();
    const missing = `${snippet.web_url.replace(/\d+$/, '')}999999`;
    await signIn(page, 'member', snippet.web_url);
    const res = await page.goto(missing);
    assert.equal(res?.status(), 404);
    assert.equal(await page.locator('h1').textContent(), 'Page not found');
    await page.close();
  });
});
