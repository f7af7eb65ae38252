// GitLab's parameter rules for project and personal snippets (lib/api/project_snippets.rb, lib/api/snippets.rb,
// snippets_helpers.rb).
import type { Constraints, ParamSpec } from '../params.ts';
import { VISIBILITIES } from '../../domain/access.ts';
import { isSafeFilePath } from '../../domain/paths.ts';

const filePath = (v: unknown) =>
  v === null || (typeof v === 'string' && !isSafeFilePath(v)) ? 'should be a valid file path' : null;

export const snippetIdSpec = { snippet_id: { type: 'id', required: true } } satisfies ParamSpec;

export const createSnippetSpec = {
  title: { type: 'string', required: true, allowBlank: false },
  description: { type: 'string', nullable: true },
  visibility: { type: 'string', values: VISIBILITIES },
  files: {
    type: 'hash_array',
    items: {
      file_path: { type: 'string', required: true, allowBlank: false, check: filePath },
      content: { type: 'text', required: true, allowBlank: false },
    },
  },
  content: { type: 'text', allowBlank: false },
  file_name: { type: 'string' },
} satisfies ParamSpec;

export const createSnippetConstraints: Constraints = {
  mutuallyExclusive: [['files', 'content']],
  exactlyOneOf: [['files', 'content']],
};

export const updateSnippetSpec = {
  ...snippetIdSpec,
  title: { type: 'string', allowBlank: false },
  description: { type: 'string', nullable: true },
  visibility: { type: 'string', values: VISIBILITIES },
  files: {
    type: 'hash_array',
    items: {
      action: { type: 'string', required: true, values: ['create', 'update', 'delete', 'move'] as const },
      content: { type: 'text' },
      file_path: { type: 'string', check: filePath },
      previous_path: { type: 'string', check: filePath },
    },
  },
  content: { type: 'text', allowBlank: false },
  file_name: { type: 'string' },
} satisfies ParamSpec;

export const updateSnippetConstraints: Constraints = {
  mutuallyExclusive: [
    ['files', 'content'],
    ['files', 'file_name'],
  ],
  atLeastOneOf: [['content', 'description', 'files', 'file_name', 'title', 'visibility']],
};

export const fileRawSpec = {
  ...snippetIdSpec,
  ref: { type: 'string', required: true, allowBlank: false },
  file_path: { type: 'string', required: true, allowBlank: false, check: filePath },
} satisfies ParamSpec;

// ---- Personal snippets (lib/api/snippets.rb): the snippet is `:id`, the rest as for project snippets ----

export const personalSnippetIdSpec = { id: { type: 'id', required: true } } satisfies ParamSpec;

export const snippetListSpec = {
  created_after: { type: 'datetime' },
  created_before: { type: 'datetime' },
} satisfies ParamSpec;

export const updatePersonalSnippetSpec = (({ snippet_id: _, ...rest }) => ({ ...personalSnippetIdSpec, ...rest }))(
  updateSnippetSpec,
) satisfies ParamSpec;

export const personalFileRawSpec = (({ snippet_id: _, ...rest }) => ({ ...personalSnippetIdSpec, ...rest }))(
  fileRawSpec,
) satisfies ParamSpec;
