// Long texts worked on a stretch at a time, the event loop taking its turn between: as UTF-8 bytes (Buffer.from
// of a 48 MB string held it about 60 ms), or escaped (JSON.stringify of 50 MB, about half a second).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isHighSurrogate } from '../text-scan.ts';

/** Long texts are worked on this many characters at a time: encoding them takes about a millisecond. */
export const CHARS_A_TURN = 1 << 20;

/**
 * A text kept as its UTF-8 bytes (always valid UTF-8): a large request body's long parameter, such as a file's
 * content, as the body parser hands it over (http/body-parse-worker.ts). Making a string of 150 MiB on the
 * event loop holds it about half a second, so such a text becomes a string only where it is read as one.
 */
export class Utf8Text {
  /** `bytes` may be a view of memory that holds other texts too (the object cache keeps a copy of a view). */
  constructor(readonly bytes: Buffer) {}

  toString(): string {
    return this.bytes.toString('utf8');
  }

  /** Whether it is all whitespace, as `String#trim` sees it, without making it a string. */
  isBlank(): boolean {
    const { bytes } = this;
    for (let at = 0; at < bytes.length; ) {
      const length = whitespaceAt(bytes, at);
      if (!length) return false;
      at += length;
    }
    return true;
  }
}

/**
 * The length in bytes of the whitespace character (as `String#trim` removes: tab, line feed, vertical tab, form
 * feed, carriage return, space, U+00A0, U+1680, U+2000 to U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and
 * U+FEFF) that starts at `at` in valid UTF-8, or 0.
 */
function whitespaceAt(bytes: Buffer, at: number): number {
  const [a, b, c] = [bytes[at], bytes[at + 1], bytes[at + 2]];
  if (a === 0x20 || (a >= 0x09 && a <= 0x0d)) return 1;
  if (a === 0xc2) return b === 0xa0 ? 2 : 0;
  if (a === 0xe1) return b === 0x9a && c === 0x80 ? 3 : 0;
  if (a === 0xe2 && b === 0x80) return c <= 0x8a || c === 0xa8 || c === 0xa9 || c === 0xaf ? 3 : 0;
  if (a === 0xe2) return b === 0x81 && c === 0x9f ? 3 : 0;
  if (a === 0xe3) return b === 0x80 && c === 0x80 ? 3 : 0;
  if (a === 0xef) return b === 0xbb && c === 0xbf ? 3 : 0;
  return 0;
}

/** A parameter's text: a string, or a long one kept as bytes. */
export type Text = string | Utf8Text;

/** Whether `text` holds no half of a UTF-16 pair (String.prototype.isWellFormed, ES2024): such a string is no text. */
export const isWellFormed = (text: string) => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** How the body parse thread refuses a string with half a pair (the message is what crosses back). */
export const MALFORMED_STRING = 'a string holds half of a UTF-16 pair';

/** `Buffer.from(text)`, a mebi-character at a time for a long text, the event loop taking its turn between. */
export async function utf8Bytes(text: Text): Promise<Buffer> {
  if (text instanceof Utf8Text) return text.bytes;
  if (text.length <= CHARS_A_TURN) return Buffer.from(text);
  const bytes = Buffer.allocUnsafe(Buffer.byteLength(text));
  let written = 0;
  for (let at = 0; at < text.length; ) {
    let end = Math.min(at + CHARS_A_TURN, text.length);
    // Never between the two halves of a surrogate pair: each half alone would become U+FFFD.
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    written += bytes.write(text.slice(at, end), written);
    at = end;
    await nextTurn();
  }
  return bytes.subarray(0, written);
}

/**
 * `escapeText(text)`, a stretch of CHARS_A_TURN at a time (never between the halves of a surrogate pair), as a
 * generator that pauses after each: `inTurns` lets the event loop take its turn at each pause, `atOnce` does not.
 * `escapeText` must work character by character, as JSON's and HTML's escaping do.
 */
export function* escapedInTurns(text: string, escapeText: (s: string) => string): Generator<void, string> {
  if (text.length <= CHARS_A_TURN) return escapeText(text);
  let out = '';
  for (let at = 0; at < text.length; ) {
    let end = Math.min(at + CHARS_A_TURN, text.length);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    out += escapeText(text.slice(at, end));
    at = end;
    yield;
  }
  return out;
}

/** Runs work that pauses (a generator) to its end, the event loop taking its turn at each pause. */
export async function inTurns<T>(work: Generator<void, T>): Promise<T> {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
    await nextTurn();
  }
}

/** Runs work that pauses to its end at once: for data known to be small, such as what ships with the code. */
export function atOnce<T>(work: Generator<void, T>): T {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
  }
}

/** The inside of a JSON string literal for `text`. */
export const jsonEscape = (text: string) => JSON.stringify(text).slice(1, -1);
