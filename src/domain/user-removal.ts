// Deleting a user (DELETE /users/:id), as GitLab's Users::DestroyService and MigrateRecordsToGhostUserService do it:
// the user is blocked, their memberships go, the groups they alone own go (only when asked for with hard_delete,
// else the delete is refused), their personal projects and personal snippets go, and their project snippets are
// kept under GitLab's ghost user (or go too, with hard_delete). Tokens, sessions and identities go with the user.
import type { Store } from '../storage/db/store.ts';
import type { User } from '../storage/db/schema.ts';
import { ancestorIds } from '../storage/db/tables/namespaces.ts';
import { loopSlice } from '../loop-slice.ts';
import { ACCESS } from './access.ts';
import { conflict, Failure } from './failure.ts';
import { deleteGroup } from './groups.ts';
import { removeProject } from './project-removal.ts';
import { createUser } from './users.ts';

export const SOLE_OWNER = 'User cannot be removed while is the sole-owner of a group';
/** Snippets deleted in one transaction: a user with thousands holds no lock for long. */
const SNIPPETS_A_TRANSACTION = 100;
/** How often a hard delete deletes groups the user (still, or again) owns alone before it gives up (409). */
const GROUP_RACES = 5;
/**
 * Project snippets given to the ghost user in one statement: one UPDATE of 50,000 held the loop 376 ms (SQLite), of
 * 1,000 20-35 ms on a busy machine.
 */
const SNIPPETS_GIVEN_AT_ONCE = 250;

/** The groups the user owns themselves with no other owner there or above (GitLab's solo_owned_groups). */
async function soloOwnedGroups(store: Store, user: User): Promise<number[]> {
  const solo: number[] = [];
  for (const group of await store.namespaces.findManyByIds(await store.members.groupIdsAtLevel(user.id, ACCESS.owner)))
    if ((await store.members.countOthersAtLevel(ancestorIds(group), user.id, ACCESS.owner)) === 0) solo.push(group.id);
  return solo;
}

export async function removeUser(store: Store, user: User, options: { hardDelete: boolean }): Promise<void> {
  // GitLab's ghost user "cannot be removed": its DestroyService refuses, after the API has answered 204.
  if (user.ghost) return;
  const soloOwned = await soloOwnedGroups(store, user);
  if (soloOwned.length && !options.hardDelete) throw conflict(SOLE_OWNER);
  // Blocked first: the user's tokens and sessions are refused from now on, so nothing of theirs is made meanwhile.
  if (!(await store.users.update(user.id, { state: 'blocked' }))) return; // deleted meanwhile: done
  const ghost = options.hardDelete ? null : await ghostUser(store);
  await withNoSoloGroups(store, user, options.hardDelete, (tx) => tx.members.deleteOfUser(user.id));
  const slice = loopSlice();
  const personal = user.namespace_id === null ? null : await store.namespaces.findById(user.namespace_id);
  if (personal) {
    for (const id of await store.projects.idsBelow(personal)) {
      await store.transaction((tx) => removeProject(tx, id));
      if (slice.over()) await slice.pass();
    }
  }
  const which = options.hardDelete ? 'all' : 'personal';
  for (;;) {
    const ids = await store.snippets.idsOfAuthor(user.id, which, SNIPPETS_A_TRANSACTION);
    if (!ids.length) break;
    await store.transaction(async (tx) => {
      // Each row locked first, as every writer of a snippet does; one deleted meanwhile is passed over.
      for (const id of ids) if (await tx.snippets.lock(id)) await tx.snippets.delete(id);
      await tx.git.delete('snippet', ids);
    });
    if (slice.over()) await slice.pass();
  }
  if (ghost) {
    while ((await store.snippets.giveProjectSnippets(user.id, ghost.id, SNIPPETS_GIVEN_AT_ONCE)) > 0)
      if (slice.over()) await slice.pass();
  }
  await withNoSoloGroups(store, user, options.hardDelete, async (tx) => {
    // Anything made meanwhile, at once.
    if (ghost) await tx.snippets.giveProjectSnippets(user.id, ghost.id, Number.MAX_SAFE_INTEGER);
    // Anything made by a request already under way when the user was blocked.
    const left = await tx.snippets.idsOfAuthor(user.id, 'all', Number.MAX_SAFE_INTEGER);
    for (const id of left) await tx.snippets.delete(id);
    await tx.git.delete('snippet', left);
    if (personal) {
      for (const id of await tx.projects.idsBelow(personal)) await removeProject(tx, id);
      await tx.namespaces.deleteSubtree(personal);
    }
    await tx.members.deleteOfUser(user.id);
    await tx.users.delete(user.id);
  });
}

/**
 * `work` in one transaction with the user's row locked (no membership of theirs can be added until it ends), once
 * they alone own no group: a group they came to own alone since they were checked (made by a request under way when
 * they were blocked, or as them with sudo) would be left with no owner once their memberships go. Such groups are
 * refused as at the start (409), or deleted first with hard_delete. Nothing is done when the user is gone.
 */
async function withNoSoloGroups(
  store: Store,
  user: User,
  hardDelete: boolean,
  work: (tx: Store) => Promise<void>,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const solo = await store.transaction(async (tx) => {
      if (!(await tx.users.lock(user.id))) return [];
      const solo = await soloOwnedGroups(tx, user);
      if (!solo.length) await work(tx);
      return solo;
    });
    if (!solo.length) return;
    if (!hardDelete || attempt >= GROUP_RACES) throw conflict(SOLE_OWNER);
    await deleteGroups(store, solo);
  }
}

/** Deletes these groups with all below them; one deleted meanwhile is passed over. */
async function deleteGroups(store: Store, ids: number[]): Promise<void> {
  for (const id of ids) {
    const group = await store.namespaces.findById(id);
    if (!group) continue;
    try {
      await deleteGroup(store, group);
    } catch (error) {
      if (!(error instanceof Failure && error.reason === 'not_found')) throw error;
    }
  }
}

/**
 * GitLab's ghost user (Users::Internal.ghost), made the first time it is needed: `ghost`, or `ghost1`, `ghost2`, …
 * when the name is taken. Two deletes making it at once: the one that loses finds the other's.
 */
async function ghostUser(store: Store): Promise<User> {
  for (let n = 0; ; n++) {
    const ghost = await store.users.findGhost();
    if (ghost) return ghost;
    const suffix = n === 0 ? '' : String(n);
    try {
      return await createUser(store, {
        username: `ghost${suffix}`,
        email: `ghost${suffix}@example.com`,
        name: 'Ghost User',
        ghost: true,
      });
    } catch (error) {
      if (!(error instanceof Failure && error.reason === 'conflict') || n >= 100) throw error;
    }
  }
}
