// Scanning a text in one pass where an array of its characters would take memory in proportion to it, or a
// regular expression time in proportion to its square (`/-+$/` tries every start in a run of dashes): a request
// may send megabytes. Shared by the domain and the storage.

/** Whether a UTF-16 code unit is the first half of a surrogate pair: no text is cut after one. */
export const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * The characters (code points; a lone surrogate is one) of `text`, as `[...text].length` counts them, counted
 * only up to one past `upTo`: spreading a 100 MB title into an array of characters held the event loop 14 s.
 */
export function codePoints(text: string, upTo = Number.POSITIVE_INFINITY): number {
  let count = 0;
  for (let at = 0; at < text.length && count <= upTo; at++, count++) {
    const code = text.charCodeAt(at);
    if (isHighSurrogate(code) && at + 1 < text.length) {
      const next = text.charCodeAt(at + 1);
      if (next >= 0xdc00 && next <= 0xdfff) at++;
    }
  }
  return count;
}

/**
 * `text` cut at `chars` UTF-16 units with "…" when longer (never between the halves of a surrogate pair): a
 * page shows the start of what may be a megabyte.
 */
export function cutWithEllipsis(text: string, chars: number): string {
  if (text.length <= chars) return text;
  return `${text.slice(0, isHighSurrogate(text.charCodeAt(chars - 1)) ? chars - 1 : chars).trimEnd()}…`;
}

/** `text` without the characters of `chars` at its end (what `replace(/[…]+$/, '')` does, in linear time). */
export function trimEndOf(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1])) end--;
  return text.slice(0, end);
}

/** `text` without the characters of `chars` at either end. */
export function trimOf(text: string, chars: string): string {
  let start = 0;
  while (start < text.length && chars.includes(text[start])) start++;
  return trimEndOf(text.slice(start), chars);
}
