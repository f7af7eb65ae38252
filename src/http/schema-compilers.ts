// Fastify's JSON-schema compilers (ajv to validate, fast-json-stringify to serialize), loaded the first time a
// route declares a schema. None of ours does (src/http/params.ts checks every parameter), so a start no longer
// loads them: they are a quarter of the bundle, which leaves them out (scripts/build.mjs). A route added to
// the app by someone embedding it still gets them, found as Fastify finds them, among its own dependencies.
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';
import { requireFromHere } from '../shipped-files.ts';

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type Build = (...args: unknown[]) => unknown;

/** What `require(name)()` gives (the package's factory, made as Fastify makes it), once first asked. */
function lazily(name: string): Build {
  let build: Build | null = null;
  return (...args) => {
    build ??= (createRequire(requireFromHere.resolve('fastify'))(name) as () => Build)();
    return build(...args);
  };
}

export const schemaCompilers = {
  buildValidator: lazily('@fastify/ajv-compiler'),
  buildSerializer: lazily('@fastify/fast-json-stringify-compiler'),
} as Factories;
