// A real OpenID Connect provider for the tests (the `oidc-provider` package) on loopback, with an
// ephemeral port: discovery, authorization with PKCE, tokens signed with a key of its own, userinfo. Its
// accounts carry email, preferred_username, name and groups, and can be changed between sign-ins. The
// login step has no UI: the interaction signs in `loginAs` (as a person typing a password would), and
// consent is given. For the refusals a client must make, the next token answer can be spoiled on the way
// out (`spoilNextIdToken`): an ID token for another audience, or one signed with a key that is not the
// provider's.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestAccount {
  email?: string;
  email_verified?: boolean;
  preferred_username?: string;
  name?: string;
  groups?: string[];
}

export const CLIENT_ID = 'snippetd';
export const CLIENT_SECRET = 'a-client-secret-for-the-tests-0123456789';

export interface TestProvider {
  issuer: string;
  /** By `sub`: change one to change what the next sign-in tells. */
  accounts: Map<string, TestAccount>;
  /** The `sub` the next login interaction signs in. */
  loginAs: string;
  /** Spoils the ID token of the next token answer. */
  spoilNextIdToken(how: 'wrong_audience' | 'bad_signature'): void;
  /** Token requests the provider answered (successfully or not). */
  tokenRequests: number;
  close(): Promise<void>;
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A JWT with these header and payload, signed RS256 with `key`. */
function signJwt(header: object, payload: object, key: crypto.KeyObject): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${crypto.sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

const decodePart = (jwt: string, index: number) =>
  JSON.parse(Buffer.from(jwt.split('.')[index], 'base64url').toString('utf8'));

/**
 * `mountPath`: the provider below a path of its server, its issuer that path with its trailing slash as
 * Authentik's is (`/application/o/<slug>/`).
 */
export async function startTestProvider(
  accounts: Record<string, TestAccount>,
  { mountPath = '' }: { mountPath?: string } = {},
): Promise<TestProvider> {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const strangerKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key', alg: 'RS256', use: 'sig' };

  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}${mountPath}`;

  let spoil: 'wrong_audience' | 'bad_signature' | null = null;
  const state: TestProvider = {
    issuer,
    accounts: new Map(Object.entries(accounts)),
    loginAs: Object.keys(accounts)[0],
    spoilNextIdToken: (how) => {
      spoil = how;
    },
    tokenRequests: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        // A native client's loopback redirect URI matches whatever port snippetd listens on (RFC 8252).
        application_type: 'native',
        redirect_uris: ['http://127.0.0.1/users/auth/openid_connect/callback'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: [crypto.randomBytes(16).toString('hex')] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username', 'groups'],
    },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) =>
        `${mountPath.replace(/\/$/, '')}/interaction/${interaction.uid}`,
    },
    async findAccount(_ctx: unknown, sub: string) {
      const account = state.accounts.get(sub);
      return account && { accountId: sub, claims: async () => ({ sub, ...state.accounts.get(sub) }) };
    },
  });

  provider.use(async (ctx: any, next: () => Promise<void>) => {
    if (ctx.path.startsWith('/interaction/')) {
      // No form: the login signs in the chosen account, and consent is given to what snippetd asks for.
      const details = await provider.interactionDetails(ctx.req, ctx.res);
      let result: object;
      if (details.prompt.name === 'login') result = { login: { accountId: state.loginAs } };
      else {
        const grant = new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
        if (details.prompt.details.missingOIDCScope)
          grant.addOIDCScope(details.prompt.details.missingOIDCScope.join(' '));
        if (details.prompt.details.missingOIDCClaims) grant.addOIDCClaims(details.prompt.details.missingOIDCClaims);
        result = { consent: { grantId: await grant.save() } };
      }
      ctx.redirect(await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true }));
      return;
    }
    await next();
    if (ctx.path === '/token') {
      state.tokenRequests++;
      const idToken = ctx.body?.id_token;
      if (spoil && typeof idToken === 'string') {
        const header = decodePart(idToken, 0);
        const payload = decodePart(idToken, 1);
        ctx.body = {
          ...ctx.body,
          id_token:
            spoil === 'wrong_audience'
              ? signJwt(header, { ...payload, aud: 'another-client' }, privateKey)
              : signJwt(header, payload, strangerKey),
        };
        spoil = null;
      }
    }
  });

  const callback = provider.callback();
  // Mounted as a framework mounts it: originalUrl keeps the whole path, url is the rest.
  const prefix = mountPath.replace(/\/$/, '');
  server.on('request', (req: http.IncomingMessage & { originalUrl?: string }, res) => {
    if (prefix && req.url?.startsWith(prefix)) {
      req.originalUrl = req.url;
      req.url = req.url.slice(prefix.length) || '/';
    }
    callback(req, res);
  });
  return state;
}
