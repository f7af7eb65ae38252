// How much of the commit and tag messages a list shows. GitLab shows a message over 10 MB as its subject and a
// notice (Gitlab::Git::Commit#message_from_gitaly_body); pushes here take commits of at most 1 MiB, so no single
// message reaches that, but a page of a hundred such messages, held whole and written out, took 180-700 MB and held
// the event loop 0.4-2.4 s. So a page's messages share a budget, and past it each is shown in GitLab's too-big form.

import { trimEndOf } from '../text-scan.ts';

/** The characters of whole messages one page shows. */
export const PAGE_MESSAGE_CHARS = 8 * 1024 * 1024;

/** The subject a too-big form keeps, at most: the 10 KiB of a message Gitaly sends before it is asked for more. */
const SUBJECT_CHARS = 10 * 1024;

/** GitLab's line in place of a commit message too big to show, after its subject. */
export const TOO_BIG_NOTICE = '--commit message is too big';

/** What Ruby's String#strip takes off a string's start: NUL and ASCII whitespace. */
const RUBY_BLANKS = '\0\t\n\v\f\r ';

/** GitLab's whole answer in place of a tag message too big to show (Gitlab::Git::Tag). */
export const TAG_TOO_BIG = '--tag message is too big';

/**
 * A message's first line, without its line ending, as Gitaly's subjectFromBody. Not `replace(/\r+$/, '')`, which
 * tries every start in a run of carriage returns: a line of 128 KiB of them held the loop 17 s.
 */
const subjectOf = (message: string) => {
  const end = message.indexOf('\n');
  return trimEndOf(end === -1 ? message : message.slice(0, end), '\r');
};

export interface MessageBudget {
  /** A commit's message, whole or in GitLab's too-big form. */
  commit(message: string): string;
  /** An annotated tag's message, whole or GitLab's TAG_TOO_BIG. */
  tag(message: string): string;
}

/**
 * A page's share of messages: each is answered whole while the page's whole messages come to PAGE_MESSAGE_CHARS
 * (a commit's counted with its title, which repeats its first line), else in GitLab's too-big form.
 */
export function messageBudget(): MessageBudget {
  let left = PAGE_MESSAGE_CHARS;
  const fits = (cost: number) => {
    if (cost > left) return false;
    left -= cost;
    return true;
  };
  return {
    commit(message) {
      const subject = subjectOf(message);
      if (fits(message.length + subject.length)) return message;
      // GitLab strips the form ("#{subject}\n\n--commit message is too big".strip): a subject's leading blanks go,
      // and a blank subject leaves the notice alone.
      let start = 0;
      while (start < subject.length && RUBY_BLANKS.includes(subject[start])) start++;
      if (start === subject.length) return TOO_BIG_NOTICE;
      // A copy, not a slice: V8's slice would keep the whole message alive for as long as the subject is.
      const kept = subject.slice(start, start + SUBJECT_CHARS);
      return `${Buffer.from(kept).toString()}\n\n${TOO_BIG_NOTICE}`;
    },
    tag: (message) => (fits(message.length) ? message : TAG_TOO_BIG),
  };
}
