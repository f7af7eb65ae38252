// Spam checking of public snippets (docs/gitlab-compatibility.md#spam-check). Without configuration
// nothing is spam; with SNIPPETD_AKISMET_URL set, snippets are checked against that Akismet-compatible
// service's comment-check call, whose body is "true" for spam. A service that cannot be reached lets the
// snippet through (as GitLab does when Akismet fails) and is logged by the caller.

export interface SpamInput {
  title: string;
  description: string | null;
  /** The files' bytes, joined only by a checker that sends them (a snippet may hold tens of megabytes). */
  files: Buffer[];
  userAgent: string;
  ip: string;
  author: { username: string; email: string };
}

export interface SpamChecker {
  isSpam(input: SpamInput): Promise<boolean>;
}

export const SPAM_DISCARDED = 'Your snippet has been recognized as spam and has been discarded.';

export const acceptEverything: SpamChecker = { isSpam: async () => false };

export function akismetChecker(baseUrl: string, apiKey: string, blog: string): SpamChecker {
  return {
    async isSpam(input) {
      const form = new URLSearchParams({
        api_key: apiKey,
        blog,
        user_ip: input.ip,
        user_agent: input.userAgent,
        comment_type: 'snippet',
        comment_author: input.author.username,
        comment_author_email: input.author.email,
        comment_content: [input.title, input.description ?? '', ...input.files.map((b) => b.toString('utf8'))].join(
          '\n',
        ),
      });
      try {
        const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/1.1/comment-check`, {
          method: 'POST',
          body: form,
          signal: AbortSignal.timeout(5000),
        });
        return (await res.text()).trim() === 'true';
      } catch {
        return false;
      }
    },
  };
}
