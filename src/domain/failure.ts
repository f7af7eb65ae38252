// Typed failures of the domain. http/plugins/errors.ts is the one table that turns each reason into
// GitLab's status and body; nothing else decides how a failure looks on the wire.
export type FailureReason =
  | 'not_found' // detail: what was not found ("Project", "User", ...); empty for a bare 404
  | 'record_not_found' // ActiveRecord-style lookup miss: 404 "Not found"
  | 'unauthorized'
  | 'forbidden' // detail: optional reason sentence
  | 'conflict' // detail: message (409)
  | 'invalid_record' // fields: model validation errors (400 {"message":{field:[...]}})
  | 'bad_request' // detail: optional reason (400 "400 Bad request - ...")
  | 'refused' // detail: GitLab's message as it stands (400 {"message": detail})
  | 'invalid_params' // detail: Grape validation message (400 {"error": ...})
  | 'invalid_token' // detail: OAuth error_description (401 {"error":"invalid_token", ...})
  | 'insufficient_scope' // detail: the scopes the endpoint accepts, space-separated (403)
  // Snippet service results, named after GitLab's http_response_map.rb; body {"message":{"error":detail}}.
  | 'service_error' // 400
  | 'invalid_params_error' // 422
  | 'snippet_access_error' // 403
  | 'precondition_failed'; // 412 {"message":"412 Precondition Failed"}

export class Failure extends Error {
  constructor(
    readonly reason: FailureReason,
    readonly detail: string = '',
    readonly fields: Record<string, string[]> = {},
  ) {
    super(detail ? `${reason}: ${detail}` : reason);
  }
}

export const notFound = (what = '') => new Failure('not_found', what);
export const forbidden = (reason = '') => new Failure('forbidden', reason);
export const unauthorized = () => new Failure('unauthorized');
export const conflict = (message: string) => new Failure('conflict', message);
export const invalidRecord = (fields: Record<string, string[]>) => new Failure('invalid_record', '', fields);
export const invalidParams = (message: string) => new Failure('invalid_params', message);
export const invalidToken = (description: string) => new Failure('invalid_token', description);
export const insufficientScope = (scopes: string) => new Failure('insufficient_scope', scopes);
export const serviceError = (message: string) => new Failure('service_error', message);
