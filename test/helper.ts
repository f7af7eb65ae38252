// Test harness: a real app over a real database. SNIPPETD_TEST_DB=sqlite (default) gives each app its
// own SQLite file in a temporary directory; SNIPPETD_TEST_DB=postgres gives each app its own schema in
// the PostgreSQL server named by SNIPPETD_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import assert from 'node:assert/strict';
import pg from 'pg';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../src/app.ts';
import { defaults, type Config } from '../src/config.ts';
import { bootstrapRoot } from '../src/domain/bootstrap.ts';

export const TEST_DB = (process.env.SNIPPETD_TEST_DB ?? 'sqlite') as 'sqlite' | 'postgres';
export const POSTGRES_URL = process.env.SNIPPETD_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const ROOT_TOKEN = 'root-token-for-tests-0123456789';

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  /** app.inject with the JSON body parsed into `json` (undefined when the body is not JSON). */
  request(options: InjectOptions & { token?: string | null }): Promise<LightMyRequestResponse & { json: any }>;
  /** A request to /api/v4<url> as the holder of `token` (null: anonymous). */
  api(
    method: string,
    url: string,
    token: string | null,
    payload?: object,
  ): Promise<LightMyRequestResponse & { json: any }>;
  /** Like api(), asserting the status; answers the parsed body. */
  ok(method: string, url: string, token: string | null, payload: object | undefined, status: number): Promise<any>;
  /** Creates a user through the API (as root) and a personal access token for them. */
  user(
    username: string,
    opts?: { admin?: boolean; external?: boolean; scopes?: string[] },
  ): Promise<{ id: number; username: string; token: string }>;
  close(): Promise<void>;
}

export async function postgresSchemaUrl(): Promise<{ url: string; drop: () => Promise<void> }> {
  const schema = `t_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: POSTGRES_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}

export async function createTestApp(overrides: Partial<Config> = {}): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-test-'));
  const pgSchema = TEST_DB === 'postgres' ? await postgresSchemaUrl() : null;
  const config: Config = {
    ...defaults(dataDir),
    databaseUrl: pgSchema ? pgSchema.url : `sqlite:${path.join(dataDir, 'test.sqlite3')}`,
    logLevel: 'silent',
    initialRootToken: ROOT_TOKEN,
    ...overrides,
  };
  let app: FastifyInstance;
  try {
    app = await buildApp(config);
    await bootstrapRoot(app.store, config);
  } catch (error) {
    await pgSchema?.drop();
    throw error;
  }

  const request: TestApp['request'] = async ({ token = ROOT_TOKEN, headers, ...options }) => {
    const res = await app.inject({ ...options, headers: { ...(token ? { 'private-token': token } : {}), ...headers } });
    let json: unknown;
    try {
      json = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      json = undefined;
    }
    return Object.assign(res, { json });
  };

  const api: TestApp['api'] = (method, url, token, payload) =>
    request({
      method: method as InjectOptions['method'],
      url: `/api/v4${url}`,
      token,
      ...(payload && { payload: payload as InjectOptions['payload'] }),
    });
  const ok: TestApp['ok'] = async (method, url, token, payload, status) => {
    const res = await api(method, url, token, payload);
    assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
    return res.json;
  };

  const user: TestApp['user'] = async (username, opts = {}) => {
    const created = await request({
      method: 'POST',
      url: '/api/v4/users',
      payload: {
        username,
        email: `${username}@example.com`,
        name: username.toUpperCase(),
        admin: opts.admin ?? false,
        external: opts.external ?? false,
      },
    });
    if (created.statusCode !== 201) throw new Error(`creating ${username}: ${created.statusCode} ${created.body}`);
    const token = await request({
      method: 'POST',
      url: `/api/v4/users/${created.json.id}/personal_access_tokens`,
      payload: { name: 'test', scopes: opts.scopes ?? ['api'] },
    });
    if (token.statusCode !== 201) throw new Error(`token for ${username}: ${token.statusCode} ${token.body}`);
    return { id: created.json.id, username, token: token.json.token };
  };

  return {
    app,
    config,
    request,
    api,
    ok,
    user,
    close: async () => {
      await app.close();
      await pgSchema?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
