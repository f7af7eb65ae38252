// What signing in with an OpenID Connect provider means for snippetd's users, once the provider's answer
// has been verified (http/oidc-relying-party.ts). The identity (issuer and `sub`, GitLab's extern_uid) is
// the link: a user whose email or username changed at the provider is still the same user, and an
// existing account is never taken over by a matching username or email. The first sign-in creates the
// user; every sign-in sets admin and external from the `groups` claim (where groups are configured for
// them), as GitLab's OmniAuth admin_groups and external_groups do.
import type { Store } from '../storage/db/store.ts';
import type { User } from '../storage/db/schema.ts';
import { conflict, Failure } from './failure.ts';
import { pathError } from './paths.ts';
import { mayStartSession, startSession } from './sessions.ts';
import { createUser, EMAIL_TAKEN, USERNAME_TAKEN } from './users.ts';

/** GitLab's name for the provider, in the users API's `identities`. */
export const OIDC_PROVIDER = 'openid_connect';

/** The claims snippetd reads (the ID token's and userinfo's together, for one `sub`). */
export interface OidcClaims {
  sub: string;
  email?: unknown;
  preferred_username?: unknown;
  name?: unknown;
  groups?: unknown;
}

export interface OidcGroupRules {
  adminGroups: string[];
  externalGroups: string[];
  /** Not empty: only members of one of these may sign in. */
  allowedGroups: string[];
}

export type OidcRefusal = 'not_allowed' | 'blocked' | 'no_email' | 'email_taken' | 'invalid_claims';

export type OidcSignIn = { ok: true; token: string; user: User; created: boolean } | { ok: false; reason: OidcRefusal };

/** How often a first sign-in chooses again when another request took its username meanwhile. */
const NAME_RACES = 5;
/** Suffixes tried beyond the names taken: a reserved name (`admin`) is valid with a number. */
const SUFFIXES_TRIED = 100;

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/** The `groups` claim as a list of names: an array of strings, or one string. */
export function groupsOf(claims: OidcClaims): string[] {
  if (typeof claims.groups === 'string') return [claims.groups];
  return Array.isArray(claims.groups) ? claims.groups.filter((g): g is string => typeof g === 'string') : [];
}

const inAny = (groups: string[], wanted: string[]) => wanted.some((g) => groups.includes(g));

/** admin and external as the groups say, for the rules that are configured; others stay as they are. */
function roleChanges(groups: string[], rules: OidcGroupRules): { admin?: 0 | 1; external?: 0 | 1 } {
  return {
    ...(rules.adminGroups.length && { admin: inAny(groups, rules.adminGroups) ? 1 : 0 }),
    ...(rules.externalGroups.length && { external: inAny(groups, rules.externalGroups) ? 1 : 0 }),
  };
}

/**
 * A username from the claims, in GitLab's path format: `preferred_username`, else the email's local part,
 * other characters turned into `_`, never starting or ending with what a path may not.
 */
export function usernameFrom(claims: OidcClaims): string {
  // Made from the claim's start only: a provider may send any length, and a path is at most 255 characters.
  const raw = (text(claims.preferred_username) || text(claims.email).split('@')[0]).slice(0, MAX_USERNAME_SOURCE);
  const cleaned = raw
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-zA-Z0-9_.-]+/g, '_')
    .replace(/^[-.]+/, '')
    .slice(0, 200);
  return withoutForbiddenEnding(cleaned) || 'user';
}

/** Characters of a claim a username is made from. */
const MAX_USERNAME_SOURCE = 255;

/**
 * `name` without the endings a path may not have (`.git`, `.atom`, `.`), however many: a loop, as a pattern
 * such as `/(\.git|[.])+$/` tries every start in a run of dots, in time that grows with the run's square.
 */
function withoutForbiddenEnding(name: string): string {
  const lower = name.toLowerCase(); // ASCII by now: the same length
  let end = name.length;
  for (;;) {
    if (lower.endsWith('.git', end)) end -= 4;
    else if (lower.endsWith('.atom', end)) end -= 5;
    else if (lower.endsWith('.', end)) end -= 1;
    else return name.slice(0, end);
  }
}

/** The signed-in user of this verified identity: found by its link, or created; with a new session. */
export async function signInWithOidc(
  store: Store,
  issuer: string,
  claims: OidcClaims,
  rules: OidcGroupRules,
  now = Date.now(),
): Promise<OidcSignIn> {
  const groups = groupsOf(claims);
  if (rules.allowedGroups.length && !inAny(groups, rules.allowedGroups)) return { ok: false, reason: 'not_allowed' };
  let created = false;
  let user = await linkedUser(store, issuer, claims.sub);
  if (!user) {
    const made = await createLinkedUser(store, issuer, claims, roleChanges(groups, rules));
    if (!made.ok) return made;
    ({ user, created } = made);
  }
  const signingIn = await mayStartSession(store, user);
  if (!signingIn) return { ok: false, reason: 'blocked' };
  user = signingIn;
  const changes = roleChanges(groups, rules);
  const current = user;
  if (Object.entries(changes).some(([key, value]) => current[key as keyof typeof changes] !== value)) {
    const changed = await store.users.update(user.id, changes);
    if (!changed) return { ok: false, reason: 'blocked' }; // deleted since it signed in: no session for it
    user = changed;
  }
  return { ok: true, token: await startSession(store, user, now), user, created };
}

async function linkedUser(store: Store, issuer: string, sub: string): Promise<User | undefined> {
  const identity = await store.identities.find(issuer, sub);
  return identity && store.users.findById(identity.user_id);
}

/**
 * A new user for this identity under the first free username. Another sign-in of the same identity at the
 * same moment may win the race: its user is the one, found through the link.
 */
async function createLinkedUser(
  store: Store,
  issuer: string,
  claims: OidcClaims,
  roles: { admin?: 0 | 1; external?: 0 | 1 },
): Promise<{ ok: true; user: User; created: boolean } | { ok: false; reason: OidcRefusal }> {
  const email = text(claims.email);
  if (!email) return { ok: false, reason: 'no_email' };
  if (await store.users.findByEmail(email)) return { ok: false, reason: 'email_taken' };
  const base = usernameFrom(claims);
  let taken = new Set<string>();
  for (let race = 0; race < NAME_RACES; race++) {
    const username = freeUsername(base, taken);
    if (!username) return { ok: false, reason: 'invalid_claims' };
    try {
      const user = await createUser(
        store,
        {
          username,
          email,
          name: text(claims.name) || username,
          admin: roles.admin === 1,
          external: roles.external === 1,
        },
        { provider: OIDC_PROVIDER, issuer, extern_uid: claims.sub },
      );
      return { ok: true, user, created: true };
    } catch (error) {
      // Claims a user here cannot have (an email that is not one, a name too long): the provider's, not ours.
      if (error instanceof Failure && error.reason === 'bad_request_fields')
        return { ok: false, reason: 'invalid_claims' };
      if (!(error instanceof Failure) || error.reason !== 'conflict') throw error;
      const winner = await linkedUser(store, issuer, claims.sub);
      if (winner) return { ok: true, user: winner, created: false };
      if (error.detail === EMAIL_TAKEN) return { ok: false, reason: 'email_taken' };
      if (error.detail !== USERNAME_TAKEN) throw error;
      taken = await store.namespaces.topLevelPathsStartingWith(base);
    }
  }
  throw conflict(USERNAME_TAKEN);
}

/**
 * GitLab's Uniquify: `base`, else `base1`, `base2` … the first that is a valid path and not `taken` (lower-cased).
 * Of `taken.size + 1` valid names one is free; undefined when no number makes `base` valid.
 */
export function freeUsername(base: string, taken: Set<string>): string | undefined {
  let valid = 0;
  for (let n = 0; valid <= taken.size && n <= taken.size + SUFFIXES_TRIED; n++) {
    const name = n === 0 ? base : `${base}${n}`;
    if (pathError(name, true)) continue;
    if (!taken.has(name.toLowerCase())) return name;
    valid++;
  }
  return undefined;
}
