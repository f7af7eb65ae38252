// GitLab's parameter rules for search (lib/api/search.rb): `search` and `scope` are required, `search` may be
// blank (it then finds every snippet the caller may see). snippetd searches snippets only, so the scopes it
// knows are the snippet ones (docs/gitlab-compatibility.md#search).
import type { ParamSpec } from '../params.ts';

export const SEARCH_SCOPES = ['snippet_titles'] as const;

export const searchSpec = {
  search: { type: 'string', required: true },
  scope: { type: 'string', required: true, values: SEARCH_SCOPES },
} satisfies ParamSpec;
