// Every form that changes something carries a token that only this session's own pages can know, and is
// refused when it comes from another site (Rails' protect_from_forgery with its origin check, as GitLab
// has it): a cross-site POST changes nothing and gets GitLab's 422. The token is a digest of the session
// token, so any node can check it without storing anything, and the page that shows it cannot give the
// session away (the cookie is HttpOnly; the digest cannot be turned back into it).
import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { Failure } from '../../domain/failure.ts';
import { html, type Html } from '../views/html.ts';
import { baseUrl } from '../urls.ts';
import { isHash } from '../rack-params.ts';

export const FORM_TOKEN_FIELD = 'authenticity_token';

/** This session's form token; only for a signed-in page visitor. */
export function formTokenOf(request: FastifyRequest): string {
  const session = request.pageSession;
  if (!session) throw new Error('a form token needs a session');
  return crypto.createHash('sha256').update(`snippetd form token\0${session}`).digest('base64url');
}

/** The hidden field every state-changing form of a signed-in page holds. */
export const formTokenField = (request: FastifyRequest): Html =>
  html`<input type="hidden" name="${FORM_TOKEN_FIELD}" value="${formTokenOf(request)}">`;

/** The form fields as parsed (form-encoded, Rack's nesting), or an empty record for any other body. */
export const formFields = (request: FastifyRequest): Record<string, unknown> =>
  isHash(request.body) ? request.body : {};

/**
 * Refuses a form POST (422) that does not carry this session's token, or whose Origin is another site's. A
 * browser sends Origin with every POST; a client that sends none is judged by the token alone, as Rails does.
 */
export function checkFormPost(request: FastifyRequest): void {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== new URL(baseUrl(request)).origin) throw invalidFormToken();
  if (!request.pageSession) throw invalidFormToken();
  const given = formFields(request)[FORM_TOKEN_FIELD];
  const expected = Buffer.from(formTokenOf(request));
  // Compared as bytes: characters of several bytes give another length (timingSafeEqual throws on those).
  const actual = Buffer.from(typeof given === 'string' ? given : '');
  if (actual.length !== expected.length || !crypto.timingSafeEqual(actual, expected)) throw invalidFormToken();
}

const invalidFormToken = () => new Failure('unprocessable_form');
