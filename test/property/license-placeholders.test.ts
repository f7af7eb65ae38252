// Property tests for license placeholder filling (docs/gitlab-compatibility.md#license-placeholders): the license answer
// (fillLicenseJson, which joins pre-escaped JSON pieces) must be exactly JSON.stringify of the license entity
// whose text GitLab's LicenseTemplate#resolve! would produce: year, then project, then full name, each a
// global, case-insensitive replacement over the whole text, values inserted literally. The reference
// below is written independently of the server's one-pass splitting.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { builtinLicensesByKey } from '../../src/domain/templates/builtin.ts';
import {
  fillLicenseJson,
  licenseJsonOf,
  presentLicense,
  type LicenseData,
  type PlaceholderValues,
} from '../../src/domain/templates/licenses.ts';
import { atOnce, CHARS_A_TURN, inTurns } from '../../src/domain/utf8.ts';

const licenseJson = (l: LicenseData, values: PlaceholderValues) => fillLicenseJson(atOnce(licenseJsonOf(l)), values);

const o = '[\\[<{]';
const c = '[\\]>}]';
function resolveLikeGitLab(text: string, v: { fullname?: string; project?: string; year: number }): string {
  let out = text.replace(new RegExp(`${o}(year|yyyy)${c}`, 'gi'), () => String(v.year));
  if (v.project)
    out = out.replace(
      new RegExp(`${o}(project|description|one line [^\\n\\]>}]* what it does\\.)${c}`, 'gi'),
      () => v.project!,
    );
  if (v.fullname)
    out = out.replace(new RegExp(`${o}(fullname|name of author|name of copyright owner)${c}`, 'gi'), () => v.fullname!);
  return out;
}

const PLACEHOLDERS = [
  '[year]',
  '<YYYY>',
  '{fullname}',
  '[name of author>',
  '<Name Of Copyright Owner}',
  '[project]',
  '{description]',
  "<one line to give the program's name and a brief idea of what it does.>",
];
/** Text made of ordinary characters (JSON-special ones and astral ones included) and placeholders. */
const text = fc
  .array(
    fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.constantFrom(...PLACEHOLDERS),
      fc.constantFrom('"', '\\', '\n', '\u2028', '\ud800', '\udc00', '$1', '$&'),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));
const value = fc.option(
  fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('[fullname]', 'a [project] b', '{year}', '$&', '"\\')),
  { nil: undefined },
);

// Pure functions, no database: once per `npm test` is enough.
const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'opens no database: runs in the SQLite pass only';

describe('license placeholders', { skip }, () => {
  it("the prepared JSON equals JSON.stringify of GitLab's resolved license, for any text and values", () => {
    fc.assert(
      fc.property(text, value, value, (body, fullname, project) => {
        const license: LicenseData = { ...builtinLicensesByKey().find((l) => l.key === 'mit')!, body };
        const year = new Date().getUTCFullYear();
        const expected = JSON.stringify(presentLicense(license, resolveLikeGitLab(body, { fullname, project, year })));
        assert.equal(licenseJson(license, { fullname, project }), expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('a long text, split a stretch at a time, with placeholders and a surrogate pair across the stretches', async () => {
    const mit = builtinLicensesByKey().find((l) => l.key === 'mit')!;
    const year = new Date().getUTCFullYear();
    const values = { fullname: 'Ann "A"', project: 'P <year>', year };
    // The last holds another placeholder from its second "[" on: a stretch searched from its own start, rather
    // than from where the match before it ended, would find that one too.
    for (const placeholder of [...PLACEHOLDERS, '[one line [one line x what it does.]']) {
      for (const offset of [-230, -100, -5, -3, -1, 0, 1, 5]) {
        const filler = 'x\n"'.repeat(CHARS_A_TURN).slice(0, CHARS_A_TURN + offset);
        const body = `${filler}${placeholder}${placeholder}😀${filler}${placeholder}`;
        const expected = JSON.stringify(presentLicense(mit, resolveLikeGitLab(body, values)));
        const license = { ...mit, body };
        assert.equal(licenseJson(license, values), expected, `${placeholder} at ${offset}`);
        assert.equal(fillLicenseJson(await inTurns(licenseJsonOf(license)), values), expected);
      }
    }
  });

  it('every built-in license, with and without values', () => {
    const year = new Date().getUTCFullYear();
    for (const license of builtinLicensesByKey()) {
      for (const v of [{}, { fullname: 'Ann "A" \\ B', project: 'P [fullname] <year>' }]) {
        const expected = JSON.stringify(presentLicense(license, resolveLikeGitLab(license.body, { ...v, year })));
        assert.equal(licenseJson(license, v), expected, license.key);
      }
    }
  });
});
