import type { Project, Snippet, User } from '../../storage/db/schema.ts';
import { userBasic } from './users.ts';
import { snippetFileRawUrl, snippetHttpRepoUrl, snippetSshRepoUrl, snippetWebUrl } from '../urls.ts';

/** D2: GitLab's UserBasic plus the mission's `email` (public email only) and `created_at`. */
export const snippetAuthor = (user: User, base: string) =>
  Object.assign(userBasic(user, base), { email: user.public_email ?? '', created_at: user.created_at });

/**
 * GitLab's snippet entity, keys in GitLab's order (docs/gitlab-compatibility.md#snippet-object); a personal
 * snippet has no project (`project_id` null, URLs below /-/snippets and /snippets).
 */
export function snippet(
  s: Snippet,
  author: User,
  project: Pick<Project, 'full_path'> | null,
  paths: string[],
  urls: { base: string; sshHost: string },
) {
  const projectPath = project?.full_path ?? null;
  const web = snippetWebUrl(urls.base, projectPath, s.id);
  const hasRepository = s.head_commit !== null;
  return {
    id: s.id,
    title: s.title,
    description: s.description,
    visibility: s.visibility,
    author: snippetAuthor(author, urls.base),
    created_at: s.created_at,
    updated_at: s.updated_at,
    project_id: s.project_id,
    web_url: web,
    raw_url: `${web}/raw`,
    ...(hasRepository && {
      ssh_url_to_repo: snippetSshRepoUrl(urls.sshHost, projectPath, s.id),
      http_url_to_repo: snippetHttpRepoUrl(urls.base, projectPath, s.id),
    }),
    file_name: paths[0] ?? s.file_name,
    files: paths.map((p) => ({
      path: p,
      raw_url: snippetFileRawUrl(web, s.default_branch, p),
    })),
    imported: false,
    imported_from: 'none',
  };
}

export const userAgentDetail = (d: { user_agent: string; ip_address: string; submitted: number }) => ({
  user_agent: d.user_agent,
  ip_address: d.ip_address,
  akismet_submitted: d.submitted === 1,
});
