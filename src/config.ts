// Typed configuration: every setting, its environment variable, its CLI flag, default and limits live
// here and nowhere else. docs/configuration.md documents the same table for operators.
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A search's statements on a large instance take milliseconds; seconds are a text built to be slow. */
export const DEFAULT_SEARCH_TIMEOUT_MS = 10_000;

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string;
  /** Base of every URL we hand out (web_url, Link headers); null = taken from each request's Host. */
  externalUrl: string | null;
  initialRootToken: string | null;
  logLevel: LogLevel;
  /**
   * Largest request body accepted from a caller with a valid token, in bytes; null: the largest a snippet
   * write needs at the instance's snippet_size_limit (http/plugins/body-limits.ts).
   */
  maxBodyBytes: number | null;
  /** Largest git push (or fetch negotiation) body accepted over HTTP, in bytes. */
  maxGitBodyBytes: number;
  /** A request (headers and body) must arrive within this many seconds, or it is answered 408 and closed. */
  requestTimeoutSeconds: number;
  /** A connection on which nothing moves for this many seconds is closed. */
  idleTimeoutSeconds: number;
  /** How long rendering one file or description for a page may take before it is shown as plain text. */
  renderBudgetMs: number;
  /** How long one statement of a search may run on PostgreSQL before the search is answered 408. */
  searchTimeoutMs: number;
  /** Addresses whose X-Forwarded-For header is trusted for the client address. */
  trustedProxies: string[];
  /** Addresses and CIDR ranges that may read /-/health, /-/readiness, /-/liveness and /-/metrics. */
  monitoringAllowlist: string[];
  /** Akismet-compatible spam service for public snippets; null = nothing is spam. */
  akismetUrl: string | null;
  akismetApiKey: string;
  /** Test-suite mode (ephemeral.ts): database in memory, files in a temporary directory, reset and seed. */
  ephemeral: boolean;
  /** A seed document (YAML or JSON) applied at start, before the port opens; ephemeral mode only. */
  seedFile: string | null;
  /** `serve`'s processes sharing the port (cluster.ts); by default one per CPU, as GitLab's Puma. */
  workers: number;
  /** Sign-in with OpenID Connect (http/oidc-relying-party.ts): the provider's issuer; null = off. */
  oidcIssuer: string | null;
  oidcClientId: string | null;
  oidcClientSecret: string | null;
  /** The sign-in button's text. */
  oidcLabel: string;
  /** Values of the `groups` claim that make a user an administrator; empty: sign-in never changes it. */
  oidcAdminGroups: string[];
  /** Values of the `groups` claim that make a user external; empty: sign-in never changes it. */
  oidcExternalGroups: string[];
  /** If not empty, only members of one of these groups may sign in with the provider. */
  oidcAllowedGroups: string[];
}

export class ConfigError extends Error {}

interface Setting {
  key: keyof Config;
  env: string;
  flag: string;
  /** A flag that takes no value (`--ephemeral`); its variable takes true/false. */
  boolean?: true;
  /** `name` is the flag or the variable the value came from, for the error that names it. */
  parse: (raw: string, name: string) => Config[keyof Config];
}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(min: number, max: number) {
  return (raw: string, name: string): number => {
    if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
}

function url(raw: string, name: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * The provider's issuer: https, or plain http on loopback only (a provider on this machine, as tests start
 * one); elsewhere the codes and tokens of the sign-in would cross the network readable by anyone on the way.
 */
function issuerUrl(raw: string, name: string): string {
  const value = url(raw, name);
  const { protocol, hostname } = new URL(value);
  if (protocol === 'http:' && !LOOPBACK_HOSTS.test(hostname))
    throw new ConfigError(`${name} must be an https URL (plain http only on loopback), got "${raw}"`);
  return value;
}

function databaseUrl(raw: string, name: string): string {
  if (/^(postgres|postgresql):\/\//.test(raw) || /^sqlite:/.test(raw)) return raw;
  throw new ConfigError(`${name} must start with sqlite: or postgres://, got "${raw}"`);
}

const SETTINGS: Setting[] = [
  { key: 'host', env: 'SNIPPETD_HOST', flag: '--host', parse: (raw) => raw },
  { key: 'port', env: 'SNIPPETD_PORT', flag: '--port', parse: integer(0, 65535) },
  { key: 'dataDir', env: 'SNIPPETD_DATA_DIR', flag: '--data-dir', parse: (raw) => path.resolve(raw) },
  { key: 'databaseUrl', env: 'SNIPPETD_DATABASE_URL', flag: '--database-url', parse: databaseUrl },
  { key: 'externalUrl', env: 'SNIPPETD_EXTERNAL_URL', flag: '--external-url', parse: url },
  { key: 'initialRootToken', env: 'SNIPPETD_INITIAL_ROOT_TOKEN', flag: '--initial-root-token', parse: initialToken },
  { key: 'logLevel', env: 'SNIPPETD_LOG_LEVEL', flag: '--log-level', parse: logLevel },
  {
    key: 'maxBodyBytes',
    env: 'SNIPPETD_MAX_BODY_BYTES',
    flag: '--max-body-bytes',
    parse: integer(1024, 1024 * 1024 * 1024),
  },
  {
    key: 'maxGitBodyBytes',
    env: 'SNIPPETD_MAX_GIT_BODY_BYTES',
    flag: '--max-git-body-bytes',
    parse: integer(1024, 16 * 1024 * 1024 * 1024),
  },
  {
    key: 'requestTimeoutSeconds',
    env: 'SNIPPETD_REQUEST_TIMEOUT',
    flag: '--request-timeout',
    parse: integer(1, 24 * 60 * 60),
  },
  { key: 'idleTimeoutSeconds', env: 'SNIPPETD_IDLE_TIMEOUT', flag: '--idle-timeout', parse: integer(1, 24 * 60 * 60) },
  {
    key: 'renderBudgetMs',
    env: 'SNIPPETD_RENDER_BUDGET_MS',
    flag: '--render-budget-ms',
    parse: integer(100, 10 * 60 * 1000),
  },
  {
    key: 'searchTimeoutMs',
    env: 'SNIPPETD_SEARCH_TIMEOUT_MS',
    flag: '--search-timeout-ms',
    parse: integer(100, 10 * 60 * 1000),
  },
  { key: 'trustedProxies', env: 'SNIPPETD_TRUSTED_PROXIES', flag: '--trusted-proxies', parse: list },
  {
    key: 'monitoringAllowlist',
    env: 'SNIPPETD_MONITORING_ALLOWLIST',
    flag: '--monitoring-allowlist',
    parse: addressList,
  },
  { key: 'akismetUrl', env: 'SNIPPETD_AKISMET_URL', flag: '--akismet-url', parse: url },
  { key: 'akismetApiKey', env: 'SNIPPETD_AKISMET_API_KEY', flag: '--akismet-api-key', parse: (raw) => raw },
  { key: 'ephemeral', env: 'SNIPPETD_EPHEMERAL', flag: '--ephemeral', boolean: true, parse: booleanValue },
  { key: 'seedFile', env: 'SNIPPETD_SEED', flag: '--seed', parse: (raw) => path.resolve(raw) },
  { key: 'workers', env: 'SNIPPETD_WORKERS', flag: '--workers', parse: integer(1, 256) },
  { key: 'oidcIssuer', env: 'SNIPPETD_OIDC_ISSUER', flag: '--oidc-issuer', parse: issuerUrl },
  { key: 'oidcClientId', env: 'SNIPPETD_OIDC_CLIENT_ID', flag: '--oidc-client-id', parse: (raw) => raw },
  {
    key: 'oidcClientSecret',
    env: 'SNIPPETD_OIDC_CLIENT_SECRET',
    flag: '--oidc-client-secret',
    parse: (raw) => raw,
  },
  { key: 'oidcLabel', env: 'SNIPPETD_OIDC_LABEL', flag: '--oidc-label', parse: (raw) => raw },
  { key: 'oidcAdminGroups', env: 'SNIPPETD_OIDC_ADMIN_GROUPS', flag: '--oidc-admin-groups', parse: list },
  { key: 'oidcExternalGroups', env: 'SNIPPETD_OIDC_EXTERNAL_GROUPS', flag: '--oidc-external-groups', parse: list },
  { key: 'oidcAllowedGroups', env: 'SNIPPETD_OIDC_ALLOWED_GROUPS', flag: '--oidc-allowed-groups', parse: list },
];

function booleanValue(raw: string, name: string): boolean {
  if (['true', '1'].includes(raw)) return true;
  if (['false', '0'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

export function initialToken(raw: string, name: string): string {
  if (raw.length < 20) throw new ConfigError(`${name} must be at least 20 characters long`);
  return raw;
}

function logLevel(raw: string, name: string): LogLevel {
  if (!LOG_LEVELS.includes(raw as LogLevel)) {
    throw new ConfigError(`${name} must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  }
  return raw as LogLevel;
}

/** A list of IP addresses or CIDR ranges (`10.0.0.0/8`, `::1/128`), as GitLab's monitoring.ip_whitelist. */
function addressList(raw: string, name: string): string[] {
  const entries = list(raw);
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split('/');
    const family = net.isIP(address);
    const max = family === 4 ? 32 : 128;
    const validBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= max);
    if (!family || !validBits || rest.length) {
      throw new ConfigError(`${name} must be IP addresses or CIDR ranges separated by commas, got "${entry}"`);
    }
  }
  return entries;
}

function list(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function defaults(dataDir = path.resolve('data')): Config {
  return {
    host: '127.0.0.1',
    port: 8080,
    dataDir,
    databaseUrl: `sqlite:${path.join(dataDir, 'snippetd.sqlite3')}`,
    externalUrl: null,
    initialRootToken: null,
    logLevel: 'info',
    maxBodyBytes: null,
    maxGitBodyBytes: 1024 * 1024 * 1024,
    // A gibibyte push at 4 MiB/s fits in 300 s; a client sending a byte a second is gone after it.
    requestTimeoutSeconds: 300,
    idleTimeoutSeconds: 60,
    // Highlighting a megabyte of code takes about 2 s of one core; Markdown that takes longer is hostile.
    renderBudgetMs: 5000,
    searchTimeoutMs: DEFAULT_SEARCH_TIMEOUT_MS,
    trustedProxies: [],
    // GitLab's default monitoring.ip_whitelist: loopback only.
    monitoringAllowlist: ['127.0.0.0/8', '::1/128'],
    akismetUrl: null,
    akismetApiKey: '',
    ephemeral: false,
    seedFile: null,
    workers: os.availableParallelism(),
    oidcIssuer: null,
    oidcClientId: null,
    oidcClientSecret: null,
    // GitLab's label for an openid_connect provider without one.
    oidcLabel: 'OpenID Connect',
    oidcAdminGroups: [],
    oidcExternalGroups: [],
    oidcAllowedGroups: [],
  };
}

/** Reads flags (`--port 9000` or `--port=9000`) over environment variables over defaults. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: string[] = []): Config {
  const flags = parseFlags(argv);
  // Each value with where it came from, so that an invalid one is named as the operator wrote it.
  const raw = new Map<keyof Config, { value: string; name: string }>();
  for (const s of SETTINGS) {
    const flag = flags.get(s.flag);
    if (flag !== undefined && flag !== '') raw.set(s.key, { value: flag, name: s.flag });
    else if (env[s.env] !== undefined && env[s.env] !== '') raw.set(s.key, { value: env[s.env]!, name: s.env });
  }
  const dataDirRaw = raw.get('dataDir');
  const config = defaults(dataDirRaw ? path.resolve(dataDirRaw.value) : undefined);
  for (const s of SETTINGS) {
    const given = raw.get(s.key);
    if (given !== undefined) (config as unknown as Record<string, unknown>)[s.key] = s.parse(given.value, given.name);
  }
  // Ephemeral mode chooses its own database and directory; a test suite that names others means something else.
  for (const key of ['dataDir', 'databaseUrl'] as const) {
    const given = raw.get(key);
    if (config.ephemeral && given)
      throw new ConfigError(`${given.name} cannot be used with --ephemeral, which keeps nothing`);
  }
  // An in-memory database lives in one process: ephemeral mode serves from one, and so does sqlite::memory:,
  // whose workers would each serve a database of their own.
  const workers = raw.get('workers');
  if (config.ephemeral && workers && config.workers > 1)
    throw new ConfigError(
      `${workers.name} cannot be more than 1 with --ephemeral, whose database is in one process's memory`,
    );
  const memory = config.databaseUrl === 'sqlite::memory:' ? raw.get('databaseUrl') : undefined;
  if (memory && workers && config.workers > 1)
    throw new ConfigError(
      `${workers.name} cannot be more than 1 with an in-memory database (${memory.name}), which is in one process's memory`,
    );
  if (config.ephemeral || memory) config.workers = 1;
  // A test suite reads the start-up lines and often nothing after: a line a request at info would fill its pipe
  // in about 240 requests, and the server would then wait on the pipe for good.
  if (config.ephemeral && !raw.has('logLevel')) config.logLevel = 'warn';
  const seed = raw.get('seedFile');
  if (seed && !config.ephemeral)
    throw new ConfigError(`${seed.name} needs --ephemeral (a seed is for a fresh database)`);
  checkOidc(raw);
  return config;
}

const OIDC_REQUIRED = ['oidcIssuer', 'oidcClientId', 'oidcClientSecret'] as const;

/** OpenID Connect is on with its issuer, client id and secret together, and its other settings need it on. */
function checkOidc(raw: Map<keyof Config, { value: string; name: string }>): void {
  const given = OIDC_REQUIRED.filter((key) => raw.has(key));
  if (given.length && given.length < OIDC_REQUIRED.length) {
    const missing = OIDC_REQUIRED.filter((key) => !raw.has(key)).map((key) => envOf(key));
    throw new ConfigError(`${missing.join(' and ')} must be set with ${raw.get(given[0])!.name}`);
  }
  if (given.length) return;
  for (const key of ['oidcLabel', 'oidcAdminGroups', 'oidcExternalGroups', 'oidcAllowedGroups'] as const) {
    const setting = raw.get(key);
    if (setting) throw new ConfigError(`${setting.name} needs SNIPPETD_OIDC_ISSUER (sign-in with OpenID Connect)`);
  }
}

const envOf = (key: keyof Config) => SETTINGS.find((s) => s.key === key)!.env;

function parseFlags(argv: string[]): Map<string, string> {
  const known = new Set(SETTINGS.map((s) => s.flag));
  const booleans = new Set(SETTINGS.filter((s) => s.boolean).map((s) => s.flag));
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) continue;
    const [name, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    if (!known.has(name)) continue;
    if (booleans.has(name)) {
      flags.set(name, inline ?? 'true');
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`${name} needs a value`);
    flags.set(name, value);
  }
  return flags;
}

export const CONFIG_SETTINGS = SETTINGS.map(({ env, flag, key, boolean }) => ({ env, flag, key, boolean }));
