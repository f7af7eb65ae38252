// Text as UTF-8 bytes without holding the event loop: Buffer.from of a 48 MB string held it about 60 ms.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Characters encoded in one go: about a millisecond's work. */
const CHUNK_CHARS = 1 << 20;

/**
 * A text kept as its UTF-8 bytes (always valid UTF-8): a large request body's long parameter, such as a file's
 * content, as the body parser hands it over (http/body-parse-worker.ts). Making a string of 150 MiB on the
 * event loop holds it about half a second, so such a text becomes a string only where it is read as one.
 */
export class Utf8Text {
  /** `shared`: `bytes` is a view of memory that holds other texts too. */
  constructor(
    readonly bytes: Buffer,
    private readonly shared = false,
  ) {}

  toString(): string {
    return this.bytes.toString('utf8');
  }

  /** Its bytes, copied when they share memory with other texts: what keeps them (a cache) keeps only them. */
  ownBytes(): Buffer {
    return this.shared ? Buffer.from(this.bytes) : this.bytes;
  }

  /** Whether it is all whitespace, as `String#trim` sees it, without making it a string. */
  isBlank(): boolean {
    const { bytes } = this;
    for (let at = 0; at < bytes.length; ) {
      const byte = bytes[at];
      if (byte === 0x20 || (byte >= 0x09 && byte <= 0x0d)) at++;
      else if (byte < 0x80) return false;
      else {
        // The character starting here (valid UTF-8: its first byte gives its length).
        const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
        if (bytes.toString('utf8', at, at + length).trim() !== '') return false;
        at += length;
      }
    }
    return true;
  }
}

/** A parameter's text: a string, or a long one kept as bytes. */
export type Text = string | Utf8Text;

/** `Buffer.from(text)`, a mebi-character at a time for a long text, the event loop taking its turn between. */
export async function utf8Bytes(text: Text): Promise<Buffer> {
  if (text instanceof Utf8Text) return text.ownBytes();
  if (text.length <= CHUNK_CHARS) return Buffer.from(text);
  const bytes = Buffer.allocUnsafe(Buffer.byteLength(text));
  let written = 0;
  for (let at = 0; at < text.length; ) {
    let end = Math.min(at + CHUNK_CHARS, text.length);
    // Never between the two halves of a surrogate pair: each half alone would become U+FFFD.
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    written += bytes.write(text.slice(at, end), written);
    at = end;
    await nextTurn();
  }
  return bytes.subarray(0, written);
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
