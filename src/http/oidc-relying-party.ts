// snippetd as an OpenID Connect relying party, through openid-client: the provider's metadata (discovery,
// once per process, tried again after a failure), the authorization request (code flow with PKCE S256,
// state and nonce) and the checked answer (the code exchanged, the ID token's signature, issuer, audience,
// nonce and times verified by the library, the userinfo claims for the same subject). Protocol only: what a
// signed-in identity means for snippetd's users is decided in domain/oidc-sign-in.ts.
import * as client from 'openid-client';
import type { Config } from '../config.ts';
import type { OidcClaims, OidcGroupRules } from '../domain/oidc-sign-in.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Sign-in with OpenID Connect; null when it is off (SNIPPETD_OIDC_ISSUER unset). */
    oidc: RelyingParty | null;
  }
}

/** GitLab's paths: its OmniAuth provider `openid_connect`. */
export const OIDC_START_PATH = '/users/auth/openid_connect';
export const OIDC_CALLBACK_PATH = '/users/auth/openid_connect/callback';

/** What one sign-in must find again in the provider's answer; kept by the visitor's browser in between. */
export interface FlowChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Why the provider's answer was not taken. */
export class OidcFailure extends Error {
  constructor(
    readonly kind: 'unreachable' | 'provider_error' | 'invalid_answer',
    message: string,
  ) {
    super(message);
  }
}

const SCOPE = 'openid profile email';
/** Seconds a request to the provider may take. */
const PROVIDER_TIMEOUT = 10;
/**
 * Bytes an answer of the provider may have. Its metadata, keys, tokens and claims take kilobytes; the library
 * reads an answer whole and parses it on the event loop (a 20 MB name claim held it 3 s).
 */
const MAX_PROVIDER_ANSWER_BYTES = 1024 * 1024;

class ProviderAnswerTooLarge extends Error {}

/** fetch, with the answer's body read here and refused past MAX_PROVIDER_ANSWER_BYTES. */
async function boundedFetch(url: string, options: client.CustomFetchOptions): Promise<Response> {
  const res = await fetch(url, options as RequestInit);
  const tooLarge = () => new ProviderAnswerTooLarge(`${url} answered more than ${MAX_PROVIDER_ANSWER_BYTES} bytes`);
  if (Number(res.headers.get('content-length')) > MAX_PROVIDER_ANSWER_BYTES) {
    await res.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.byteLength;
    if (size > MAX_PROVIDER_ANSWER_BYTES) throw tooLarge(); // leaving the loop cancels the body
    chunks.push(chunk);
  }
  const { status, statusText, headers } = res;
  return new Response(res.body ? Buffer.concat(chunks) : null, { status, statusText, headers });
}

export class RelyingParty {
  readonly issuer: string;
  readonly label: string;
  readonly groupRules: OidcGroupRules;
  private discovered: Promise<client.Configuration> | null = null;
  /** The authorization endpoint's origin once known (discovery), for the sign-in page's form-action. */
  private authorizationOrigin: string | null = null;

  constructor(private readonly config: Config & { oidcIssuer: string }) {
    this.issuer = config.oidcIssuer;
    this.label = config.oidcLabel;
    this.groupRules = {
      adminGroups: config.oidcAdminGroups,
      externalGroups: config.oidcExternalGroups,
      allowedGroups: config.oidcAllowedGroups,
    };
  }

  /** The origins the sign-in form's POST may be redirected to: the provider's (Chromium holds a redirect after a form POST to form-action). */
  formActionOrigins(): string[] {
    return [...new Set([new URL(this.issuer).origin, ...(this.authorizationOrigin ? [this.authorizationOrigin] : [])])];
  }

  /**
   * Reads the provider's metadata now, without waiting for it: the first sign-in page then already lets its
   * form reach the authorization endpoint's origin. A failure is logged; the next sign-in tries again.
   */
  warmUp(log: { warn: (details: object, message: string) => void }): void {
    this.configuration().catch((error) =>
      log.warn({ detail: messageOf(error) }, 'OpenID Connect discovery failed; the next sign-in tries again'),
    );
  }

  private discover(issuer: URL): Promise<client.Configuration> {
    return client.discovery(
      issuer,
      this.config.oidcClientId!,
      undefined,
      client.ClientSecretBasic(this.config.oidcClientSecret!),
      {
        // config.ts allows plain http for an issuer on loopback only.
        execute: issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [],
        timeout: PROVIDER_TIMEOUT,
        // Kept by the configuration for every later request: tokens and userinfo too.
        [client.customFetch]: boundedFetch,
      },
    );
  }

  private configuration(): Promise<client.Configuration> {
    this.discovered ??= this.discover(new URL(this.issuer))
      .catch((error) => {
        // config.ts drops a trailing slash (a Keycloak realm's issuer typed with one); the library compares the
        // metadata's issuer exactly, so a provider whose identifier has one (Authentik's) is met again with it.
        const withSlash = new URL(`${this.issuer}/`);
        if (metadataIssuerOf(error) !== withSlash.href) throw error;
        return this.discover(withSlash);
      })
      .then((configuration) => {
        // The ID token's signature is checked against the provider's keys too: openid-client leaves it to
        // TLS by default (the token comes straight from the token endpoint), which an http issuer lacks and
        // which says nothing about a token the provider did not sign.
        client.enableNonRepudiationChecks(configuration);
        const endpoint = configuration.serverMetadata().authorization_endpoint;
        if (endpoint) this.authorizationOrigin = new URL(endpoint).origin;
        return configuration;
      })
      .catch((error) => {
        this.discovered = null;
        throw new OidcFailure('unreachable', `discovery at ${this.issuer} failed: ${messageOf(error)}`);
      });
    return this.discovered;
  }

  /** Where to send the visitor, and the checks their return must pass. */
  async authorizationRequest(redirectUri: string): Promise<{ url: URL; checks: FlowChecks }> {
    const configuration = await this.configuration();
    const checks = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
    };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: SCOPE,
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    });
    this.authorizationOrigin = url.origin;
    return { url, checks };
  }

  /**
   * The claims of the identity the provider's answer (`callbackUrl`: the redirect URI with the answer's
   * query) vouches for, once every check passed; the ID token's, then userinfo's for the same subject.
   */
  async claims(callbackUrl: URL, checks: FlowChecks): Promise<OidcClaims> {
    const configuration = await this.configuration();
    let idClaims: client.IDToken;
    let accessToken: string;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
      idClaims = tokens.claims()!;
      accessToken = tokens.access_token;
    } catch (error) {
      throw failureOf(error);
    }
    let userinfo: Record<string, unknown> = {};
    if (configuration.serverMetadata().userinfo_endpoint) {
      try {
        userinfo = await client.fetchUserInfo(configuration, accessToken, idClaims.sub);
      } catch (error) {
        throw failureOf(error);
      }
    }
    return { ...idClaims, ...userinfo, sub: idClaims.sub } as OidcClaims;
  }
}

/** The issuer a discovery refused for not being the one expected names. */
function metadataIssuerOf(error: unknown): string | undefined {
  if (!(error instanceof client.ClientError)) return undefined;
  const cause = error.cause as { attribute?: unknown; body?: { issuer?: unknown } } | undefined;
  return cause?.attribute === 'issuer' && typeof cause.body?.issuer === 'string' ? cause.body.issuer : undefined;
}

const messageOf = (error: unknown) =>
  error instanceof Error
    ? `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}`
    : String(error);

function failureOf(error: unknown): OidcFailure {
  if (error instanceof client.AuthorizationResponseError)
    return new OidcFailure(
      'provider_error',
      `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`,
    );
  // The library's own checks (ClientError), the provider's refusals (an error body) and an answer too large
  // are all an answer not taken.
  if (
    error instanceof client.ClientError ||
    error instanceof client.ResponseBodyError ||
    error instanceof ProviderAnswerTooLarge
  )
    return new OidcFailure('invalid_answer', messageOf(error));
  return new OidcFailure('unreachable', messageOf(error));
}

/** The relying party of this configuration, or null when sign-in with OpenID Connect is off. */
export const relyingPartyOf = (config: Config): RelyingParty | null =>
  config.oidcIssuer ? new RelyingParty({ ...config, oidcIssuer: config.oidcIssuer }) : null;
