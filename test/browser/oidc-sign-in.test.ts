// Signing in with OpenID Connect in real Chromium: the sign-in page's provider button, through a real
// provider on loopback (test/oidc-provider.ts) and back, to the page asked for, signed in. Chromium holds
// the redirects that follow a form POST to the page's form-action, so this is where a policy that does not
// let the form reach the provider shows. The sign-in page with the button has no accessibility violation.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import {
  axeViolations,
  BROWSER_PASS,
  launchChromium,
  type BrowserTestServer,
  startServer,
  screenshot,
} from './support.ts';
import type { TestProvider } from '../oidc-provider.ts';

const TOKEN = 'browser-oidc-root-token-0123456789';

describe('signing in with OpenID Connect in Chromium', BROWSER_PASS, () => {
  let op: TestProvider;
  let server: BrowserTestServer;
  let browser: Browser;

  before(async () => {
    // Loaded here, not by the import: in the PostgreSQL pass, where this file skips, the provider cost 1 s a run.
    const { CLIENT_ID, CLIENT_SECRET, startTestProvider } = await import('../oidc-provider.ts');
    op = await startTestProvider({
      'sub-alice': { email: 'alice@corp.example', preferred_username: 'alice', name: 'Alice', groups: ['staff'] },
    });
    server = await startServer('snippetd-browser-oidc-', TOKEN, {
      SNIPPETD_OIDC_ISSUER: op.issuer,
      SNIPPETD_OIDC_CLIENT_ID: CLIENT_ID,
      SNIPPETD_OIDC_CLIENT_SECRET: CLIENT_SECRET,
      SNIPPETD_OIDC_LABEL: 'Company SSO',
      SNIPPETD_OIDC_ALLOWED_GROUPS: 'staff',
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await op?.close();
  });

  it('the button leads through the provider and back to the page asked for, signed in', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const blocked: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/.test(message.text())) blocked.push(message.text());
      });
      await page.goto(`${server.url}/users/sign_in?redirect_to=${encodeURIComponent('/dashboard/snippets')}`);
      await page.getByRole('button', { name: 'Sign in with Company SSO' }).click();
      await page.waitForURL(`${server.url}/dashboard/snippets`);
      assert.deepEqual(blocked, []);
      assert.equal(await page.locator('.user-menu summary').textContent(), 'alice');
      const users = await fetch(`${server.url}/api/v4/users?username=alice`, { headers: { 'PRIVATE-TOKEN': TOKEN } });
      assert.deepEqual(((await users.json()) as any[])[0].identities, [
        { provider: 'openid_connect', extern_uid: 'sub-alice' },
      ]);
    } finally {
      await context.close();
    }
  });

  it('the sign-in page with the provider button has no accessibility violation, light and dark', async () => {
    // axe is injected as a script, which the page's policy rightly refuses.
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/users/sign_in`);
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        assert.deepEqual(await axeViolations(page), [], colorScheme);
        await screenshot(page, `oidc-sign-in-${colorScheme}.png`);
      }
    } finally {
      await context.close();
    }
  });

  it('the sign-in page with the provider button fits a phone-width screen', async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/users/sign_in`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${overflow}px wider than the screen`);
      assert.equal(await page.getByRole('button', { name: 'Sign in with Company SSO' }).isVisible(), true);
      await screenshot(page, 'oidc-sign-in-phone.png');
    } finally {
      await context.close();
    }
  });
});
