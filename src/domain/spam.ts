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

/**
 * What of a snippet is sent to be checked: its title, description and files joined by line breaks, up to this
 * many bytes. Encoding 50 MB for the form held the event loop for seconds (about 200 ms a megabyte of markup
 * characters in URLSearchParams); a spam check needs far less.
 */
export const MAX_CHECKED_BYTES = 1024 * 1024;

/** The start of the text to check, at most MAX_CHECKED_BYTES of it (a character cut in two becomes U+FFFD). */
function checkedText(input: SpamInput): string {
  const parts = [Buffer.from(input.title), Buffer.from(input.description ?? ''), ...input.files];
  const kept: Buffer[] = [];
  let left = MAX_CHECKED_BYTES;
  for (const piece of parts.flatMap((part, n) => (n ? [LINE_BREAK, part] : [part]))) {
    if (left <= 0) break;
    kept.push(piece.subarray(0, left));
    left -= kept[kept.length - 1].length;
  }
  return Buffer.concat(kept).toString('utf8');
}
const LINE_BREAK = Buffer.from('\n');

export function akismetChecker(baseUrl: string, apiKey: string, blog: string): SpamChecker {
  return {
    async isSpam(input) {
      const fields = {
        api_key: apiKey,
        blog,
        user_ip: input.ip,
        user_agent: input.userAgent,
        comment_type: 'snippet',
        comment_author: input.author.username,
        comment_author_email: input.author.email,
        comment_content: checkedText(input),
      };
      // encodeURIComponent, as URLSearchParams is several times slower on text full of markup characters.
      const form = Object.entries(fields)
        .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
        .join('&');
      try {
        const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/1.1/comment-check`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
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
