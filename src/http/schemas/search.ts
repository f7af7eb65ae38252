// GitLab's parameter rules for search (lib/api/search.rb): `search` and `scope` are required, `search` may be
// blank (it then finds every snippet the caller may see). snippetd searches snippets only: GitLab's
// `snippet_titles`, and its own `snippet_blobs` (docs/gitlab-compatibility.md#search, #d22).
import type { ParamSpec } from '../params.ts';

export const SEARCH_SCOPES = ['snippet_titles', 'snippet_blobs'] as const;

export const searchSpec = {
  search: { type: 'string', required: true },
  scope: { type: 'string', required: true, values: SEARCH_SCOPES },
  // GitLab's search_params_common: checked as GitLab checks them; snippets have neither a state nor confidentiality.
  state: { type: 'string', values: ['all', 'opened', 'closed', 'merged'] as const },
  confidential: { type: 'boolean' },
} satisfies ParamSpec;
