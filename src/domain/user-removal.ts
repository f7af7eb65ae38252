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
  await store.users.update(user.id, { state: 'blocked' });
  const ghost = options.hardDelete ? null : await ghostUser(store);
  await store.members.deleteOfUser(user.id);
  for (const id of soloOwned) {
    const group = await store.namespaces.findById(id);
    if (group) await deleteGroup(store, group);
  }
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
  await store.transaction(async (tx) => {
    if (!(await tx.users.lock(user.id))) return; // deleted meanwhile
    if (ghost) await tx.snippets.giveProjectSnippets(user.id, ghost.id);
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
