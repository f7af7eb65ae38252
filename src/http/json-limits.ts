// GitLab's limits on a JSON body (Gitlab::Middleware::JsonValidation, enforced by default for every route
// snippetd serves; docs/gitlab-compatibility.md#json-limits), checked chunk by chunk as the body streams in,
// before anything parses it. Each chunk costs time in proportion to its own size, never to the body's, so a
// body nested a million deep or holding a million elements is refused after its first few bytes or
// kilobytes instead of holding the event loop while JSON.parse builds it.
//
// The scanner follows JSON's grammar as JSON.parse does, so it never refuses what JSON.parse would take (it
// leaves one thing to JSON.parse: a control character inside a string), plus the whitespace String#trim removes around the document, which snippetd has always accepted.
// It counts as GitLab's validator does: a key and its value are two elements, an array element and the
// document itself one each; a container is checked when it opens (depth) and when it is complete (size).
import { invalidParams } from '../domain/failure.ts';
import { MALFORMED_BODY } from './plugins/errors.ts';

export const JSON_LIMITS = {
  maxDepth: 32,
  maxArraySize: 50_000,
  maxHashSize: 50_000,
  maxTotalElements: 100_000,
};

/** GitLab's answers (400, `{"error": …}`): they name the kind of limit, never its value. */
export const JSON_LIMIT_MESSAGES = {
  depth: 'Parameters nested too deeply',
  array: 'Array parameter too large',
  hash: 'Hash parameter too large',
  elements: 'Too many total parameters',
};

enum S {
  Start, // before the document: whitespace or a value
  Value, // a value must come (after ':' or ',' in an array)
  ArrayFirst, // after '[': a value or ']'
  ObjectFirst, // after '{': a key or '}'
  Key, // after ',' in an object: a key
  Colon, // after a key
  After, // after a value inside a container: ',' or the closer
  Done, // after the document: whitespace only
  String,
  Escape,
  Unicode,
  Minus,
  Zero,
  Int,
  Dot,
  Frac,
  E,
  ESign,
  Exp,
  Literal,
  TrimSpace, // inside a multi-byte character around the document, which must be whitespace String#trim removes
}

const ARRAY = 0;
const OBJECT = 1;

// Whitespace String#trim removes beyond JSON's own (space, \t, \n, \r): \v, \f and these code points.
const TRIM_SPACE = new Set([
  0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029,
  0x202f, 0x205f, 0x3000, 0xfeff,
]);

/**
 * Where the string being read ends or escapes (its quote or backslash), or the chunk's end. A control
 * character inside a string is left for JSON.parse to refuse: the scan only needs to know where it ends.
 * The hottest loop of the scan, kept small so that V8 optimizes it on its own.
 */
function stringEnd(chunk: Buffer, from: number): number {
  let i = from;
  const n = chunk.length;
  while (i < n) {
    const c = chunk[i];
    if (c === 0x22 || c === 0x5c) return i;
    i++;
  }
  return n;
}

const isDigit = (b: number) => b >= 0x30 && b <= 0x39;
const isHex = (b: number) => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
const isJsonSpace = (b: number) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
const NUMBER_ENDS = new Set([S.Zero, S.Int, S.Frac, S.Exp]);
const LITERALS: Record<number, Buffer> = {
  116: Buffer.from('true'),
  102: Buffer.from('false'),
  110: Buffer.from('null'),
};

const malformed = () => invalidParams(MALFORMED_BODY);
const overLimit = (kind: keyof typeof JSON_LIMIT_MESSAGES) => invalidParams(JSON_LIMIT_MESSAGES[kind]);

export class JsonLimitScanner {
  private state = S.Start;
  private readonly kinds: number[] = [];
  private readonly counts: number[] = [];
  private total = 0;
  private stringIsKey = false;
  private hexLeft = 0;
  private literal: Buffer = LITERALS[0x74];
  private literalAt = 0;
  private codePoint = 0;
  private continuationLeft = 0;
  private stateAfterTrimSpace = S.Start;

  constructor(private readonly limits = JSON_LIMITS) {}

  /** Whether the document so far is only whitespace (an empty body, which is `{}`). */
  get empty(): boolean {
    return this.state === S.Start;
  }

  /** Scans the next chunk; throws GitLab's 400 for a limit, or the malformed-body 400. */
  write(chunk: Buffer): void {
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      const b = chunk[i];
      switch (this.state) {
        case S.String:
          i = stringEnd(chunk, i);
          if (i === n) continue;
          if (chunk[i] === 0x5c) this.state = S.Escape;
          else if (this.stringIsKey) {
            this.countElement();
            this.state = S.Colon;
          } else this.valueDone();
          i++;
          continue;
        case S.Escape:
          if (b === 0x75) {
            this.state = S.Unicode;
            this.hexLeft = 4;
          } else if ('"\\/bfnrt'.includes(String.fromCharCode(b))) this.state = S.String;
          else throw malformed();
          i++;
          continue;
        case S.Unicode:
          if (!isHex(b)) throw malformed();
          if (--this.hexLeft === 0) this.state = S.String;
          i++;
          continue;
        case S.Minus:
          if (b === 0x30) this.state = S.Zero;
          else if (isDigit(b)) this.state = S.Int;
          else throw malformed();
          i++;
          continue;
        case S.Zero:
        case S.Int:
        case S.Frac:
        case S.Exp:
          if (isDigit(b) && this.state !== S.Zero) {
            i++;
            continue;
          }
          if (b === 0x2e && (this.state === S.Zero || this.state === S.Int)) this.state = S.Dot;
          else if ((b === 0x65 || b === 0x45) && this.state !== S.Exp) this.state = S.E;
          else {
            // The number ended at this byte, which is read again in the state after it.
            this.valueDone();
            continue;
          }
          i++;
          continue;
        case S.Dot:
          if (!isDigit(b)) throw malformed();
          this.state = S.Frac;
          i++;
          continue;
        case S.E:
          if (b === 0x2b || b === 0x2d) this.state = S.ESign;
          else if (isDigit(b)) this.state = S.Exp;
          else throw malformed();
          i++;
          continue;
        case S.ESign:
          if (!isDigit(b)) throw malformed();
          this.state = S.Exp;
          i++;
          continue;
        case S.Literal:
          if (b !== this.literal[this.literalAt]) throw malformed();
          if (++this.literalAt === this.literal.length) this.valueDone();
          i++;
          continue;
        case S.TrimSpace:
          if ((b & 0xc0) !== 0x80) throw malformed();
          this.codePoint = (this.codePoint << 6) | (b & 0x3f);
          if (--this.continuationLeft === 0) {
            if (!TRIM_SPACE.has(this.codePoint)) throw malformed();
            this.state = this.stateAfterTrimSpace;
          }
          i++;
          continue;
      }
      // Structural states: whitespace, then what the grammar allows here.
      if (isJsonSpace(b)) {
        i++;
        continue;
      }
      if (this.state === S.Start || this.state === S.Done) {
        if (b === 0x0b || b === 0x0c) {
          i++;
          continue;
        }
        if (b >= 0xc0) {
          this.stateAfterTrimSpace = this.state;
          this.state = S.TrimSpace;
          this.continuationLeft = b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : 1;
          this.codePoint = b & (b >= 0xf0 ? 0x07 : b >= 0xe0 ? 0x0f : 0x1f);
          i++;
          continue;
        }
        if (this.state === S.Done) throw malformed();
      }
      this.structural(b);
      i++;
    }
  }

  /** The body has ended: throws the malformed-body 400 unless it held one whole document (or nothing). */
  end(): void {
    if (NUMBER_ENDS.has(this.state) && this.kinds.length === 0) this.valueDone();
    if (this.state !== S.Done && this.state !== S.Start) throw malformed();
  }

  private structural(b: number): void {
    switch (this.state) {
      case S.Colon:
        if (b !== 0x3a) throw malformed();
        this.state = S.Value;
        return;
      case S.ObjectFirst:
      case S.Key:
        if (b === 0x7d && this.state === S.ObjectFirst) {
          this.close(OBJECT);
          return;
        }
        if (b !== 0x22) throw malformed();
        this.state = S.String;
        this.stringIsKey = true;
        return;
      case S.After: {
        const kind = this.kinds[this.kinds.length - 1];
        if (b === 0x2c) this.state = kind === ARRAY ? S.Value : S.Key;
        else if (b === (kind === ARRAY ? 0x5d : 0x7d)) this.close(kind);
        else throw malformed();
        return;
      }
      case S.ArrayFirst:
        if (b === 0x5d) {
          this.close(ARRAY);
          return;
        }
    }
    // S.Start, S.Value, S.ArrayFirst: a value begins.
    if (b === 0x22) {
      this.state = S.String;
      this.stringIsKey = false;
    } else if (b === 0x5b) this.open(ARRAY);
    else if (b === 0x7b) this.open(OBJECT);
    else if (b === 0x2d) this.state = S.Minus;
    else if (b === 0x30) this.state = S.Zero;
    else if (isDigit(b)) this.state = S.Int;
    else if (LITERALS[b]) {
      this.state = S.Literal;
      this.literal = LITERALS[b];
      this.literalAt = 1;
    } else throw malformed();
  }

  private open(kind: number): void {
    if (this.kinds.length >= this.limits.maxDepth) throw overLimit('depth');
    this.kinds.push(kind);
    this.counts.push(0);
    this.state = kind === ARRAY ? S.ArrayFirst : S.ObjectFirst;
  }

  private close(kind: number): void {
    if (this.kinds[this.kinds.length - 1] !== kind) throw malformed();
    this.kinds.pop();
    this.counts.pop();
    this.valueDone();
  }

  private countElement(): void {
    if (++this.total >= this.limits.maxTotalElements) throw overLimit('elements');
  }

  /** A value is complete: it is the document, an array's element or an object's value. */
  private valueDone(): void {
    this.countElement();
    const depth = this.kinds.length;
    if (depth === 0) {
      this.state = S.Done;
      return;
    }
    const top = depth - 1;
    const isArray = this.kinds[top] === ARRAY;
    if (this.counts[top] >= (isArray ? this.limits.maxArraySize : this.limits.maxHashSize)) {
      throw overLimit(isArray ? 'array' : 'hash');
    }
    this.counts[top]++;
    this.state = S.After;
  }
}
