// Signing in and out of the pages (/users/sign_in, /users/sign_out). The session is a cookie that
// scripts cannot read (HttpOnly), that other sites' requests do not carry (SameSite=Lax), and that is
// Secure when snippetd is served over https. The sign-in form carries a token that must match a cookie
// other sites cannot send (SameSite=Strict), so no other site can sign a visitor in to another account.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../storage/db/schema.ts';
import { sessionUser, signIn, signOut } from '../../domain/sessions.ts';
import { getSettings } from '../../domain/settings.ts';
import { html, trusted } from '../views/html.ts';
import { newNonce, sendFailurePage, sendPage } from './layout.ts';
import { checkFormPost } from './form-token.ts';
import { formText } from './common.ts';
import { OIDC_START_PATH } from '../oidc-relying-party.ts';
import { sitePath } from '../urls.ts';

const SESSION_COOKIE = '_snippetd_session';
/** The sign-in forms' token: one value, sent to the password form's path and to the provider button's. */
const FORM_COOKIE = '_snippetd_sign_in';
const FORM_COOKIE_PATHS = ['/users/sign_in', OIDC_START_PATH];
/** The session cookie's path: every page, below the external URL's path (GitLab's relative URL root). */
const sessionCookiePath = (request: FastifyRequest) => request.server.pathPrefix || '/';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user of a page request (null: anonymous); set before a page is served. */
    pageUser: User | null;
    /** The session token of that user (null: anonymous): what the form token is made from (form-token.ts). */
    pageSession: string | null;
  }
}

export function cookies(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) out[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return out;
}

export const secure = (request: FastifyRequest) => (request.server.externalUrl?.startsWith('https:') ? '; Secure' : '');

/** The signed-in user of this request's session cookie, or null. */
export async function readPageUser(request: FastifyRequest): Promise<User | null> {
  const token = cookies(request)[SESSION_COOKIE];
  request.pageUser = token ? await sessionUser(request.server.store, token) : null;
  request.pageSession = request.pageUser ? token! : null;
  return request.pageUser;
}

/**
 * Only a path on this site: never another origin (`//host`, `/\host`) as a place to go after signing in,
 * nor one a page would redirect to another origin once decoded (`/%2Fhost`, `/%5Chost`), nor one with a
 * control character (browsers drop a tab from a Location: `/\t/host` is `//host`).
 */
export const safeReturnPath = (value: unknown) =>
  typeof value === 'string' && /^\/(?![/\\]|%2f|%5c)/i.test(value) && !hasControlCharacter(value) ? value : '/';

/**
 * The return path as a Location carries it: every character a URL cannot hold as it is (beyond printable
 * ASCII, and space, quotes, angle brackets, backtick, braces) percent-encoded as UTF-8, as a browser would
 * encode it; escapes already in it stay. Node refuses a header holding characters past Latin-1 (a 500),
 * and one past ASCII would reach the browser as bytes it reads as another path.
 */
export const locationOf = (returnPath: string) =>
  returnPath.replace(/[^\x21-\x7e]|["<>`{}]/gu, (c) =>
    [...Buffer.from(c)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for.
const hasControlCharacter = (text: string) => /[\x00-\x1f\x7f]/.test(text);

const MESSAGES = {
  invalid: 'Invalid login or password.',
  // GitLab's Devise is paranoid: "locked" would tell that the account exists.
  locked: 'Invalid login or password.',
  blocked: 'Your account has been blocked. Contact your administrator.',
  expired: 'The form expired. Please sign in again.',
  passwordOff: 'Signing in with a password is turned off. Sign in with your identity provider.',
} as const;

/**
 * Whether the sign-in page takes passwords: GitLab's password_authentication_enabled_for_web, which turns
 * them off only once there is another way in (OpenID Connect), so no setting locks everyone out.
 */
async function passwordSignInAllowed(request: FastifyRequest): Promise<boolean> {
  if (!request.server.oidc) return true;
  return (await getSettings(request.server.store)).password_authentication_enabled_for_web;
}

/** The session cookie for a new session, and the sign-in forms' token cookies cleared. */
export const signedInCookies = (request: FastifyRequest, token: string) => [
  `${SESSION_COOKIE}=${token}; Path=${sessionCookiePath(request)}; HttpOnly; SameSite=Lax${secure(request)}`,
  ...FORM_COOKIE_PATHS.map((path) => `${FORM_COOKIE}=; Path=${sitePath(request, path)}; Max-Age=0`),
];

/** The session token this request's cookie carries, live or not. */
export const sessionCookieOf = (request: FastifyRequest): string | undefined => cookies(request)[SESSION_COOKIE];

/** Whether the POSTed form carries the token of a sign-in page this browser was shown. */
export function signInFormTokenMatches(request: FastifyRequest): boolean {
  const form = (request.body ?? {}) as Record<string, unknown>;
  const expected = Buffer.from(cookies(request)[FORM_COOKIE] ?? '');
  const given = Buffer.from(typeof form.authenticity_token === 'string' ? form.authenticity_token : '');
  // Compared as bytes: a token with characters of several bytes has another length there (timingSafeEqual
  // throws on unequal lengths).
  return expected.length > 0 && expected.length === given.length && crypto.timingSafeEqual(expected, given);
}

/** The sign-in page: the password form (unless turned off) and the provider's button (when configured). */
export async function signInForm(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  returnTo: string,
  message?: string,
  login = '',
) {
  const oidc = request.server.oidc;
  const formToken = crypto.randomBytes(24).toString('base64url');
  reply.header(
    'Set-Cookie',
    (oidc ? FORM_COOKIE_PATHS : FORM_COOKIE_PATHS.slice(0, 1)).map(
      (path) =>
        `${FORM_COOKIE}=${formToken}; Path=${sitePath(request, path)}; HttpOnly; SameSite=Strict${secure(request)}`,
    ),
  );
  const passwordForm = (await passwordSignInAllowed(request))
    ? html`<form method="post" action="${sitePath(request, '/users/sign_in')}" class="sign-in">
<input type="hidden" name="authenticity_token" value="${formToken}">
<input type="hidden" name="redirect_to" value="${returnTo}">
<label>Username or email <input name="login" value="${login}" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form>`
    : '';
  // GitLab's provider button: a POST with the form's token, so no other site can start a sign-in.
  const providerForm = oidc
    ? html`<form method="post" action="${sitePath(request, OIDC_START_PATH)}" class="sign-in-provider">
<input type="hidden" name="authenticity_token" value="${formToken}">
<input type="hidden" name="redirect_to" value="${returnTo}">
<button type="submit">Sign in with ${oidc.label}</button>
</form>`
    : '';
  const nonce = newNonce();
  const body = html`<h1>Sign in</h1>
${message ? html`<p class="alert" role="alert">${message}</p>` : ''}
${passwordForm}
${providerForm}
<script nonce="${nonce}">${trusted(KEEP_FRAGMENT_SCRIPT)}</script>`;
  return sendPage(reply, status, 'Sign in', body, nonce, { formActions: oidc?.formActionOrigins() });
}

// A browser never sends a URL's fragment: the line a visitor was sent here from (#L12) goes back with them, as
// GitLab's preserve_url_fragment does.
const KEEP_FRAGMENT_SCRIPT = `if (location.hash) for (const input of document.querySelectorAll('input[name="redirect_to"]'))
  if (!input.value.includes('#')) input.value += location.hash;`;

export async function sessionRoutes(app: FastifyInstance) {
  app.decorateRequest('pageUser', null);
  app.decorateRequest('pageSession', null);

  app.get('/users/sign_in', async (request, reply) => {
    const returnTo = safeReturnPath((request.query as Record<string, unknown>).redirect_to);
    // Devise's require_no_authentication, as GitLab: someone signed in already goes where signing in would take them.
    if (await readPageUser(request)) return reply.redirect(locationOf(sitePath(request, returnTo)), 302);
    return signInForm(request, reply, 200, returnTo);
  });

  app.post('/users/sign_in', async (request, reply) => {
    const form = (request.body ?? {}) as Record<string, unknown>;
    const returnTo = safeReturnPath(form.redirect_to);
    if (!signInFormTokenMatches(request)) return signInForm(request, reply, 422, returnTo, MESSAGES.expired);
    // GitLab's 403 for a password sign-in while password authentication for the web is off.
    if (!(await passwordSignInAllowed(request))) return signInForm(request, reply, 403, returnTo, MESSAGES.passwordOff);
    const login = formText(form.login);
    const result = await signIn(request.server.store, login, formText(form.password));
    if (!result.ok) return signInForm(request, reply, 401, returnTo, MESSAGES[result.reason], login);
    // A new session, never beside the one this browser had: whoever was signed in here before is signed out.
    const previous = sessionCookieOf(request);
    if (previous) await signOut(request.server.store, previous);
    return reply
      .header('Set-Cookie', signedInCookies(request, result.token))
      .redirect(locationOf(sitePath(request, returnTo)), 303);
  });

  // Signing out is a form of the signed-in pages like any other: another site cannot sign a visitor out.
  app.post('/users/sign_out', async (request, reply) => {
    // Without a live session there is nothing to end: the stale cookie is cleared all the same.
    if (await readPageUser(request)) {
      try {
        checkFormPost(request);
      } catch (error) {
        return sendFailurePage(request, reply, error);
      }
      await signOut(request.server.store, request.pageSession!);
    }
    return reply
      .header('Set-Cookie', `${SESSION_COOKIE}=; Path=${sessionCookiePath(request)}; HttpOnly; SameSite=Lax; Max-Age=0`)
      .redirect(sitePath(request, '/'), 303);
  });
}
