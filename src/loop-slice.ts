// A loop on the event loop that reads rows or trees one after another (a walk through history, a tree's
// paths) gives other requests a turn now and then: statements answered at once (SQLite, the object cache)
// never let them in by themselves.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long such a loop goes on before other requests' turn. */
export const SLICE_MS = 10;

/** A loop's slice of the event loop: `over()` once it ran SLICE_MS since it last let others in, `pass()` lets them. */
export function loopSlice() {
  let startedAt = performance.now();
  return {
    over: () => performance.now() - startedAt >= SLICE_MS,
    async pass(): Promise<void> {
      await nextTurn();
      startedAt = performance.now();
    },
  };
}
