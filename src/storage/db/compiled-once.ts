// The hot requests' queries, built and compiled once. Kysely builds a query anew on every call (its
// immutable nodes, then a compiler walk over them), which for a lookup by key costs more CPU than the
// database spends answering it. A query made here is built once with stand-ins for its arguments; each call
// runs the same SQL with the arguments in their places. Only queries whose shape never depends on their
// arguments may be made this way (no lists of varying length, no conditional clauses).
import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** Where an argument goes in the compiled query's parameters. */
class Argument {
  constructor(readonly index: number) {}
}

/** `build` (a query of `arity` arguments) compiled on first use; the function answers its rows. */
export function compiledOnce<A extends unknown[], R>(
  db: Kysely<Database>,
  arity: A['length'],
  build: (...args: A) => Compilable<R>,
): (...args: A) => Promise<R[]> {
  let compiled: CompiledQuery<R> | null = null;
  let sources: (Argument | { value: unknown })[] = [];
  return async (...args: A) => {
    if (!compiled) {
      compiled = build(...(Array.from({ length: arity }, (_, i) => new Argument(i)) as A)).compile();
      sources = compiled.parameters.map((p) => (p instanceof Argument ? p : { value: p }));
      const used = new Set(sources.flatMap((s) => (s instanceof Argument ? [s.index] : [])));
      if (used.size !== arity)
        throw new Error(`a compiled-once query must use all ${arity} arguments: ${compiled.sql}`);
    }
    const parameters = sources.map((s) => (s instanceof Argument ? args[s.index] : s.value));
    return (await db.executeQuery<R>({ ...compiled, parameters })).rows;
  };
}
