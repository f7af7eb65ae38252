// What the Chromium tests share: Debian's Chromium with the flags it needs here, where screenshots go, and
// axe-core's verdict on a page.
import path from 'node:path';
import { createRequire } from 'node:module';
import { type Browser, chromium, type Page } from 'playwright-core';

const CHROMIUM = process.env.SNIPPETD_CHROMIUM ?? '/usr/bin/chromium';
// As root Chromium needs --no-sandbox; without the rest it reaches for the network and stalls.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
export const ARTIFACTS = path.join(import.meta.dirname, '..', '..', 'test-artifacts');
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });

/**
 * axe-core's violations on the page as it is now, of the given impacts (all when none are given), each as
 * "rule (impact): targets". axe is injected as a script, which the pages' policy rightly refuses: the
 * page's context must be made with `bypassCSP: true`.
 */
export async function axeViolations(page: Page, impacts?: string[]): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  return page.evaluate(async (only) => {
    const result = await (window as any).axe.run();
    return result.violations
      .filter((v: any) => !only || only.includes(v.impact))
      .map((v: any) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
  }, impacts ?? null);
}
