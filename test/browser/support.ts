// What the Chromium tests share: a server process to look at, Debian's Chromium with the flags it needs here,
// where screenshots go, and axe-core's verdict on a page.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { processServer } from '../helper.ts';
import type { Spawned } from '../../scripts/spawn-server.ts';

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
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * A full-page screenshot in test-artifacts/, for a person to look at; none under CI (CI=true), where no one
 * does: a run takes about a hundred, 150-300 ms of Chromium's work each.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.CI === 'true') return;
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: true });
}

/** Chromium, playwright-core loaded only then: in the PostgreSQL pass, where these files skip, it costs 0.4 s a file. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * axe-core's violations on the page as it is now, of the given impacts (all when none are given), each as
 * "rule (impact): targets", with the page's own policy in force: axe is evaluated through the devtools protocol,
 * which the policy does not govern (a <script> would rightly be refused), so what the policy keeps out of the
 * page (a style, a script) is kept out of what axe sees too.
 */
export async function axeViolations(page: Page, impacts?: string[]): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async (only) => {
    const result = await (window as any).axe.run();
    return result.violations
      .filter((v: any) => !only || only.includes(v.impact))
      .map((v: any) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
  }, impacts ?? null);
}

/** A request to `server`'s API as `token` that must succeed (under 300): its JSON answer. */
export async function mustApi(server: { url: string }, token: string, method: string, route: string, body?: unknown) {
  const res = await fetch(`${server.url}/api/v4${route}`, {
    method,
    headers: { 'PRIVATE-TOKEN': token, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
}

/**
 * The Chromium tests run in the SQLite pass only: a page makes the same domain calls as the API, tested over
 * HTTP on both databases; what a browser adds (scripts, layout, accessibility) does not depend on the database.
 */
export const BROWSER_PASS = { skip: process.env.SNIPPETD_TEST_DB === 'postgres' && 'Chromium runs in the SQLite pass' };

export type BrowserTestServer = Spawned & { stop: () => Promise<void> };

/** A real server process on storage of its own, `token` root's; `stop` ends it and removes the storage. */
export async function startServer(
  prefix: string,
  token: string,
  env: NodeJS.ProcessEnv = {},
): Promise<BrowserTestServer> {
  const { server, stop } = await processServer(prefix, token, env);
  return { ...server, stop };
}
