// First start: an empty database gets the administrator `root` and a token for it.
import fs from 'node:fs';
import path from 'node:path';
import type { Store } from '../storage/db/store.ts';
import type { User } from '../storage/db/schema.ts';
import { createUser } from './users.ts';
import { createToken } from './tokens.ts';
import { Failure } from './failure.ts';
import { makePrivateDir, PRIVATE_FILE_MODE, tightenPrivate } from '../storage/private-files.ts';

export interface BootstrapResult {
  created: boolean;
  /** Where the generated token was written, when it was generated. */
  tokenFile: string | null;
  /** The root token, when it was created now. */
  token: string | null;
}

export async function bootstrapRoot(
  store: Store,
  opts: { initialRootToken: string | null; dataDir: string },
): Promise<BootstrapResult> {
  if ((await store.users.count()) > 0) return { created: false, tokenFile: null, token: null };
  let root: User;
  try {
    root = await createUser(store, {
      username: 'root',
      email: 'admin@example.com',
      name: 'Administrator',
      admin: true,
    });
  } catch (error) {
    // Another node bootstrapped the same database at the same moment: it won, nothing to do.
    if (error instanceof Failure && error.reason === 'conflict')
      return { created: false, tokenFile: null, token: null };
    throw error;
  }
  const { plain } = await createToken(store, root, {
    name: 'initial root token',
    scopes: ['api', 'sudo'],
    expiresAt: null,
    plain: opts.initialRootToken ?? undefined,
  });
  if (opts.initialRootToken) return { created: true, tokenFile: null, token: plain };
  makePrivateDir(opts.dataDir);
  const tokenFile = path.join(opts.dataDir, 'initial_root_token');
  fs.writeFileSync(tokenFile, `${plain}\n`, { mode: PRIVATE_FILE_MODE });
  tightenPrivate([tokenFile]); // a file left by an earlier start keeps its mode through writeFileSync
  return { created: true, tokenFile, token: plain };
}
