// GitLab's user entities: UserBasic (authors, members), UserPublic (GET /users/:id), and the full
// view a user has of themselves (GET /user) or an admin has of anyone.
// An entity that extends another adds its keys with Object.assign onto the fresh object: `{ ...entity(),
// more }` takes a slow path in Node 20's V8 (about 2 µs against 0.1), paid by every item of every list.
import type { Identity, User } from '../../storage/db/schema.ts';
import type { MemberWithUser } from '../../storage/db/tables/members.ts';

/** `locked`: whether sign-in is locked after failed attempts (Devise's access_locked?); looked up only by the users API. */
export const userBasic = (user: Pick<User, 'id' | 'username' | 'name' | 'state'>, base: string, locked = false) => ({
  id: user.id,
  username: user.username,
  name: user.name,
  state: user.state,
  locked,
  avatar_url: null,
  web_url: `${base}/${user.username}`,
});

export const userPublic = (user: User, base: string, locked = false) =>
  Object.assign(userBasic(user, base, locked), {
    created_at: user.created_at,
    bio: '',
    location: '',
    public_email: user.public_email ?? '',
    bot: user.bot === 1,
  });

/** What a user sees of themselves, and an admin of anyone; `identities` are the user's own (GitLab's Identity entity). */
export const userFull = (user: User, base: string, locked = false, identities: Identity[] = []) =>
  Object.assign(userPublic(user, base, locked), {
    email: user.email,
    is_admin: user.admin === 1,
    external: user.external === 1,
    identities: identities.map((i) => ({ provider: i.provider, extern_uid: i.extern_uid })),
  });

export const member = (m: MemberWithUser, base: string) =>
  Object.assign(
    userBasic({ id: m.user_id, username: m.username, name: m.name, state: m.state as User['state'] }, base),
    { access_level: m.access_level, created_at: m.created_at, expires_at: null },
  );
