// GitLab's commit and branch entities (lib/api/entities/commit.rb, commit_detail.rb, commit_stats.rb, branch.rb).
import type { CommitInfo } from '../../storage/git/repository.ts';
import type { FileChange, FilePatch } from '../../storage/git/history.ts';
import type { BranchInfo, TagInfo } from '../../domain/project-files.ts';

/** git's strict ISO dates carry seconds; GitLab's carry milliseconds (2024-05-02T10:11:12.000+00:00). */
const withMillis = (iso: string) => iso.replace(/(T\d\d:\d\d:\d\d)(?=[Z+-])/, '$1.000');

/** A trailer line (`Signed-off-by: A <a@example.com>`): git's default separator, ':'. */
const TRAILER = /^([A-Za-z0-9][A-Za-z0-9-]*):\s*(.*)$/;

/**
 * The trailers of a message, as git reads them unfolded: the last paragraph, when it is not the subject's and each
 * of its lines is a trailer or the continuation of one (indented); in their order. Read back from the message's
 * end, and only while lines can be trailers: a long body (a message may be a megabyte) is not walked.
 */
export function trailersOf(message: string): [string, string][] {
  let stop = message.length;
  while (stop > 0 && message[stop - 1] === '\n') stop--;
  const lines: string[] = [];
  for (;;) {
    const start = message.lastIndexOf('\n', stop - 1) + 1;
    const line = message.slice(start, stop);
    // A blank line: the paragraph above it is not the subject's, and this one holds the trailers.
    if (/^[ \t]*$/.test(line)) break;
    // The first line is the subject's; any other line ends the block.
    if (start === 0 || !(TRAILER.test(line) || /^[ \t]/.test(line))) return [];
    lines.push(line);
    stop = start - 1;
  }
  const trailers: [string, string][] = [];
  for (const line of lines.reverse()) {
    const found = TRAILER.exec(line);
    if (found) trailers.push([found[1], found[2].trim()]);
    else if (trailers.length) trailers[trailers.length - 1][1] += ` ${line.trim()}`;
    else return [];
  }
  return trailers;
}

/** GitLab's Commit entity; `webBase` is the project's `…/-/commit`; its trailers `{}` unless `withTrailers`. */
export function commit(c: CommitInfo, webBase: string, withTrailers = true) {
  const trailers = withTrailers ? trailersOf(c.message) : [];
  const extended: Record<string, string[]> = {};
  for (const [key, value] of trailers) extended[key] = [...(extended[key] ?? []), value];
  return {
    id: c.id,
    short_id: c.id.slice(0, 8),
    created_at: withMillis(c.committedAt),
    parent_ids: c.parents,
    title: c.message.split('\n', 1)[0],
    message: c.message.replace(/\n$/, ''),
    author_name: c.authorName,
    author_email: c.authorEmail,
    authored_date: withMillis(c.authoredAt),
    committer_name: c.committerName,
    committer_email: c.committerEmail,
    committed_date: withMillis(c.committedAt),
    // The last value of each key, as GitLab's Commit#trailers; every value in extended_trailers.
    trailers: Object.fromEntries(trailers),
    extended_trailers: extended,
    web_url: `${webBase}/${c.id}`,
  };
}

/**
 * GitLab's CommitDetail: the commit, its line counts against its first parent (a binary file counts none, as in
 * git's numstat) unless `files` is null, and no pipeline.
 */
export function commitDetail(c: CommitInfo, files: FileChange[] | null, projectId: number, webBase: string) {
  return Object.assign(commit(c, webBase), {
    ...(files && { stats: statsOf(files) }),
    status: null,
    project_id: projectId,
    last_pipeline: null,
  });
}

/** GitLab's CommitWithStats (the commits list's `with_stats`); no stats when git did not list the files in time. */
export function commitWithStats(c: CommitInfo, files: FileChange[] | null, webBase: string, withTrailers: boolean) {
  return Object.assign(commit(c, webBase, withTrailers), files ? { stats: statsOf(files) } : {});
}

/** GitLab's CommitStats: lines added and deleted, as git's numstat counts them (a binary file none). */
function statsOf(files: FileChange[]) {
  const additions = files.reduce((n, f) => n + (f.added ?? 0), 0);
  const deletions = files.reduce((n, f) => n + (f.deleted ?? 0), 0);
  return { additions, deletions, total: additions + deletions };
}

/**
 * GitLab's Branch entity. No branch is protected here (docs/gitlab-compatibility.md#repository-files): a developer
 * pushes to any, so GitLab's protected-branch fields are false and `can_push` is the caller's push_code.
 */
export function branch(b: BranchInfo, canPush: boolean, projectWeb: string) {
  return {
    name: b.name,
    commit: commit(b.commit, `${projectWeb}/-/commit`),
    merged: b.merged,
    protected: false,
    developers_can_push: false,
    developers_can_merge: false,
    can_push: canPush,
    default: b.default,
    web_url: `${projectWeb}/-/tree/${b.name.split('/').map(pathSegment).join('/')}`,
  };
}

/** A URL path segment as Rails' route helpers escape it: RFC 3986's sub-delimiters, `:` and `@` kept. */
const pathSegment = (text: string) =>
  encodeURIComponent(text).replace(/%(21|24|26|27|28|29|2A|2B|2C|3B|3D|3A|40)/g, (c) => decodeURIComponent(c));

/** A mode as GitLab gives it: octal without leading zeros (none: "0"). */
const modeOf = (mode: string) => Number.parseInt(mode, 8).toString(8);

/**
 * GitLab's Diff entity (lib/api/entities/diff.rb): a file's patch from its first hunk on, empty where it is not
 * shown (a binary file, one over a diff's limits, a rename or mode change without changes); with `unidiff`, headed
 * by its `---` and `+++` lines (Gitlab::Git::Diff#unidiff).
 */
export function fileDiff(f: FilePatch, unidiff = false) {
  const header = `--- ${f.kind === 'added' ? '/dev/null' : `a/${f.oldPath}`}\n+++ ${f.kind === 'deleted' ? '/dev/null' : `b/${f.path}`}\n`;
  return {
    diff: f.hunks ? `${unidiff ? header : ''}${f.hunks}` : '',
    new_path: f.path,
    old_path: f.oldPath,
    a_mode: modeOf(f.oldMode),
    b_mode: modeOf(f.newMode),
    new_file: f.kind === 'added',
    renamed_file: f.kind === 'renamed',
    deleted_file: f.kind === 'deleted',
  };
}

/** GitLab's Tag entity (lib/api/entities/tag.rb). No tag is protected and none has a release here. */
export function tag(t: TagInfo, webBase: string) {
  return {
    name: t.name,
    message: t.message,
    target: t.target,
    commit: commit(t.commit, webBase),
    release: null,
    protected: false,
    created_at: t.createdAt,
  };
}
