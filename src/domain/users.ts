// Users: creation with their personal namespace, admin changes, and state transitions.
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import type { Store } from '../storage/db/store.ts';
import type { User } from '../storage/db/schema.ts';
import { isUniqueViolation } from '../storage/db/database.ts';
import { conflict, Failure, forbidden, invalidFields, notFound } from './failure.ts';
import { pathError } from './paths.ts';
import { nowIso } from './tokens.ts';
import { codePoints } from '../text-scan.ts';
import { can, type Viewer } from './policy.ts';
import { publicVisibilityRestricted } from './settings.ts';

export const USERNAME_TAKEN = 'Username has already been taken';
export const EMAIL_TAKEN = 'Email has already been taken';

export interface NewUserInput {
  username: string;
  email: string;
  name: string;
  password?: string;
  admin?: boolean;
  external?: boolean;
  public_email?: string | null;
  /** GitLab's ghost user (domain/user-removal.ts); never from a request. */
  ghost?: boolean;
}

const EMAIL_FORMAT = /^[^@\s]+@[^@\s]+$/;
/** GitLab's User validates a name's length (characters): every page that names the user shows it whole. */
const MAX_NAME_CHARS = 255;

/** scrypt on Node's thread pool: one takes tens of milliseconds, which the event loop must not wait for. */
const scrypt = promisify(crypto.scrypt) as (password: string, salt: Buffer, length: number) => Promise<Buffer>;

async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const hash = await scrypt(password, salt, 32);
  return `scrypt$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** A hash of a password no one knows, made as every stored one is, at start (not on the first unknown login). */
const dummyDigest = hashPassword(crypto.randomBytes(16).toString('base64'));

/**
 * Whether `password` is the one `digest` was made from (constant time). Without a digest (an unknown login,
 * a user without a password) it is never, after checking against a dummy hash of the same cost, so that
 * how long the answer takes does not tell who exists.
 */
export async function verifyPassword(password: string, digest: string | null): Promise<boolean> {
  if (digest === null) {
    await verifyPassword(password, await dummyDigest);
    return false;
  }
  const [scheme, salt, hash] = digest.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length);
  return crypto.timingSafeEqual(actual, expected);
}

function validateUserFields(input: Partial<NewUserInput>): void {
  const errors: Record<string, string[]> = {};
  if (input.username !== undefined) {
    const e = pathError(input.username, true);
    if (e) errors.username = [e];
  }
  if (input.name !== undefined && codePoints(input.name, MAX_NAME_CHARS) > MAX_NAME_CHARS)
    errors.name = [`is too long (maximum is ${MAX_NAME_CHARS} characters)`];
  if (input.email !== undefined && !EMAIL_FORMAT.test(input.email)) errors.email = ['is invalid'];
  if (input.public_email && !EMAIL_FORMAT.test(input.public_email)) errors.public_email = ['is invalid'];
  if (input.password !== undefined && input.password.length < 8)
    errors.password = ['is too short (minimum is 8 characters)'];
  if (Object.keys(errors).length) throw invalidFields(errors);
}

/** An identity at an OpenID Connect provider that signs the new user in (domain/oidc-sign-in.ts). */
export interface NewIdentity {
  provider: string;
  issuer: string;
  extern_uid: string;
}

/** Creates the user, their personal namespace and, given one, the identity that signs them in, all or none. */
export async function createUser(store: Store, input: NewUserInput, identity?: NewIdentity): Promise<User> {
  validateUserFields(input);
  if ((await store.users.findByUsername(input.username)) || (await store.namespaces.findByFullPath(input.username))) {
    throw conflict(USERNAME_TAKEN);
  }
  if (await store.users.findByEmail(input.email)) throw conflict(EMAIL_TAKEN);
  const passwordDigest = input.password ? await hashPassword(input.password) : null;
  try {
    return await store.transaction(async (tx) => {
      const now = nowIso();
      const user = await tx.users.insert({
        username: input.username,
        email: input.email,
        name: input.name,
        public_email: input.public_email || null,
        state: 'active',
        admin: input.admin ? 1 : 0,
        external: input.external ? 1 : 0,
        bot: 0,
        ghost: input.ghost ? 1 : 0,
        password_digest: passwordDigest,
        namespace_id: null,
        created_at: now,
      });
      const ns = await tx.namespaces.insert(
        {
          kind: 'user',
          name: input.name,
          path: input.username,
          full_path: input.username,
          full_name: input.name,
          parent_id: null,
          owner_id: user.id,
          visibility: 'public',
          description: '',
          file_template_project_id: null,
          created_at: now,
        },
        null,
        tx.kysely,
      );
      if (identity) await tx.identities.insert({ ...identity, user_id: user.id, created_at: now });
      return (await tx.users.update(user.id, { namespace_id: ns.id }))!; // made in this transaction
    });
  } catch (error) {
    // Two requests racing for the same name: the database's unique index decides, the loser gets 409.
    if (isUniqueViolation(error)) {
      throw conflict((await store.users.findByEmail(input.email)) ? EMAIL_TAKEN : USERNAME_TAKEN);
    }
    throw error;
  }
}

export interface UserChanges {
  name?: string;
  email?: string;
  public_email?: string | null;
  admin?: boolean;
  external?: boolean;
}

export async function updateUser(store: Store, user: User, changes: UserChanges): Promise<User> {
  validateUserFields({ name: changes.name, email: changes.email, public_email: changes.public_email });
  if (changes.email !== undefined) {
    const other = await store.users.findByEmail(changes.email);
    if (other && other.id !== user.id) throw conflict(EMAIL_TAKEN);
  }
  return store.transaction(async (tx) => {
    const updated = await tx.users.update(user.id, {
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.email !== undefined && { email: changes.email }),
      ...(changes.public_email !== undefined && { public_email: changes.public_email || null }),
      ...(changes.admin !== undefined && { admin: changes.admin ? 1 : 0 }),
      ...(changes.external !== undefined && { external: changes.external ? 1 : 0 }),
    });
    if (!updated) throw notFound('User'); // deleted since it was found
    if (changes.name !== undefined && user.namespace_id !== null) {
      await tx.namespaces.update(user.namespace_id, { name: changes.name, full_name: changes.name });
    }
    return updated;
  });
}

export async function findUser(store: Store, id: number): Promise<User> {
  const user = await store.users.findById(id);
  if (!user) throw notFound('User');
  return user;
}

/** A user the viewer may read (read_user), by id or username; 404 User Not Found otherwise, as for none. */
export async function findReadableUser(store: Store, viewer: Viewer, idOrUsername: number | string): Promise<User> {
  const user =
    typeof idOrUsername === 'number'
      ? await store.users.findById(idOrUsername)
      : await store.users.findByUsername(idOrUsername);
  if (!user || !can(viewer, 'read_user', { publicRestricted: await publicVisibilityRestricted(store) }))
    throw notFound('User');
  return user;
}

const STATE_REFUSALS: Record<string, Partial<Record<User['state'], string>>> = {
  unblock: { deactivated: 'Deactivated users cannot be unblocked by the API' },
  deactivate: { blocked: 'A blocked user cannot be deactivated by the API' },
  activate: { blocked: 'A blocked user must be unblocked to be activated' },
};

const INTERNAL_REFUSALS: Record<string, string> = {
  block: 'An internal user cannot be blocked',
  deactivate: 'Internal users cannot be deactivated',
};

/** block/unblock/deactivate/activate with GitLab's refusals; repeating a transition is harmless. */
export async function changeState(
  store: Store,
  actor: Pick<User, 'id'>,
  user: User,
  action: 'block' | 'unblock' | 'deactivate' | 'activate',
): Promise<User> {
  // GitLab's block endpoint: an administrator would lock themselves out with their own token.
  if (action === 'block' && user.id === actor.id)
    throw forbidden('The API initiating user cannot be blocked by the API');
  const refusal = STATE_REFUSALS[action]?.[user.state];
  if (refusal) throw forbidden(refusal);
  // GitLab's ghost user is an internal user: its BlockService and DeactivateService refuse (render_api_error!).
  const internal = user.ghost ? INTERNAL_REFUSALS[action] : undefined;
  if (internal) throw new Failure('forbidden_message', internal);
  const to = action === 'block' ? 'blocked' : action === 'deactivate' ? 'deactivated' : 'active';
  if (user.state === to) return user;
  const changed = await store.users.update(user.id, { state: to });
  if (!changed) throw notFound('User'); // deleted since it was found
  return changed;
}
