// The frame every page shares, the headers pages are sent with, and the page shown for a failure.
import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { html, type Html } from '../views/html.ts';
import { answerFor } from '../plugins/errors.ts';
import { sendCompressed } from '../plugins/compression.ts';

export const STYLESHEET_PATH = '/-/snippetd/app.css';

/** A nonce for the page's own scripts: the policy runs no other script. */
export const newNonce = () => crypto.randomBytes(16).toString('base64');

const policy = (nonce: string) =>
  [
    "default-src 'none'",
    "style-src 'self'",
    // Images in Markdown load from other sites over https, as GitLab shows them (docs/pages.md, Images).
    "img-src 'self' data: https:",
    `script-src 'nonce-${nonce}'`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'self'",
  ].join('; ');

export function sendPage(reply: FastifyReply, status: number, title: string, body: Html, nonce = newNonce()) {
  const user = reply.request.pageUser;
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · snippetd</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
<link rel="icon" href="data:,">
</head>
<body>
<header class="top"><a href="/" class="brand">snippetd</a>
${
  user
    ? html`<form method="post" action="/users/sign_out" class="account"><span>${user.username}</span> <button type="submit">Sign out</button></form>`
    : html`<a class="account" href="/users/sign_in">Sign in</a>`
}</header>
<main id="content">
${body}
</main>
</body>
</html>
`;
  reply
    .code(status)
    .header('Content-Type', 'text/html; charset=utf-8')
    .header('Content-Security-Policy', policy(nonce))
    .header('Referrer-Policy', 'strict-origin-when-cross-origin')
    .header('Cache-Control', 'private, no-store');
  return sendCompressed(reply, document.text);
}

/** A failure on a page: the status the API would give (hidden things are 404), as a short page. */
export function sendFailurePage(_request: FastifyRequest, reply: FastifyReply, error: unknown) {
  const [status, , headers] = answerFor(error);
  if (status >= 500) throw error;
  // The failure's headers too: a 429's Retry-After says when the page will open again.
  if (headers) reply.headers(headers);
  const heading = status === 404 ? 'Page not found' : status === 429 ? 'Too many requests' : `Error ${status}`;
  const text =
    status === 404
      ? "The page could not be found or you don't have permission to view it."
      : status === 429
        ? 'You cannot access the raw file. Please wait a minute.'
        : 'The request could not be completed.';
  return sendPage(reply, status, heading, html`<h1>${heading}</h1><p>${text}</p>`);
}
