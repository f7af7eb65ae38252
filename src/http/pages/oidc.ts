// Signing in with the OpenID Connect provider (GitLab's OmniAuth paths): the sign-in page's button POSTs
// to /users/auth/openid_connect, which sends the visitor to the provider; the provider sends them back
// to /users/auth/openid_connect/callback, where the answer is checked (http/oidc-relying-party.ts) and
// the identity signed in (domain/oidc-sign-in.ts). What the return must match (state, nonce, the PKCE
// verifier) waits in a cookie of this browser's, for ten minutes and one use; a return without it, or
// with another state, signs no one in. Every refusal is a page saying why, with no session and no user.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type OidcRefusal, signInWithOidc } from '../../domain/oidc-sign-in.ts';
import { signOut } from '../../domain/sessions.ts';
import { html } from '../views/html.ts';
import { baseUrl, sitePath } from '../urls.ts';
import { type FlowChecks, OIDC_CALLBACK_PATH, OIDC_START_PATH, OidcFailure } from '../oidc-relying-party.ts';
import { sendPage } from './layout.ts';
import {
  cookies,
  locationOf,
  readPageUser,
  safeReturnPath,
  secure,
  sessionCookieOf,
  signedInCookies,
  signInForm,
  signInFormTokenMatches,
} from './sessions.ts';

const FLOW_COOKIE = '_snippetd_oidc';
/** How long a visitor may take at the provider. */
const FLOW_SECONDS = 600;

interface Flow extends FlowChecks {
  returnTo: string;
}

const REFUSALS: Record<OidcRefusal | 'state' | OidcFailure['kind'], [status: number, text: string]> = {
  state: [401, 'The sign-in did not start here or took too long (its state does not match). Please sign in again.'],
  provider_error: [401, 'The identity provider did not sign you in.'],
  invalid_answer: [401, "The identity provider's answer could not be verified, so it was not accepted."],
  unreachable: [502, 'The identity provider could not be reached. Please try again later.'],
  not_allowed: [403, 'Your account at the identity provider is not in a group allowed to sign in here.'],
  blocked: [403, 'Your account has been blocked. Contact your administrator.'],
  no_email: [403, 'The identity provider did not give an email address, which an account here needs.'],
  invalid_claims: [403, 'The identity provider gave an email address or name an account here cannot have.'],
  email_taken: [
    403,
    'An account with your email address already exists here. Ask an administrator to link it, or sign in to it.',
  ],
};

const flowCookie = (request: FastifyRequest, value: string, maxAge: number) =>
  `${FLOW_COOKIE}=${value}; Path=${sitePath(request, OIDC_START_PATH)}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure(request)}`;

/** Bytes of a cookie's name and value browsers keep at most: a larger one is dropped, and its return refused. */
const MAX_COOKIE_BYTES = 4096;

/** The flow cookie's value; a return path that would not fit is left for the front page. */
function flowValue(checks: FlowChecks, returnTo: string): string {
  const encode = (flow: Flow) => Buffer.from(JSON.stringify(flow)).toString('base64url');
  const value = encode({ ...checks, returnTo });
  return FLOW_COOKIE.length + 1 + value.length <= MAX_COOKIE_BYTES ? value : encode({ ...checks, returnTo: '/' });
}

function readFlow(request: FastifyRequest): Flow | null {
  const raw = cookies(request)[FLOW_COOKIE];
  if (!raw) return null;
  try {
    const flow = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    const strings = ['state', 'nonce', 'codeVerifier', 'returnTo'].every((k) => typeof flow?.[k] === 'string');
    return strings ? flow : null;
  } catch {
    return null;
  }
}

function refusalPage(request: FastifyRequest, reply: FastifyReply, reason: keyof typeof REFUSALS, detail?: string) {
  const [status, text] = REFUSALS[reason];
  request.log.warn({ reason, detail }, 'sign-in with OpenID Connect refused');
  reply.header('Set-Cookie', flowCookie(request, '', 0));
  const label = request.server.oidc?.label ?? 'OpenID Connect';
  return sendPage(
    reply,
    status,
    'Sign-in failed',
    html`<h1>Could not sign you in with ${label}</h1>
<p class="alert" role="alert">${text}</p>
${reason === 'provider_error' && detail ? html`<p>The provider said: <code>${detail}</code></p>` : ''}
<p><a href="${sitePath(request, '/users/sign_in')}">Back to sign in</a></p>`,
  );
}

const redirectUri = (request: FastifyRequest) => `${baseUrl(request)}${OIDC_CALLBACK_PATH}`;

export async function oidcRoutes(app: FastifyInstance) {
  /** The button: checks the sign-in form's token, then sends the visitor to the provider. */
  app.post(OIDC_START_PATH, async (request, reply) => {
    const oidc = request.server.oidc;
    await readPageUser(request);
    if (!oidc) return sendPage(reply, 404, 'Page not found', html`<h1>Page not found</h1>`);
    const returnTo = safeReturnPath(((request.body ?? {}) as Record<string, unknown>).redirect_to);
    if (!signInFormTokenMatches(request))
      return signInForm(request, reply, 422, returnTo, 'The form expired. Please sign in again.');
    let started: Awaited<ReturnType<typeof oidc.authorizationRequest>>;
    try {
      started = await oidc.authorizationRequest(redirectUri(request));
    } catch (error) {
      if (error instanceof OidcFailure) return refusalPage(request, reply, error.kind, error.message);
      throw error;
    }
    return reply
      .header('Set-Cookie', flowCookie(request, flowValue(started.checks, returnTo), FLOW_SECONDS))
      .redirect(started.url.href, 303);
  });

  /** The provider's answer: checked, then the identity signed in with a new session. */
  app.get(OIDC_CALLBACK_PATH, async (request, reply) => {
    const oidc = request.server.oidc;
    await readPageUser(request);
    if (!oidc) return sendPage(reply, 404, 'Page not found', html`<h1>Page not found</h1>`);
    const query = request.query as Record<string, unknown>;
    const flow = readFlow(request);
    if (!flow || typeof query.state !== 'string' || query.state !== flow.state)
      return refusalPage(request, reply, 'state');
    const answer = new URL(redirectUri(request));
    answer.search = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    let claims: Awaited<ReturnType<typeof oidc.claims>>;
    try {
      claims = await oidc.claims(answer, flow);
    } catch (error) {
      if (error instanceof OidcFailure) return refusalPage(request, reply, error.kind, error.message);
      throw error;
    }
    const store = request.server.store;
    const result = await signInWithOidc(store, oidc.issuer, claims, oidc.groupRules);
    if (!result.ok) return refusalPage(request, reply, result.reason, `sub ${claims.sub}`);
    // A new session, never the one this browser had: whoever was signed in here before is signed out.
    const previous = sessionCookieOf(request);
    if (previous) await signOut(store, previous);
    request.log.info({ userId: result.user.id, created: result.created }, 'signed in with OpenID Connect');
    return reply
      .header('Set-Cookie', [...signedInCookies(request, result.token), flowCookie(request, '', 0)])
      .redirect(locationOf(sitePath(request, safeReturnPath(flow.returnTo))), 303);
  });
}
