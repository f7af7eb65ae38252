// What removing a project takes away: shared by DELETE /projects/:id and DELETE /groups/:id.
import type { Store } from '../storage/db/store.ts';

/**
 * In a transaction: removes the project with its members, its snippets and every repository of theirs; false
 * when it is gone already. Locked first: a snippet created meanwhile has committed before its id is read
 * below, or waits and then finds the project gone; none keeps a repository nobody owns.
 */
export async function removeProject(tx: Store, projectId: number): Promise<boolean> {
  if (!(await tx.projects.lock(projectId, 'update'))) return false;
  await tx.git.delete('snippet', await tx.snippets.lockInProject(projectId));
  await tx.git.delete('project', [projectId]);
  await tx.projects.delete(projectId);
  return true;
}
