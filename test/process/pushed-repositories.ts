// For the process tests that push repositories made by git fast-import to a real server, as root: git's
// environment (no user or system configuration), the repositories in a directory of their own, the API.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Spawned } from '../../scripts/spawn-server.ts';

export interface GitWork {
  /** The directory the repositories are made in. */
  dir: string;
  /** git's environment: HOME in `dir`, a fixed author, no system configuration. */
  env: NodeJS.ProcessEnv;
  /** A new repository in `dir` with what `fastImport` (git fast-import's input) describes. */
  repository(name: string, fastImport: string | Buffer): string;
  /** Pushes `from`'s branch main to `fullPath`'s repository on `server` as `to`, with root's token. */
  push(server: Spawned, token: string, from: string, fullPath: string, to?: string): void;
  remove(): void;
}

export function gitWork(prefix: string): GitWork {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'T',
    GIT_AUTHOR_EMAIL: 't@example.com',
    GIT_COMMITTER_NAME: 'T',
    GIT_COMMITTER_EMAIL: 't@example.com',
  };
  return {
    dir,
    env,
    repository(name, fastImport) {
      const repo = path.join(dir, name);
      execFileSync('git', ['init', '-q', '-b', 'main', repo], { env });
      execFileSync('git', ['fast-import', '--quiet'], { cwd: repo, env, input: fastImport, maxBuffer: 1 << 28 });
      return repo;
    },
    push(server, token, from, fullPath, to = 'main') {
      const remote = new URL(`${server.url}/${fullPath}.git`);
      remote.username = 'root';
      remote.password = token;
      execFileSync('git', ['push', '-q', remote.href, `main:refs/heads/${to}`], { cwd: from, env });
    },
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** `server`'s API as the holder of `token`: a request that must succeed, and its JSON. */
export const apiOf =
  (server: () => Spawned, token: string) =>
  async (method: string, url: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${server().url}/api/v4${url}`, {
      method,
      headers: { 'PRIVATE-TOKEN': token, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    assert.ok(res.ok, `${method} ${url}: ${res.status}`);
    return res.json();
  };
