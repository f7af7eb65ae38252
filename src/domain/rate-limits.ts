// GitLab's rate limits, with its settings and defaults: the raw-file limits (on by default), the API
// throttles for signed-in users and for addresses and the protected paths throttle (off by default). The
// counting is storage's (storage/rate-counters.ts); the answers are the failure table's.
import type { RateCounters } from '../storage/rate-counters.ts';
import type { ApplicationSettings } from './settings.ts';
import { Failure } from './failure.ts';

/**
 * A raw file read: which project and which file (a snippet's files count under the snippet; personal
 * snippets, in no project, count together as one).
 */
export interface RawRead {
  projectId: number | null;
  path: string;
  signedIn: boolean;
}

/**
 * The one spelling of a file's path that counts: git's tree lookup skips empty segments (`a.txt//`,
 * `d//b.txt`), and `.` names no tree entry, so every spelling that reads the same file gets the same count.
 */
export function canonicalRawPath(path: string): string {
  return path
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
}

/**
 * GitLab's raw_blob limits: per project and path a minute, and per project a minute for anonymous readers.
 * As GitLab's (scope: project and path, no ref), the count is the file's, whatever ref or spelling reads it.
 */
export async function checkRawLimits(counters: RateCounters, settings: ApplicationSettings, read: RawRead) {
  const perPath = settings.raw_blob_request_limit;
  if (perPath > 0) {
    const key = `raw:${read.projectId ?? 'personal'}:${canonicalRawPath(read.path)}`;
    const { count, secondsLeft } = await counters.hit(key, 60);
    if (count > perPath) throw new Failure('too_many_requests', '', {}, secondsLeft);
  }
  const perProject = settings.raw_blob_request_limit_unauthenticated;
  if (!read.signedIn && perProject > 0) {
    // A personal snippet counts on its own (its path starts snippets/<id>/), not with every other one.
    const scope = read.projectId ?? read.path.split('/', 2).join('/');
    const { count, secondsLeft } = await counters.hit(`raw-anonymous:${scope}`, 60);
    if (count > perProject) throw new Failure('too_many_requests', '', {}, secondsLeft);
  }
}

/**
 * GitLab's search limits: searches a minute per signed-in user (search_rate_limit), else per address
 * (search_rate_limit_unauthenticated); 0 turns one off.
 */
export async function checkSearchLimit(
  counters: RateCounters,
  settings: ApplicationSettings,
  caller: { userId: number | null; address: string },
) {
  const [limit, key] =
    caller.userId !== null
      ? [settings.search_rate_limit, `search-user:${caller.userId}`]
      : [settings.search_rate_limit_unauthenticated, `search-address:${caller.address}`];
  if (limit <= 0) return;
  const { count, secondsLeft } = await counters.hit(key, 60);
  if (count > limit) throw new Failure('too_many_requests', '', {}, secondsLeft);
}

/** GitLab's API throttles: per user when signed in, else per client address; each on only when enabled. */
export async function checkApiThrottle(
  counters: RateCounters,
  settings: ApplicationSettings,
  caller: { userId: number | null; address: string },
) {
  if (caller.userId !== null) {
    if (!settings.throttle_authenticated_api_enabled) return;
    await throttle(counters, settings, 'throttle_authenticated_api', `api-user:${caller.userId}`, {
      limit: settings.throttle_authenticated_api_requests_per_period,
      periodSeconds: settings.throttle_authenticated_api_period_in_seconds,
    });
  } else {
    if (!settings.throttle_unauthenticated_api_enabled) return;
    await throttle(counters, settings, 'throttle_unauthenticated_api', `api-address:${caller.address}`, {
      limit: settings.throttle_unauthenticated_api_requests_per_period,
      periodSeconds: settings.throttle_unauthenticated_api_period_in_seconds,
    });
  }
}

/**
 * Whether a path is one of the protected paths: it starts with one of them (GitLab matches each as `\A<path>`,
 * so `/users` covers `/users/sign_in` and `/users_anything`). Health and metrics never are (should_be_skipped?).
 */
export function isProtectedPath(settings: ApplicationSettings, path: string): boolean {
  if (HEALTH_PATH.test(path)) return false;
  return settings.protected_paths.some((prefix) => path.startsWith(prefix));
}

const HEALTH_PATH = /^\/-\/(health|liveness|readiness|metrics)/;

/** Who sends a POST to a protected path: through the API (a token) or the pages (a session), and as whom. */
export interface ProtectedPathCaller {
  api: boolean;
  /** The user its token (API) or session (pages) signs in; null when none does. */
  userId: number | null;
  address: string;
}

/**
 * GitLab's protected paths throttles (Gitlab::RackAttack): a POST to a protected path counts per address
 * when nobody is signed in (throttle_unauthenticated_protected_paths), else per user, the API's and the pages'
 * apart (throttle_authenticated_protected_paths_api, _web); one limit and period for all three. Call it only
 * for a POST to a protected path (isProtectedPath).
 */
export async function checkProtectedPathsThrottle(
  counters: RateCounters,
  settings: ApplicationSettings,
  caller: ProtectedPathCaller,
) {
  if (!settings.throttle_protected_paths_enabled) return;
  const [name, key] =
    caller.userId === null
      ? ['throttle_unauthenticated_protected_paths', `protected-paths-address:${caller.address}`]
      : caller.api
        ? ['throttle_authenticated_protected_paths_api', `protected-paths-api-user:${caller.userId}`]
        : ['throttle_authenticated_protected_paths_web', `protected-paths-web-user:${caller.userId}`];
  await throttle(counters, settings, name, key, {
    limit: settings.throttle_protected_paths_requests_per_period,
    periodSeconds: settings.throttle_protected_paths_period_in_seconds,
  });
}

/** One of Rack::Attack's throttles: counts the request, and refuses it past the limit with GitLab's answer. */
async function throttle(
  counters: RateCounters,
  settings: ApplicationSettings,
  name: string,
  key: string,
  { limit, periodSeconds }: { limit: number; periodSeconds: number },
) {
  // The second the window was read in, so that the window's end is now plus what is left of it.
  const now = Math.floor(Date.now() / 1000);
  const { count, secondsLeft } = await counters.hit(key, periodSeconds);
  if (count <= limit) return;
  const resetAt = now + secondsLeft;
  throw new Failure('throttled', settings.rate_limiting_response_text || 'Retry later', {}, secondsLeft, {
    name,
    limit,
    periodSeconds,
    observed: count,
    resetAt,
  });
}
