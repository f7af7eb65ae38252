// The frame every page shares, the headers pages are sent with, and the page shown for a failure.
import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { html, type Html } from '../views/html.ts';
import { answerFor } from '../plugins/errors.ts';
import { sendCompressed } from '../plugins/compression.ts';
import { CHARS_A_TURN, utf8Bytes } from '../../domain/utf8.ts';
import { formTokenField } from './form-token.ts';
import { editorScriptTag } from './editor.ts';
import { pageSearchText } from './common.ts';
import { withoutSecretParams } from '../../logging.ts';
import { sitePath } from '../urls.ts';

export const STYLESHEET_PATH = '/-/snippetd/app.css';

/** A nonce for the page's own scripts: the policy runs no other script. */
export const newNonce = () => crypto.randomBytes(16).toString('base64');

const policy = (nonce: string, editor: boolean, formActions: string[]) =>
  [
    "default-src 'none'",
    // The code editor writes its styles into a <style> element it gives the page's nonce (CodeMirror's
    // cspNonce); other pages allow the stylesheet alone.
    editor ? `style-src 'self' 'nonce-${nonce}'` : "style-src 'self'",
    // Images in Markdown load from other sites over https, as GitLab shows them (docs/pages.md, Images).
    "img-src 'self' data: https:",
    `script-src 'nonce-${nonce}'`,
    "base-uri 'none'",
    ["form-action 'self'", ...formActions].join(' '),
    "frame-ancestors 'self'",
  ].join('; ');

/**
 * Where "Sign in" sends a visitor, and back to the page they were on (GitLab's stored location); without a
 * token its URL had (pages never read one), which would otherwise be logged in clear inside `redirect_to`.
 */
export const signInPath = (request: FastifyRequest) => {
  const returnTo = withoutSecretParams(request.url);
  return sitePath(
    request,
    returnTo === '/' || returnTo.startsWith('/users/sign_in')
      ? '/users/sign_in'
      : `/users/sign_in?redirect_to=${encodeURIComponent(returnTo)}`,
  );
};

/** The header: where to go, and who is signed in (with their menu) or a way to sign in. */
function topHeader(request: FastifyRequest): Html {
  const user = request.pageUser;
  const at = (path: string) => sitePath(request, path);
  const onSearch = request.url.split('?')[0] === '/search';
  const search = html`<form class="header-search" role="search" aria-label="Site search" action="${at('/search')}" method="get">
<label for="header-search-text" class="visually-hidden">Search snippets</label>
<input id="header-search-text" type="search" name="search" placeholder="Search snippets" value="${onSearch ? pageSearchText(request) : ''}">
</form>`;
  const nav = html`<nav class="main-nav" aria-label="Main">
<a href="${at('/explore/snippets')}">Explore</a>${
    user
      ? html`
<a href="${at('/dashboard/snippets')}">Your snippets</a>
<a href="${at('/-/snippets/new')}">New snippet</a>`
      : ''
  }
</nav>`;
  if (!user) {
    return html`<header class="top"><a href="${at('/')}" class="brand">snippetd</a>
${search}
${nav}
<a class="account" href="${signInPath(request)}">Sign in</a></header>`;
  }
  return html`<header class="top"><a href="${at('/')}" class="brand">snippetd</a>
${search}
${nav}
<details class="account user-menu"><summary>${user.username}</summary>
<ul>
<li><a href="${at(`/${user.username}`)}">Profile</a></li>
<li><a href="${at('/-/user_settings/personal_access_tokens')}">Access tokens</a></li>
<li><form method="post" action="${at('/users/sign_out')}">${formTokenField(request)}<button type="submit">Sign out</button></form></li>
</ul>
</details></header>`;
}

export interface PageOptions {
  /** The code editor over the page's `textarea.code-input` fields (editor.ts). */
  editor?: boolean;
  /** Origins beyond this site that a form's POST may lead to (the sign-in page's provider, oidc.ts). */
  formActions?: string[];
}

export function sendPage(
  reply: FastifyReply,
  status: number,
  title: string,
  body: Html,
  nonce = newNonce(),
  { editor = false, formActions = [] }: PageOptions = {},
) {
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · snippetd</title>
<link rel="stylesheet" href="${sitePath(reply.request, STYLESHEET_PATH)}">
<link rel="icon" href="data:,">
${editor ? editorScriptTag(reply.request, nonce) : ''}
</head>
<body>
${topHeader(reply.request)}
<main id="content">
${body}
</main>
</body>
</html>
`;
  reply
    .code(status)
    .header('Content-Type', 'text/html; charset=utf-8')
    .header('Content-Security-Policy', policy(nonce, editor, formActions))
    .header('Referrer-Policy', 'strict-origin-when-cross-origin')
    .header('Cache-Control', 'private, no-store');
  // A long page (a form that shows megabytes again) is encoded a stretch at a time: at once, 48 MB held the
  // event loop about 200 ms.
  if (document.text.length <= CHARS_A_TURN) return sendCompressed(reply, document.text);
  return utf8Bytes(document.text).then((bytes) => sendCompressed(reply, bytes));
}

const FAILURE_PAGES: Record<number, [heading: string, text: string]> = {
  403: ['Access denied', "You don't have permission to do this."],
  404: ['Page not found', "The page could not be found or you don't have permission to view it."],
  408: ['Request timed out', 'The request took too long. Please try again.'],
  422: [
    'The change you requested was rejected',
    'The form expired or came from another site. Reload the page and try again.',
  ],
  429: ['Too many requests', 'You cannot access the raw file. Please wait a minute.'],
};

/**
 * A failure on a page: the status the API would give (hidden things are 404), as a short page. A visitor
 * who is not signed in is sent to sign in instead of a 404, and back afterwards, as GitLab does: what they
 * asked for may be theirs to see once signed in, and the page tells no one whether it exists.
 */
export function sendFailurePage(
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  { signInFirst = true, text: ownText }: { signInFirst?: boolean; text?: string } = {},
) {
  const [status, , headers] = answerFor(error);
  if (status >= 500) throw error;
  if (signInFirst && status === 404 && !request.pageUser && (request.method === 'GET' || request.method === 'HEAD'))
    return reply.redirect(signInPath(request), 302);
  // The failure's headers too: a 429's Retry-After says when the page will open again.
  if (headers) reply.headers(headers);
  const [heading, pageText] = FAILURE_PAGES[status] ?? [`Error ${status}`, 'The request could not be completed.'];
  const text = ownText ?? pageText;
  return sendPage(reply, status, heading, html`<h1>${heading}</h1><p>${text}</p>`);
}
