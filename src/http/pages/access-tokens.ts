// Personal access tokens for the signed-in user (/-/user_settings/personal_access_tokens, GitLab's path):
// create one (name, scopes, expiry) and see it once, list them, revoke one; so a person can clone and use
// clients without asking an administrator. The values are never shown again (only their digests are kept).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Failure, notFound } from '../../domain/failure.ts';
import { createToken, isActive, ownTokens, revokeOwnToken, selfGrantableScopes } from '../../domain/tokens.ts';
import type { Scope } from '../../domain/access.ts';
import type { Token, User } from '../../storage/db/schema.ts';
import { parseRowId } from '../../domain/ids.ts';
import { validate } from '../params.ts';
import { createTokenSpec } from '../schemas/users.ts';
import { storeOf } from '../request.ts';
import { html, trusted, type Html } from '../views/html.ts';
import { checkFormPost, formFields, formTokenField } from './form-token.ts';
import { newNonce, sendPage } from './layout.ts';
import { pageLinks, positiveQueryNumber, type PageHandler } from './common.ts';
import { baseUrl, sitePath } from '../urls.ts';

const PATH = '/-/user_settings/personal_access_tokens';

// GitLab's own descriptions of the scopes.
const SCOPE_TEXT: Record<Scope, string> = {
  api: 'Grants complete read and write access to the API, including all groups and projects.',
  read_api: 'Grants read access to the API, including all groups and projects.',
  read_user: 'Grants read-only access to your profile through the /user API endpoint.',
  read_repository: 'Grants read-only access to repositories using Git-over-HTTP.',
  write_repository: 'Grants read-write access to repositories using Git-over-HTTP.',
  sudo: 'Grants permission to perform API actions as any user in the system, when authenticated as an admin user.',
};

const { id: _id, ...tokenFieldsSpec } = createTokenSpec;

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

interface Typed {
  name: string;
  scopes: string[];
  expiresAt: string;
}

function signedIn(request: FastifyRequest): User {
  // Not signed in: sent to sign in (layout.ts#sendFailurePage).
  if (!request.pageUser) throw notFound();
  return request.pageUser;
}

async function tokensPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  typed: Typed,
  extra: { created?: string; errors?: Record<string, string[]> } = {},
) {
  const user = signedIn(request);
  const page = positiveQueryNumber(request, 'page') ?? 1;
  const tokens = await ownTokens(storeOf(request), user, page);
  const errors = extra.errors ?? {};
  const error = (field: string) =>
    errors[field]?.length ? html`<p class="field-error" id="token-${field}-error">${errors[field].join(' ')}</p>` : '';
  const invalid = (field: string) =>
    errors[field]?.length ? trusted(` aria-invalid="true" aria-describedby="token-${field}-error"`) : '';
  const nonce = newNonce();
  const body = html`<h1>Personal access tokens</h1>
<p>A token lets a GitLab client or <code>git</code> act as you: use it as a password for Git over HTTP, or in
the <code>PRIVATE-TOKEN</code> header for the API.</p>
${
  extra.created
    ? html`<section class="created-token" aria-labelledby="created-heading">
<h2 id="created-heading">Your new personal access token</h2>
<p>Copy it now: it will not be shown again.</p>
<label for="created-token">Token</label>
<input id="created-token" readonly value="${extra.created}">
<button type="button" class="copy" data-copy-input="created-token" hidden>Copy</button>
</section>`
    : ''
}
<section aria-labelledby="new-token-heading">
<h2 id="new-token-heading">Add a token</h2>
<form method="post" action="${sitePath(request, PATH)}" class="token-form">
${formTokenField(request)}
<label for="token-name">Token name</label>
<input id="token-name" name="name" value="${typed.name}"${invalid('name')}>
${error('name')}
<label for="token-expires">Expiration date (optional)</label>
<input id="token-expires" name="expires_at" type="date" min="${tomorrow()}" value="${typed.expiresAt}"${invalid('expires_at')}>
${error('expires_at')}
<fieldset${invalid('scopes')}><legend>Scopes</legend>
${selfGrantableScopes(user).map(
  (scope) =>
    html`<label class="check"><input type="checkbox" name="scopes[]" value="${scope}"${typed.scopes.includes(scope) ? trusted(' checked') : ''}> <strong>${scope}</strong> <span class="hint">${SCOPE_TEXT[scope]}</span></label>`,
)}
${error('scopes')}
</fieldset>
<button type="submit" class="primary">Create token</button>
</form>
</section>
<section aria-labelledby="tokens-heading">
<h2 id="tokens-heading">Your tokens</h2>
${tokenTable(request, tokens.rows, page)}
${pageLinks(
  page > 1 ? { href: `${baseUrl(request)}${PATH}?page=${page - 1}`, label: 'Newer' } : undefined,
  tokens.hasMore ? { href: `${baseUrl(request)}${PATH}?page=${page + 1}`, label: 'Older' } : undefined,
)}
</section>
<script nonce="${nonce}">${trusted(COPY_INPUT_SCRIPT)}</script>`;
  return sendPage(reply, status, 'Personal access tokens', body, nonce);
}

function tokenTable(request: FastifyRequest, tokens: Token[], page: number): Html {
  if (!tokens.length) return html`<p class="empty">${page > 1 ? 'No more tokens.' : 'You have no tokens.'}</p>`;
  // On a narrow screen each row is a block of labelled lines (app.css), so that nothing scrolls off the side.
  return html`<table class="tokens">
<thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">State</th></tr></thead>
<tbody>${tokens.map(
    (t) => html`<tr><th scope="row">${t.name}</th><td data-label="Scopes">${t.scopes.split(' ').join(', ')}</td>
<td data-label="Created"><time datetime="${t.created_at}">${t.created_at.slice(0, 10)}</time></td>
<td data-label="Last used">${t.last_used_at ? html`<time datetime="${t.last_used_at}">${t.last_used_at.slice(0, 10)}</time>` : 'Never'}</td>
<td data-label="Expires">${t.expires_at ?? 'Never'}</td>
<td data-label="State">${
      isActive(t)
        ? // Revoking is for good: asked again first, without JavaScript (a <details> opens by itself).
          html`<details class="revoke"><summary aria-label="${`Revoke ${t.name}`}">Revoke</summary><form method="post" action="${sitePath(request, `${PATH}/${t.id}/revoke`)}">${formTokenField(request)}<p>Whatever uses this token stops working at once.</p><button type="submit" class="danger">${`Revoke ${t.name}`}</button></form></details>`
        : t.revoked
          ? 'Revoked'
          : 'Expired'
    }</td></tr>`,
  )}</tbody>
</table>`;
}

// Shows the copy button (the page works without it) and copies the new token on click.
const COPY_INPUT_SCRIPT = `for (const b of document.querySelectorAll('button[data-copy-input]')) {
  b.hidden = false;
  b.addEventListener('click', () => {
    const input = document.getElementById(b.dataset.copyInput);
    navigator.clipboard.writeText(input.value).then(() => { b.textContent = 'Copied'; });
  });
}`;

const asList = (value: unknown) =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v) => typeof v === 'string');

async function accessTokens(request: FastifyRequest, reply: FastifyReply) {
  const user = signedIn(request);
  const empty = { name: '', scopes: [], expiresAt: '' };
  if (request.method === 'GET') return tokensPage(request, reply, 200, empty);
  checkFormPost(request);
  const fields = formFields(request);
  const typed = {
    name: typeof fields.name === 'string' ? fields.name : '',
    scopes: asList(fields.scopes),
    expiresAt: typeof fields.expires_at === 'string' ? fields.expires_at : '',
  };
  try {
    const p = validate(tokenFieldsSpec, {
      name: typed.name,
      ...(typed.scopes.length && { scopes: typed.scopes }),
      ...(typed.expiresAt && { expires_at: typed.expiresAt }),
    });
    // GitLab's date picker starts tomorrow (the API lets an administrator give a past date: docs/gitlab-compatibility.md).
    if (p.expires_at && p.expires_at < tomorrow())
      throw new Failure('bad_request_param', '', { expires_at: ['Expiration date must be in the future'] });
    const scopes = p.scopes as Scope[];
    if (!scopes.every((s) => selfGrantableScopes(user).includes(s)))
      throw new Failure('bad_request_param', '', { scopes: ['scopes does not have a valid value'] });
    const { plain } = await createToken(storeOf(request), user, {
      name: p.name,
      scopes,
      expiresAt: p.expires_at ?? null,
    });
    return tokensPage(request, reply, 201, empty, { created: plain });
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
    // The model's messages (createToken's name) read as the field's: "Name is too long ...".
    if (error.reason === 'bad_request_fields')
      return tokensPage(request, reply, 422, typed, {
        errors: { name: (error.fields.name ?? []).map((m) => `Name ${m}`) },
      });
    if (error.reason !== 'bad_request_param') throw error;
    return tokensPage(request, reply, 422, typed, { errors: error.fields });
  }
}

async function revokeToken(request: FastifyRequest, reply: FastifyReply, id: number) {
  const user = signedIn(request);
  if (request.method !== 'POST') throw notFound();
  checkFormPost(request);
  if (!(await revokeOwnToken(storeOf(request), user, id))) throw notFound();
  return reply.redirect(sitePath(request, PATH), 303);
}

export const ACCESS_TOKEN_PAGES: [RegExp, PageHandler][] = [
  [/^\/-\/user_settings\/personal_access_tokens$/, accessTokens],
  [
    /^\/-\/user_settings\/personal_access_tokens\/(\d+)\/revoke$/,
    (rq, rp, g) => revokeToken(rq, rp, parseRowId(g[0])!),
  ],
];
