// The pure Rack-style parameter parser (src/http/rack-params.ts): nested keys, arrays, arrays of hashes
// (a new element starts when a key the current element already has appears again), decoding, and
// prototype-pollution safety.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addParam, parseRackQuery } from '../../src/http/rack-params.ts';

/** The parser builds null-prototype objects; compare their plain JSON shape. */
const parse = (query: string) => JSON.parse(JSON.stringify(parseRackQuery(query)));

const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'opens no database: runs in the SQLite pass only';

describe('parseRackQuery', { skip }, () => {
  it('parses flat pairs', () => {
    assert.deepEqual(parse('a=1&b=two'), { a: '1', b: 'two' });
  });

  it('returns an empty hash for an empty string and skips empty pairs', () => {
    assert.deepEqual(parse(''), {});
    assert.deepEqual(parse('&&a=1&'), { a: '1' });
  });

  it('keeps everything after the first "=" as the value', () => {
    assert.deepEqual(parse('a=b=c'), { a: 'b=c' });
  });

  it('lets a later scalar win', () => {
    assert.deepEqual(parse('a=1&a=2'), { a: '2' });
  });

  it('parses a[]=1&a[]=2 into an array, in order', () => {
    assert.deepEqual(parse('a[]=1&a[]=2'), { a: ['1', '2'] });
    assert.deepEqual(parse('scopes[]=api&scopes[]=read_api&scopes[]=sudo'), { scopes: ['api', 'read_api', 'sudo'] });
  });

  it('parses a[b][c]=1 into nested hashes', () => {
    assert.deepEqual(parse('a[b][c]=1'), { a: { b: { c: '1' } } });
    assert.deepEqual(parse('a[b][c]=1&a[b][d]=2&a[e]=3'), { a: { b: { c: '1', d: '2' }, e: '3' } });
  });

  it('parses files[][file_path]=a&files[][content]=x&files[][file_path]=b&files[][content]=y into two hashes in order', () => {
    assert.deepEqual(parse('files[][file_path]=a&files[][content]=x&files[][file_path]=b&files[][content]=y'), {
      files: [
        { file_path: 'a', content: 'x' },
        { file_path: 'b', content: 'y' },
      ],
    });
  });

  it('starts a new array element whenever a key of the current element repeats', () => {
    assert.deepEqual(
      parse(
        'files[][action]=create&files[][file_path]=a&files[][content]=x&files[][action]=delete&files[][file_path]=b',
      ),
      {
        files: [
          { action: 'create', file_path: 'a', content: 'x' },
          { action: 'delete', file_path: 'b' },
        ],
      },
    );
    assert.deepEqual(parse('files[][file_path]=a&files[][file_path]=b&files[][file_path]=c'), {
      files: [{ file_path: 'a' }, { file_path: 'b' }, { file_path: 'c' }],
    });
  });

  it('handles nested hashes inside array elements', () => {
    assert.deepEqual(parse('files[][a]=1&files[][b][c]=2&files[][a]=3'), {
      files: [{ a: '1', b: { c: '2' } }, { a: '3' }],
    });
  });

  it('parses index-keyed brackets into a hash keyed by index', () => {
    assert.deepEqual(parse('files[0][file_path]=a&files[1][file_path]=b&files[0][content]=x'), {
      files: { '0': { file_path: 'a', content: 'x' }, '1': { file_path: 'b' } },
    });
  });

  it('decodes "+" as a space and percent escapes, in values and keys', () => {
    assert.deepEqual(parse('title=hello+world&content=a%2Bb%20c%26d%3De'), {
      title: 'hello world',
      content: 'a+b c&d=e',
    });
    assert.deepEqual(parse('name=caf%C3%A9+%E2%9C%93'), { name: 'café ✓' });
    assert.deepEqual(parse('my+key=1&files%5B%5D%5Bfile_path%5D=a%2Fb.txt'), {
      'my key': '1',
      files: [{ file_path: 'a/b.txt' }],
    });
    assert.deepEqual(parse('scopes%5B%5D=api&scopes%5B%5D=read_api'), { scopes: ['api', 'read_api'] });
  });

  it('gives a key without "=" an empty or null value, never throwing', () => {
    const result = parse('flag&a=1');
    assert.equal(result.a, '1');
    assert.ok(result.flag === '' || result.flag === null, `flag = ${JSON.stringify(result.flag)}`);
  });

  it('keeps keys named like Object.prototype members as ordinary keys', () => {
    assert.deepEqual(parse('hasOwnProperty=1&toString=2&valueOf[]=3'), {
      hasOwnProperty: '1',
      toString: '2',
      valueOf: ['3'],
    });
  });

  it('ignores __proto__ keys and never pollutes Object.prototype', () => {
    const raw = parseRackQuery(
      '__proto__[polluted]=yes&__proto__=x&a[__proto__][polluted]=yes&files[][__proto__][polluted]=yes&b[]=1&__proto__[]=z&ok=1',
    );
    const probe: Record<string, unknown> = {};
    assert.equal(probe.polluted, undefined);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.hasOwn(raw, '__proto__'), false);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
    assert.equal((raw as Record<string, unknown>).ok, '1');
    assert.deepEqual((raw as Record<string, unknown>).b, ['1']);
    const a = (raw as Record<string, unknown>).a as Record<string, unknown> | undefined;
    if (a !== undefined) assert.equal(Object.hasOwn(a, '__proto__'), false);
    const files = (raw as Record<string, unknown>).files as Record<string, unknown>[] | undefined;
    for (const file of files ?? []) assert.equal(Object.hasOwn(file, '__proto__'), false);
  });

  it('never pollutes Object.prototype through constructor[prototype]', () => {
    parseRackQuery('constructor[prototype][polluted]=yes&a[constructor][prototype][polluted]=yes');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
  });

  it('reads a line break after [] as Rack does, never throwing', () => {
    // Ruby's `.` and `$` stop at a line break (only "\n"): `a[]\n` is not a list item but a hash with the key
    // "\n", and a list item's key ends at a line break.
    assert.deepEqual(parse('a[]%0A=1'), { a: { '\n': '1' } });
    assert.deepEqual(parse('a[]x%0A=1&b[][k]%0A=2'), { a: [{ x: '1' }], b: [{ k: '2' }] });
    assert.deepEqual(parse('a[]%0D=1&b[]%E2%80%A8=2'), { a: [{ '\r': '1' }], b: [{ '\u2028': '2' }] });
  });

  it('survives very deep nesting and malformed percent escapes without throwing', () => {
    assert.doesNotThrow(() => parseRackQuery(`${'a'}${'[b]'.repeat(200)}=1`));
    assert.doesNotThrow(() => parseRackQuery('a=%ZZ&b=%E0%A4%A'));
  });
});

describe('addParam', { skip }, () => {
  it('adds one pair to an existing hash following the same rules', () => {
    const params: Record<string, unknown> = Object.create(null);
    addParam(params, 'files[][file_path]', 'a');
    addParam(params, 'files[][content]', 'x');
    addParam(params, 'files[][file_path]', 'b');
    addParam(params, 'title', 'T');
    assert.deepEqual(JSON.parse(JSON.stringify(params)), {
      files: [{ file_path: 'a', content: 'x' }, { file_path: 'b' }],
      title: 'T',
    });
  });

  it('ignores a __proto__ key', () => {
    const params: Record<string, unknown> = Object.create(null);
    addParam(params, '__proto__', 'x');
    addParam(params, '__proto__[polluted]', 'yes');
    assert.deepEqual(Object.keys(params), []);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});
