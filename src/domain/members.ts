// Memberships of projects and groups. Group membership is inherited by every subgroup and project
// below the group; the highest level wins.
import type { Store } from '../storage/db/store.ts';
import type { MemberWithUser, SourceType } from '../storage/db/tables/members.ts';
import type { Namespace } from '../storage/db/schema.ts';
import { ancestorIds } from '../storage/db/tables/namespaces.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../storage/db/database.ts';
import { ACCESS } from './access.ts';
import { conflict, forbidden, notFound } from './failure.ts';
import { nowIso } from './tokens.ts';

export const MEMBER_EXISTS = 'Member already exists';

/**
 * The groups whose members a project or group inherits: the groups above it, and a group itself. A project
 * in a user's namespace inherits from none.
 */
export const inheritedFrom = (namespace: Pick<Namespace, 'kind' | 'traversal_ids'>): number[] =>
  namespace.kind === 'group' ? ancestorIds(namespace) : [];

export interface MemberSource {
  type: SourceType;
  id: number;
}

/**
 * Whether the caller may grant, change or take away the Owner level here (policy's manage_owners). A
 * maintainer manages every other level; the Owner level is the owners' own, checked after the member is
 * found, as GitLab's member services do (403).
 */
export type OwnerRule = { mayManageOwners: boolean };

const requireOwnerRule = (rule: OwnerRule, ...levels: number[]) => {
  if (!rule.mayManageOwners && levels.includes(ACCESS.owner)) throw forbidden();
};

export async function addMember(
  store: Store,
  source: MemberSource,
  userId: number,
  accessLevel: number,
  rule: OwnerRule,
): Promise<MemberWithUser> {
  if (!(await store.users.findById(userId))) throw notFound('User');
  if (await store.members.find(source.type, source.id, userId)) throw conflict(MEMBER_EXISTS);
  requireOwnerRule(rule, accessLevel);
  const gone = () => notFound(source.type === 'Namespace' ? 'Group' : 'Project');
  try {
    await store.transaction(async (tx) => {
      // The group or project as committed now, kept until the member is in: one deleted meanwhile takes the
      // member with it, or was gone before, and no member is left of something no longer there.
      const there =
        source.type === 'Namespace'
          ? (await tx.namespaces.lock(source.id, 'share')) !== undefined
          : await tx.projects.lock(source.id, 'share');
      if (!there) throw gone();
      await tx.members.insert({
        source_type: source.type,
        source_id: source.id,
        user_id: userId,
        access_level: accessLevel,
        created_at: nowIso(),
      });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(MEMBER_EXISTS);
    // The user deleted since they were found (DELETE /users/:id): as if they had been gone already.
    if (isForeignKeyViolation(error)) throw notFound('User');
    throw error;
  }
  const added = await store.members.find(source.type, source.id, userId);
  if (!added) throw gone();
  return added;
}

export async function findMember(store: Store, source: MemberSource, userId: number): Promise<MemberWithUser> {
  const member = await store.members.find(source.type, source.id, userId);
  if (!member) throw notFound('Member');
  return member;
}

export async function updateMember(
  store: Store,
  source: MemberSource,
  userId: number,
  accessLevel: number,
  rule: OwnerRule,
): Promise<MemberWithUser> {
  const member = await findMember(store, source, userId);
  requireOwnerRule(rule, member.access_level, accessLevel);
  await keepingAnOwner(store, source, member, accessLevel, (tx) => tx.members.update(member.id, accessLevel));
  return { ...member, access_level: accessLevel };
}

export async function removeMember(store: Store, source: MemberSource, userId: number, rule: OwnerRule): Promise<void> {
  const member = await findMember(store, source, userId);
  requireOwnerRule(rule, member.access_level);
  await keepingAnOwner(store, source, member, null, (tx) => tx.members.delete(member.id));
}

/**
 * GitLab's last_owner rule: a group's last owner (active users' Owner memberships of it and of the groups
 * above it count) may be neither lowered nor removed, by anyone (403). Checked in the writing transaction
 * with the group and those above it locked, so two owners lowering each other at once cannot both go through.
 */
async function keepingAnOwner(
  store: Store,
  source: MemberSource,
  member: MemberWithUser,
  nextLevel: number | null,
  write: (tx: Store) => Promise<void>,
): Promise<void> {
  if (source.type !== 'Namespace' || member.access_level < ACCESS.owner || (nextLevel ?? 0) >= ACCESS.owner)
    return write(store);
  await store.transaction(async (tx) => {
    const group = await tx.namespaces.findById(source.id);
    if (!group) throw notFound('Group');
    const groups = ancestorIds(group);
    for (const id of groups) await tx.namespaces.lock(id, 'update');
    if ((await tx.members.countOwners(groups, ACCESS.owner)) <= 1) throw forbidden();
    await write(tx);
  });
}
