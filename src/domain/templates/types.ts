// The template types of GitLab's template endpoints (docs/gitlab-compatibility.md#templates), one row
// each: where a type's files live in a template project, where its templates come from after the template projects, how a
// file is presented and what the caller needs. Every other module reads this table instead of naming a
// type.
import path from 'node:path';
import { requireFromHere, shippedFile } from '../../shipped-files.ts';

export type TemplateType = 'dockerfiles' | 'gitignores' | 'gitlab_ci_ymls' | 'licenses' | 'issues' | 'merge_requests';

/** Built-in file templates: the files of each folder (not recursive) ending in `extension`. */
export interface BuiltinFiles {
  root: string;
  extension: string;
  /** Folders under `root`, one per GitLab category, in GitLab's list order. */
  folders: readonly string[];
  /** Templates found by name but not listed. */
  unlisted?: (name: string) => boolean;
}

export interface TemplateTypeRule {
  /** Folder of the type's templates in a template project (issues, merge requests: in any project). */
  folder: string;
  /** A template's file name is its name and this extension. */
  extension: string;
  /**
   * Searched after the template projects: data shipped with snippetd (files, or the licenses of
   * @rexxars/choosealicense-list), or the project's own repository.
   */
  source: { builtin: BuiltinFiles | 'choosealicense' } | 'project-repository';
  /** A template's content starts with GitLab's one-line template comment (TEMPLATE_HEADER). */
  header: boolean;
  /** 'license': GitLab's license entity with its placeholders filled; 'file': {name, content}. */
  entity: 'file' | 'license';
  /** The ability needed on the project (policy.ts): read_project (private projects' guests too) or download_code. */
  permission: 'read_project' | 'download_code';
  /** The deprecated instance-wide /templates/<type> endpoints: the name in their 404; null: none. */
  deprecated: { notFound: string } | null;
}

export const TEMPLATE_HEADER = '# This file is a template, and might need editing before it works on your project.\n';

const DATA_DIR = shippedFile('templates-data');
// gitignr's snapshot of github/gitignore.
const GITIGNORE_DIR = path.join(path.dirname(requireFromHere.resolve('gitignr/package.json')), 'gitignore');

export const TEMPLATE_TYPE_RULES: Record<TemplateType, TemplateTypeRule> = {
  dockerfiles: {
    folder: 'Dockerfile',
    extension: '.dockerfile',
    source: {
      builtin: { root: path.join(DATA_DIR, 'dockerfiles'), extension: '.Dockerfile', folders: [''] },
    },
    header: true,
    entity: 'file',
    permission: 'download_code',
    deprecated: { notFound: 'dockerfile' },
  },
  gitignores: {
    folder: 'gitignore',
    extension: '.gitignore',
    source: {
      builtin: {
        root: GITIGNORE_DIR,
        extension: '.gitignore',
        folders: ['', 'Global'], // Languages, then Global
      },
    },
    header: false,
    entity: 'file',
    permission: 'download_code',
    deprecated: { notFound: 'gitignore' },
  },
  gitlab_ci_ymls: {
    folder: 'gitlab-ci',
    extension: '.yml',
    source: {
      builtin: {
        root: path.join(DATA_DIR, 'gitlab-ci'),
        extension: '.gitlab-ci.yml',
        folders: ['', 'Pages', 'Verify', 'autodeploy'], // General, Pages, Verify, Auto deploy
        // GitLab lists the stable templates; the `.latest` variants are fetched by name only.
        unlisted: (name) => name.includes('.latest'),
      },
    },
    header: true,
    entity: 'file',
    permission: 'download_code',
    deprecated: { notFound: 'gitlab_ci_yml' },
  },
  licenses: {
    folder: 'LICENSE',
    extension: '.txt',
    source: { builtin: 'choosealicense' },
    header: false,
    entity: 'license',
    permission: 'download_code',
    deprecated: { notFound: 'License' },
  },
  issues: {
    folder: '.gitlab/issue_templates',
    extension: '.md',
    source: 'project-repository',
    header: false,
    entity: 'file',
    permission: 'read_project',
    deprecated: null,
  },
  merge_requests: {
    folder: '.gitlab/merge_request_templates',
    extension: '.md',
    source: 'project-repository',
    header: false,
    entity: 'file',
    permission: 'download_code',
    deprecated: null,
  },
};

/** Every type, in the order GitLab's `type` parameter names them. */
export const TEMPLATE_TYPES = Object.keys(TEMPLATE_TYPE_RULES) as TemplateType[];
