// Typed failures. Each reason is named after GitLab's answer: its status first, then what sets its body
// apart from the other answers with that status. http/plugins/errors.ts is the one table that turns a
// reason into status, headers and body; nothing else decides how a failure looks on the wire.
import { codePoints } from '../text-scan.ts';

export type FailureReason =
  // 400
  | 'bad_request' // {"message":"400 Bad request - <detail>"} (GitLab's bad_request!)
  | 'bad_request_param' // {"error":"<detail>"}: Grape's parameter validation messages
  | 'bad_request_fields' // {"message":{"<field>":["..."]}}: model validation errors (render_validation_error!)
  | 'bad_request_message' // {"message":"<detail>"}: GitLab's sentence as it stands (render_api_error!)
  | 'bad_request_service' // {"message":{"error":"<detail>"}}: a snippet service error (http_response_map.rb)
  | 'bad_request_malformed' // text/plain "Bad Request": a NUL character (GitLab's HandleMalformedStrings)
  // 401
  | 'unauthorized' // {"message":"401 Unauthorized"}
  | 'unauthorized_token' // OAuth's invalid_token body and WWW-Authenticate; detail: error_description
  | 'unauthorized_git' // text "HTTP Basic: Access denied" with a Basic challenge (git clients)
  // 403
  | 'forbidden' // {"message":"403 Forbidden[ - <detail>]"}
  | 'forbidden_message' // {"message":"<detail>"}: GitLab's sentence as it stands (render_api_error! with 403)
  | 'forbidden_scope' // OAuth's insufficient_scope body; detail: the scopes the endpoint accepts
  | 'forbidden_service' // {"message":{"error":"<detail>"}}: a snippet service refusal
  | 'forbidden_git' // text <detail>: why git may not read or push
  | 'forbidden_limit' // {"error":["<detail>"]}: a model's limit_reached error passed to Grape's error!
  // 404
  | 'not_found' // {"message":"404 <detail> Not Found"}, bare "404 Not Found" without detail
  | 'not_found_record' // {"message":"404 Not found"}: a record lookup miss (ActiveRecord::RecordNotFound)
  | 'not_found_route' // {"error":"404 Not Found"}: no such route (Grape's catch-all)
  | 'not_found_git' // text <detail>: a repository the caller may not see
  // others
  | 'method_not_allowed' // 405 {"error":"405 Not Allowed"}; detail: the Allow header
  | 'method_options' // 204, no body: Grape's answer to OPTIONS on an API path no route serves; detail: Allow
  | 'conflict' // 409 {"message":"<detail>"}
  | 'request_timeout' // 408 {"message":"408 Request Timeout"}: a request not whole within the request timeout
  | 'search_timeout' // 408 {"error":"Request timed out"}: a search stopped at its time limit (GitLab's API::Search)
  | 'precondition_failed' // 412 {"message":"412 Precondition Failed"}
  | 'payload_too_large' // 413 {"message":"413 Request Entity Too Large"}; the connection is closed after it
  | 'payload_too_large_git' // 413 text, for git clients; the connection is closed after it
  | 'unsupported_media_type' // 415 {"message":"415 Unsupported Media Type"}
  | 'too_many_requests' // 429 {"message":{"error":"This endpoint has been requested too many times. …"}}: a raw limit
  | 'throttled' // 429 text <detail> with RateLimit-* headers: a throttle of Rack::Attack's (API, protected paths)
  | 'headers_too_large' // 431 {"message":"431 Request Header Fields Too Large"}
  | 'unprocessable_service' // 422 {"message":{"error":"<detail>"}}: snippet actions with invalid data
  | 'unprocessable_form'; // 422: a page's form without this session's token, or from another site

/**
 * What a throttle counted when it refused a request (Rack::Attack's match data), for GitLab's RateLimit-*
 * headers (Gitlab::RackAttack.throttled_response_headers).
 */
export interface ThrottleMatch {
  /** The throttle's name in GitLab (`throttle_unauthenticated_protected_paths`). */
  name: string;
  limit: number;
  periodSeconds: number;
  /** Requests counted in this window, the refused one included. */
  observed: number;
  /** When the window ends, in seconds since the epoch. */
  resetAt: number;
}

export class Failure extends Error {
  constructor(
    readonly reason: FailureReason,
    readonly detail: string = '',
    readonly fields: Record<string, string[]> = {},
    /** Seconds until a rate limit lets the caller in again (429s). */
    readonly retryAfter = 0,
    /** The throttle that refused the request ('throttled'). */
    readonly throttle: ThrottleMatch | null = null,
  ) {
    super(detail ? `${reason}: ${detail}` : reason);
  }
}

export const notFound = (what = '') => new Failure('not_found', what);

/** Rails' length validation message for a text over `maximum` characters (code points), else null. */
export const tooLongError = (text: string | null | undefined, maximum: number) =>
  text && codePoints(text, maximum) > maximum ? `is too long (maximum is ${maximum} characters)` : null;
export const recordNotFound = () => new Failure('not_found_record');
export const routeNotFound = () => new Failure('not_found_route');
export const forbidden = (reason = '') => new Failure('forbidden', reason);
export const limitReached = (message: string) => new Failure('forbidden_limit', message);
export const unauthorized = () => new Failure('unauthorized');
export const conflict = (message: string) => new Failure('conflict', message);
export const badRequest = (reason = '') => new Failure('bad_request', reason);
export const invalidFields = (fields: Record<string, string[]>) => new Failure('bad_request_fields', '', fields);
export const invalidParams = (message: string, fields: Record<string, string[]> = {}) =>
  new Failure('bad_request_param', message, fields);
export const apiError = (message: string) => new Failure('bad_request_message', message);
export const invalidToken = (description: string) => new Failure('unauthorized_token', description);
export const insufficientScope = (scopes: string) => new Failure('forbidden_scope', scopes);
export const serviceError = (message: string) => new Failure('bad_request_service', message);
export const payloadTooLarge = () => new Failure('payload_too_large');

/** Adds a message under its field (a Failure's `fields`). */
export function addFieldMessage(fields: Record<string, string[]>, field: string, message: string): void {
  if (!fields[field]) fields[field] = [];
  fields[field].push(message);
}

/**
 * GitLab's check_unmodified_since!: 412 when what a request would change was changed after its If-Unmodified-Since
 * date, compared in whole seconds (an HTTP date has no finer ones). A header that is not a date checks nothing.
 */
export function checkUnmodifiedSince(lastModifiedMs: number, header: string | undefined): void {
  if (header === undefined) return;
  const since = Date.parse(header);
  if (!Number.isNaN(since) && Math.floor(lastModifiedMs / 1000) > Math.floor(since / 1000))
    throw new Failure('precondition_failed');
}
