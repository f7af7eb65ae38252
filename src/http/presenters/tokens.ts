import type { Token } from '../../storage/db/schema.ts';
import { isActive, scopesOf } from '../../domain/tokens.ts';

export const personalAccessToken = (token: Token) => ({
  id: token.id,
  name: token.name,
  revoked: token.revoked === 1,
  created_at: token.created_at,
  description: null,
  scopes: scopesOf(token),
  user_id: token.user_id,
  last_used_at: token.last_used_at,
  active: isActive(token),
  expires_at: token.expires_at,
});

/** The creation answer: the only time the plain token is shown. */
export const createdToken = (token: Token, plain: string) =>
  Object.assign(personalAccessToken(token), { token: plain });
