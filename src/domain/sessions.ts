// Signing in to the pages, as GitLab does: username or email and password; after 10 failed attempts the
// account is locked for 10 minutes (Devise's lockable, GitLab's defaults; paranoid, so a locked account
// answers as a wrong password does); blocked users cannot sign in, and a deactivated user who signs in is
// active again (GitLab's self-service reactivation); a session ends after a week without use (GitLab's session_expire_delay). Sessions live
// in the database, stored as the digest of their token, so any node can serve them.
import crypto from 'node:crypto';
import type { Store } from '../storage/db/store.ts';
import type { User } from '../storage/db/schema.ts';
import { digestToken, nowIso } from './tokens.ts';
import { verifyPassword } from './users.ts';

export const MAX_FAILED_ATTEMPTS = 10;
export const LOCK_MS = 10 * 60 * 1000;
export const SESSION_IDLE_MS = 7 * 24 * 60 * 60 * 1000;
/** last_seen_at is written at most this often, so reading pages does not turn every request into a write. */
const TOUCH_EVERY_MS = 60 * 1000;

export type SignIn = { ok: true; token: string; user: User } | { ok: false; reason: 'invalid' | 'locked' | 'blocked' };

/**
 * A password is checked for every login, known or not, locked or not (an unknown one against a dummy hash),
 * so the time taken tells no one which accounts exist. 'locked' is told apart here for the callers' sake;
 * the page answers it as 'invalid' (GitLab's Devise is paranoid).
 */
export async function signIn(store: Store, login: string, password: string, now = Date.now()): Promise<SignIn> {
  const user = (await store.users.findByUsername(login)) ?? (await store.users.findByEmail(login));
  const passwordMatches = await verifyPassword(password, user?.password_digest ?? null);
  if (!user) return { ok: false, reason: 'invalid' };
  const failures = await store.sessions.failures(user.id);
  if (failures?.locked_until && Date.parse(failures.locked_until) > now) return { ok: false, reason: 'locked' };
  if (!passwordMatches) {
    const at = new Date(now).toISOString();
    const until = new Date(now + LOCK_MS).toISOString();
    const locked = await store.sessions.recordFailure(user.id, at, MAX_FAILED_ATTEMPTS, until);
    return { ok: false, reason: locked ? 'locked' : 'invalid' };
  }
  const signingIn = await mayStartSession(store, user);
  if (!signingIn) return { ok: false, reason: 'blocked' };
  if (failures) await store.sessions.clearFailures(user.id);
  return { ok: true, token: await startSession(store, signingIn, now), user: signingIn };
}

/**
 * The user who has proven who they are, as they may start a session: active, or made active again when they were
 * deactivated (GitLab: a deactivated user reactivates their account by signing in to the web); null when blocked.
 */
export async function mayStartSession(store: Store, user: User): Promise<User | null> {
  if (user.ghost) return null; // an internal user (GitLab's GlobalPolicy prevents its log_in)
  if (user.state !== 'deactivated') return user.state === 'active' ? user : null;
  // Only if still deactivated: `user` was read before the password's check, and a block meanwhile must stand.
  const now = (await store.users.reactivate(user.id)) ?? (await store.users.findById(user.id));
  return now?.state === 'active' ? now : null;
}

/** A new session for `user`, who has proven who they are; answers its token (the cookie's value). */
export async function startSession(store: Store, user: User, now = Date.now()): Promise<string> {
  // A session nobody signs out of (a browser closed) is found idle only if its cookie comes back: the ones
  // idle too long go at each sign-in, or they would add up for good.
  await store.sessions.deleteIdleSince(new Date(now - SESSION_IDLE_MS).toISOString());
  const token = crypto.randomBytes(32).toString('base64url');
  const at = new Date(now).toISOString();
  await store.sessions.insert({ token_digest: digestToken(token), user_id: user.id, created_at: at, last_seen_at: at });
  return token;
}

/** Which of these users are locked out of signing in now (after MAX_FAILED_ATTEMPTS failures). */
export async function lockedUsers(store: Store, userIds: number[], now = Date.now()): Promise<Set<number>> {
  return new Set(await store.sessions.lockedAmong(userIds, new Date(now).toISOString()));
}

/** The signed-in user of a session token, or null when it is unknown, idle too long, or its user may not sign in. */
export async function sessionUser(store: Store, token: string, now = Date.now()): Promise<User | null> {
  const digest = digestToken(token);
  const session = await store.sessions.find(digest);
  if (!session) return null;
  const idle = now - Date.parse(session.last_seen_at);
  if (idle > SESSION_IDLE_MS) {
    await store.sessions.delete(digest);
    return null;
  }
  const user = await store.users.findById(session.user_id);
  if (user?.state !== 'active' || user.ghost) return null;
  if (idle > TOUCH_EVERY_MS) await store.sessions.touch(digest, nowIso());
  return user;
}

export async function signOut(store: Store, token: string): Promise<void> {
  await store.sessions.delete(digestToken(token));
}
