// Instance-wide application settings (GET/PUT /application/settings) with GitLab's defaults, and the one
// place that decides what a valid setting is: the API refuses an invalid value before it is stored, a
// read never uses one, and start-up repairs one stored by an earlier version (repairStoredSettings).
import type { Store } from '../storage/db/store.ts';
import type { Visibility } from '../storage/db/schema.ts';
import { VISIBILITIES, VISIBILITY_LEVEL } from './access.ts';
import { invalidParams, invalidFields } from './failure.ts';
import { isValidBranchName } from './paths.ts';
import { TEXT_INDEX_MAX_BYTES } from '../storage/db/tables/snippet-text.ts';

export interface ApplicationSettings {
  default_branch_name: string;
  default_snippet_visibility: Visibility;
  default_project_visibility: Visibility;
  default_group_visibility: Visibility;
  restricted_visibility_levels: Visibility[];
  file_template_project_id: number | null;
  snippet_size_limit: number;
  max_snippet_files: number;
  can_create_group: boolean;
  /** Requests a minute to one raw file of a project (0: no limit). */
  raw_blob_request_limit: number;
  /** Anonymous requests a minute to a project's raw files together (0: no limit). */
  raw_blob_request_limit_unauthenticated: number;
  /** Whether searching snippets across the instance is on (GitLab: the snippet_titles scope of global search). */
  global_search_snippet_titles_enabled: boolean;
  /** Searches a minute by one signed-in user (0: no limit). */
  search_rate_limit: number;
  /** Searches a minute from one address without signing in (0: no limit): the search page's. */
  search_rate_limit_unauthenticated: number;
  throttle_authenticated_api_enabled: boolean;
  throttle_authenticated_api_requests_per_period: number;
  throttle_authenticated_api_period_in_seconds: number;
  throttle_unauthenticated_api_enabled: boolean;
  throttle_unauthenticated_api_requests_per_period: number;
  throttle_unauthenticated_api_period_in_seconds: number;
  /** Whether POSTs to the protected paths (sign-in and the like) are throttled per address, or per user. */
  throttle_protected_paths_enabled: boolean;
  throttle_protected_paths_requests_per_period: number;
  throttle_protected_paths_period_in_seconds: number;
  /**
   * The paths whose POSTs that throttle counts: a request's path counts when it starts with one of them
   * (GitLab's `\A<path>`). The API reads and writes them as `protected_paths_raw`, one a line.
   */
  protected_paths: string[];
  /** What a throttled request is told; "Retry later" when null. */
  rate_limiting_response_text: string | null;
  /** The largest pack a push may send, in MiB (git's receive.maxInputSize); null or 0: no limit. */
  receive_max_input_size: number | null;
  /** snippetd's own: the largest object (a file) a push may bring, inflated, in MiB; 0: no limit. */
  max_file_size: number;
  /**
   * snippetd's own: the largest file whose text is searched, in KiB (as GitLab's
   * elasticsearch_indexed_file_size_limit_kb); a larger one is found by its path only. Applies to files
   * written after a change; `snippetd fsck --repair` brings the files already stored in line.
   */
  search_indexed_file_size_limit_kb: number;
  /**
   * Whether the sign-in page takes a password (GitLab's); turned off, it applies once sign-in with OpenID
   * Connect is on, so an instance without it never locks everyone out of its pages. API tokens are unaffected.
   */
  password_authentication_enabled_for_web: boolean;
}

export const MiB = 1024 * 1024;

/** GitLab's DEFAULT_PROTECTED_PATHS (ApplicationSettingImplementation), in its order. */
export const DEFAULT_PROTECTED_PATHS = [
  '/users/password',
  '/users/sign_in',
  '/api/v3/session.json',
  '/api/v3/session',
  '/api/v4/session.json',
  '/api/v4/session',
  '/users',
  '/users/confirmation',
  '/unsubscribes/',
  '/import/github/personal_access_token',
  '/admin/session',
];

/** GitLab's limits on the list: 100 entries (the model's validation), each a varchar(255). */
const MAX_PROTECTED_PATHS = 100;
const MAX_PROTECTED_PATH_LENGTH = 255;

type Key = keyof ApplicationSettings;

export const DEFAULT_SETTINGS: ApplicationSettings = {
  default_branch_name: 'main',
  default_snippet_visibility: 'private',
  default_project_visibility: 'private',
  default_group_visibility: 'private',
  restricted_visibility_levels: [],
  file_template_project_id: null,
  snippet_size_limit: 52_428_800,
  max_snippet_files: 10,
  can_create_group: true,
  raw_blob_request_limit: 300,
  raw_blob_request_limit_unauthenticated: 800,
  global_search_snippet_titles_enabled: true,
  search_rate_limit: 30,
  search_rate_limit_unauthenticated: 10,
  throttle_authenticated_api_enabled: false,
  throttle_authenticated_api_requests_per_period: 7200,
  throttle_authenticated_api_period_in_seconds: 3600,
  throttle_unauthenticated_api_enabled: false,
  throttle_unauthenticated_api_requests_per_period: 3600,
  throttle_unauthenticated_api_period_in_seconds: 3600,
  // Off, as GitLab's source has it (the defaults of ApplicationSettingImplementation, and the column's default
  // since the migration that turned it back off in 12.4), though its protected paths page says "enabled by default".
  throttle_protected_paths_enabled: false,
  throttle_protected_paths_requests_per_period: 10,
  throttle_protected_paths_period_in_seconds: 60,
  protected_paths: DEFAULT_PROTECTED_PATHS,
  rate_limiting_response_text: null,
  receive_max_input_size: null,
  // What the server holds of a push at once is about three times its largest object while that object's row
  // is written (the body, the driver's copy, the database's record), so the default stays well below
  // GitLab.com's 100 MiB: as snippet_size_limit's 50 MB, and GitHub's warning size.
  max_file_size: 50,
  search_indexed_file_size_limit_kb: TEXT_INDEX_MAX_BYTES / 1024,
  password_authentication_enabled_for_web: true,
};

/**
 * The indexed file size limit's ceiling: a search reads the text of the files it finds, and SQLite's indexer
 * takes a file's text in at most MAX_PIECES pieces (search-indexing.ts), about 8 MiB, beyond which the last
 * piece grows with the file.
 */
const MAX_INDEXED_FILE_SIZE_KB = 8192;

/** The largest file (in bytes) whose text the search index takes. */
export const indexedFileMaxBytes = (settings: ApplicationSettings) => settings.search_indexed_file_size_limit_kb * 1024;

const isVisibility = (v: unknown): v is Visibility => (VISIBILITIES as unknown[]).includes(v);
const isWholeNumber = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const atLeastZero = (v: unknown) =>
  !isWholeNumber(v) ? 'is not a number' : v >= 0 ? null : 'must be greater than or equal to 0';
/** A whole number from 0 to 2^31 - 1, GitLab's integer column. */
const atMostInt = (v: unknown) =>
  atLeastZero(v) ?? ((v as number) > 2 ** 31 - 1 ? 'must be less than or equal to 2147483647' : null);
const aboveZero = (v: unknown) => (!isWholeNumber(v) ? 'is not a number' : v > 0 ? null : 'must be greater than 0');
const aBoolean = (v: unknown) => (typeof v === 'boolean' ? null : 'must be a boolean value');
const aVisibility = (v: unknown) => (isVisibility(v) ? null : 'is not included in the list');

/**
 * ApplicationSetting's model validations: the message a value gets, or null when it is valid. A value
 * of the wrong type can only arrive from an older version's row here, since the API's parameter types
 * come first; it is answered with the model's message all the same.
 */
const RULES: Record<Key, (value: unknown) => string | null> = {
  default_branch_name: (v) =>
    typeof v !== 'string' || v.trim() === '' ? "can't be blank" : isValidBranchName(v) ? null : 'is invalid',
  default_snippet_visibility: aVisibility,
  default_project_visibility: aVisibility,
  default_group_visibility: aVisibility,
  restricted_visibility_levels: (v) =>
    Array.isArray(v) && v.every(isVisibility) ? null : 'is not a valid visibility level',
  file_template_project_id: (v) => (v === null || (isWholeNumber(v) && v > 0) ? null : 'is invalid'),
  snippet_size_limit: aboveZero,
  max_snippet_files: atLeastZero,
  can_create_group: aBoolean,
  raw_blob_request_limit: atLeastZero,
  raw_blob_request_limit_unauthenticated: atLeastZero,
  global_search_snippet_titles_enabled: aBoolean,
  search_rate_limit: atLeastZero,
  search_rate_limit_unauthenticated: atLeastZero,
  throttle_authenticated_api_enabled: aBoolean,
  throttle_authenticated_api_requests_per_period: aboveZero,
  throttle_authenticated_api_period_in_seconds: aboveZero,
  throttle_unauthenticated_api_enabled: aBoolean,
  throttle_unauthenticated_api_requests_per_period: aboveZero,
  throttle_unauthenticated_api_period_in_seconds: aboveZero,
  throttle_protected_paths_enabled: aBoolean,
  throttle_protected_paths_requests_per_period: aboveZero,
  throttle_protected_paths_period_in_seconds: aboveZero,
  protected_paths: (v) =>
    !Array.isArray(v) || !v.every((path) => typeof path === 'string')
      ? 'is invalid'
      : v.length > MAX_PROTECTED_PATHS
        ? `is too long (maximum is ${MAX_PROTECTED_PATHS} entries)`
        : v.some((path) => path.length > MAX_PROTECTED_PATH_LENGTH)
          ? `is too long (maximum is ${MAX_PROTECTED_PATH_LENGTH} characters)`
          : null,
  rate_limiting_response_text: (v) =>
    v === null || (typeof v === 'string' && v.length <= 255) ? null : 'is too long (maximum is 255 characters)',
  // MiB, within GitLab's integer column: git takes the limit in bytes as a 64-bit number.
  receive_max_input_size: (v) => (v === null ? null : atMostInt(v)),
  max_file_size: atMostInt,
  search_indexed_file_size_limit_kb: (v) =>
    aboveZero(v) ??
    ((v as number) > MAX_INDEXED_FILE_SIZE_KB ? `must be less than or equal to ${MAX_INDEXED_FILE_SIZE_KB}` : null),
  password_authentication_enabled_for_web: aBoolean,
};

/**
 * What GitLab stores for `null` where it does not refuse it: its visibility setters turn an unknown
 * level (null included) into private, and CommaSeparatedToArray turns null into no restrictions.
 */
const NULL_MEANS: Partial<Record<Key, unknown>> = {
  default_snippet_visibility: 'private',
  default_project_visibility: 'private',
  default_group_visibility: 'private',
  restricted_visibility_levels: [],
};

/** A level given as its name or as GitLab's integer (0, 10, 20, also as a string); null when unknown. */
export function visibilityFromLevel(value: string): Visibility | null {
  if (isVisibility(value)) return value;
  return VISIBILITIES.find((v) => String(VISIBILITY_LEVEL[v]) === value) ?? null;
}

export const isKey = (key: string): key is Key => Object.hasOwn(DEFAULT_SETTINGS, key);

/** Settings resolved from a stored record; read requests get the same cached record back, so resolve it once. */
const resolved = new WeakMap<Record<string, unknown>, ApplicationSettings>();

/**
 * GitLab's public_visibility_restricted?: an administrator restricted the Public level, so visitors who are not
 * signed in see no user profiles and no Explore pages (a public snippet or project by its own address stays open).
 */
export async function publicVisibilityRestricted(store: Store): Promise<boolean> {
  return (await getSettings(store)).restricted_visibility_levels.includes('public');
}

/** The settings in force: each stored valid value, else GitLab's default. */
export async function getSettings(store: Store): Promise<ApplicationSettings> {
  const stored = await store.settings.all();
  let settings = resolved.get(stored);
  if (settings) return settings;
  settings = { ...DEFAULT_SETTINGS };
  for (const [key, value] of Object.entries(stored)) {
    if (isKey(key) && RULES[key](value) === null) (settings as unknown as Record<string, unknown>)[key] = value;
  }
  Object.freeze(settings);
  resolved.set(stored, settings);
  return settings;
}

/**
 * The changes as parsed by the API: restricted levels still as names or integers, the protected paths as the
 * text GitLab's API takes (`protected_paths_raw`).
 */
export type SettingsChanges = {
  [K in Exclude<Key, 'restricted_visibility_levels' | 'protected_paths'>]?: ApplicationSettings[K] | null;
} & {
  restricted_visibility_levels?: string[] | null;
  protected_paths_raw?: string | null;
};

/** The characters that part a list's entries in GitLab's strings_to_array: Ruby's \s, commas and semicolons. */
const LIST_SEPARATORS = new Set([' ', '\t', '\r', '\n', '\f', '\v', ',', ';']);

/**
 * GitLab's strings_to_array: a list written as text, its entries apart by commas, semicolons, white space or
 * line breaks (its pattern, /\s*[,;]\s*|\s|[\r\n]/, splits only blanks out of a run of them); blanks dropped,
 * each entry once. Null is the empty list. Read in one pass, and only up to one entry past `most`: a longer
 * list is refused whatever follows, and a text of megabytes would otherwise be millions of strings.
 */
export function stringsToArray(text: string | null, most = Number.POSITIVE_INFINITY): string[] {
  const entries = new Set<string>();
  let start = 0;
  for (let i = 0; text !== null && i <= text.length && entries.size <= most; i++) {
    if (i < text.length && !LIST_SEPARATORS.has(text[i])) continue;
    if (i > start) entries.add(text.slice(start, i));
    start = i + 1;
  }
  return [...entries];
}

/** Validates every change as GitLab's model does, then stores them all or none. */
export async function updateSettings(store: Store, changes: SettingsChanges): Promise<ApplicationSettings> {
  const values: Partial<Record<Key, unknown>> = {};
  for (const [key, given] of Object.entries(changes)) {
    if (!isKey(key) || given === undefined) continue;
    values[key] = given === null && key in NULL_MEANS ? NULL_MEANS[key] : given;
  }
  if (changes.protected_paths_raw !== undefined)
    values.protected_paths = stringsToArray(changes.protected_paths_raw, MAX_PROTECTED_PATHS);
  if (Array.isArray(values.restricted_visibility_levels)) {
    const levels = (values.restricted_visibility_levels as string[]).filter((v) => v !== '').map(visibilityFromLevel);
    if (levels.includes(null)) throw invalidParams('restricted_visibility_levels does not have a valid value');
    values.restricted_visibility_levels = [...new Set(levels)];
  }
  const errors: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(values) as [Key, unknown][]) {
    const problem = RULES[key](value);
    if (problem) errors[key] = [problem];
  }
  if (
    typeof values.file_template_project_id === 'number' &&
    !errors.file_template_project_id &&
    !(await store.projects.findById(values.file_template_project_id))
  ) {
    errors.file_template_project_id = ['is invalid'];
  }
  if (Object.keys(errors).length) throw invalidFields(errors);
  if (Object.keys(values).length) await store.settings.put(values);
  return getSettings(store);
}

/**
 * Start-up check: a stored value that is not valid (written by an earlier version, which let `null`
 * through) is removed, so its default applies again. Answers one line per repaired setting.
 */
export async function repairStoredSettings(store: Store): Promise<string[]> {
  const stored = await store.settings.all();
  const invalid = Object.entries(stored).filter(([key, value]) => isKey(key) && RULES[key](value) !== null);
  if (!invalid.length) return [];
  await store.settings.remove(invalid.map(([key]) => key));
  return invalid.map(
    ([key, value]) =>
      `setting ${key} was stored as ${JSON.stringify(value)}, which is not valid (${RULES[key as Key](value)}): reset to its default ${JSON.stringify(DEFAULT_SETTINGS[key as Key])}`,
  );
}
