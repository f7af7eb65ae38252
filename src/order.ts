// Git's order of names and paths: byte order of their UTF-8 encoding (GitLab lists files, templates and
// categories this way). One definition for the storage and domain layers.

/** A UTF-16 code unit from U+D800 on: where UTF-16's order and UTF-8's can part. */
const HIGH_UNIT = /[\ud800-\uffff]/;

/**
 * The order of `a` and `b` as their UTF-8 bytes. That is UTF-16's, JavaScript's own, but for an astral
 * character's surrogates (U+D800-U+DFFF), which UTF-8 puts after U+E000-U+FFFF: the two part only where both
 * texts hold a unit from U+D800 on. Encoding both at every comparison made a sort of 50,000 names take 295 ms
 * (now 40-68).
 */
export function byteOrder(a: string, b: string): number {
  if (a === b) return 0;
  if (HIGH_UNIT.test(a) && HIGH_UNIT.test(b)) return unitsOrder(a, b);
  return a < b ? -1 : 1;
}

function unitsOrder(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

const utf8Rank = (unit: number) => (unit < 0xd800 ? unit : unit < 0xe000 ? unit + 0x2000 : unit - 0x800);
