// Personal access tokens: generated here, stored only as a SHA-256 digest, shown in plain text once.
import crypto from 'node:crypto';
import type { Store } from '../storage/db/store.ts';
import type { Token, User } from '../storage/db/schema.ts';
import type { PageOf, PageWindow } from '../storage/db/page.ts';
import type { TokenListFilter } from '../storage/db/tables/tokens.ts';
import { badRequest, invalidFields, invalidToken, notFound, tooLongError, unauthorized } from './failure.ts';
import { isForeignKeyViolation } from '../storage/db/database.ts';
import { SCOPES, type Scope } from './access.ts';

export const digestToken = (plain: string) => crypto.createHash('sha256').update(plain).digest('hex');
export const generateToken = () => `glpat-${crypto.randomBytes(20).toString('base64url')}`;
export const nowIso = () => new Date().toISOString();
const today = () => new Date().toISOString().slice(0, 10);

export const TOKEN_EXPIRED = 'Token is expired. You can either do re-authorization or token refresh.';
export const TOKEN_REVOKED = 'Token was revoked. You have to re-authorize from the user.';

/** A token expires at the start (UTC) of its expires_at date, as in GitLab. */
export const isExpired = (token: Pick<Token, 'expires_at'>) => token.expires_at !== null && token.expires_at <= today();
export const isActive = (token: Token) => token.revoked === 0 && !isExpired(token);
export const scopesOf = (token: Pick<Token, 'scopes'>) => token.scopes.split(' ').filter(Boolean) as Scope[];

/** The longest token name, in characters (docs/gitlab-compatibility.md#users-and-tokens). */
export const MAX_TOKEN_NAME_CHARS = 255;

export async function createToken(
  store: Store,
  user: Pick<User, 'id'>,
  input: { name: string; scopes: Scope[]; expiresAt: string | null; plain?: string },
): Promise<{ token: Token; plain: string }> {
  // GitLab's name has no bound but its request's size; ours is the form's, for every token list and page shows
  // each name whole (helper-82: nine names of 16 MB made a list of 157 MB).
  const tooLong = tooLongError(input.name, MAX_TOKEN_NAME_CHARS);
  if (tooLong) throw invalidFields({ name: [tooLong] });
  // A token given whole (a seed's, the initial root token) that another holds already: theirs, not a 500.
  if (input.plain !== undefined && (await store.tokens.findWithUserByDigest(digestToken(input.plain))))
    throw invalidFields({ token: ['has already been taken'] });
  const plain = input.plain ?? generateToken();
  const token = await store.tokens
    .insert({
      user_id: user.id,
      name: input.name,
      token_digest: digestToken(plain),
      scopes: [...new Set(input.scopes)].join(' '),
      expires_at: input.expiresAt,
      revoked: 0,
      created_at: nowIso(),
      last_used_at: null,
    })
    .catch((error) => {
      // The user deleted since they were found (DELETE /users/:id): as if they had been gone already.
      throw isForeignKeyViolation(error) ? notFound('User') : error;
    });
  return { token, plain };
}

/** How long a rotated token lives when no expires_at is given: GitLab's RotateService::EXPIRATION_PERIOD. */
const ROTATED_TOKEN_DAYS = 7;

/**
 * Revokes `token` and makes its successor, with its name and scopes, expiring on `expiresAt` or a week from today
 * (GitLab's default, where every token must expire); a token already revoked is GitLab's 400.
 */
export function rotateToken(
  store: Store,
  token: Token,
  expiresAt: string | null,
): Promise<{ token: Token; plain: string }> {
  return store.transaction(async (tx) => {
    // Revoked only if it was not: of two rotations at once, one makes a successor.
    if (!(await tx.tokens.revoke(token.id))) throw badRequest('Token already revoked');
    const days = new Date(Date.now() + ROTATED_TOKEN_DAYS * 86_400_000).toISOString().slice(0, 10);
    return createToken(
      tx,
      { id: token.user_id },
      { name: token.name, scopes: scopesOf(token), expiresAt: expiresAt ?? days },
    );
  });
}

const TOUCH_INTERVAL_MS = 10 * 60 * 1000;

/** Resolves a presented token to its row and user; unknown, revoked and expired tokens get GitLab's answers. */
export async function authenticateToken(store: Store, plain: string): Promise<{ token: Token; user: User }> {
  const found = await store.tokens.findWithUserByDigest(digestToken(plain));
  if (!found) throw unauthorized();
  const { token, user } = found;
  // GitLab checks expiry before revocation (AccessTokenValidationService).
  if (isExpired(token)) throw invalidToken(TOKEN_EXPIRED);
  if (token.revoked) throw invalidToken(TOKEN_REVOKED);
  if (!user) throw unauthorized();
  // last_used_at is kept coarse, as GitLab does, so reads do not turn into a write per request.
  if (!token.last_used_at || Date.now() - Date.parse(token.last_used_at) > TOUCH_INTERVAL_MS) {
    await store.tokens.touch(token.id, nowIso());
  }
  return { token, user };
}

/** Scopes a user may give their own tokens: `sudo` acts as others, so only administrators may hold it. */
export const selfGrantableScopes = (user: Pick<User, 'admin'>): Scope[] =>
  SCOPES.filter((scope) => scope !== 'sudo' || user.admin === 1);

/** Tokens a page of the user's own shows. */
export const OWN_TOKENS_PER_PAGE = 100;

/** Page `page` (from 1) of the user's own tokens: those in use first, each part newest first; never their values. */
export function ownTokens(store: Store, user: Pick<User, 'id'>, page: number): Promise<PageOf<Token>> {
  const window = { offset: (page - 1) * OWN_TOKENS_PER_PAGE, limit: OWN_TOKENS_PER_PAGE };
  return store.tokens.ownPage(user.id, today(), window);
}

/** A page of tokens by GET /personal_access_tokens's filters; `state` is in use or not on today's date. */
export function listTokens(
  store: Store,
  filter: Omit<TokenListFilter, 'inUse'> & { state?: 'active' | 'inactive' },
  window: PageWindow,
) {
  const { state, ...rest } = filter;
  return store.tokens.listPage(
    { ...rest, ...(state && { inUse: { is: state === 'active', today: today() } }) },
    window,
  );
}

/** Revokes one of the user's own tokens; false when there is no such token of theirs. */
export async function revokeOwnToken(store: Store, user: Pick<User, 'id'>, id: number): Promise<boolean> {
  const token = await store.tokens.findById(id);
  if (!token || token.user_id !== user.id) return false;
  await store.tokens.revoke(token.id);
  return true;
}
