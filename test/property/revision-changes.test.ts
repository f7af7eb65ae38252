// Random edits of a snippet's files through the API (lines inserted, deleted and replaced among blank, brace
// and repeated lines, which git's diff treats apart; a file renamed unchanged, or deleted and made again),
// then every page of its revisions: each commit's files, their kind and their added and deleted lines must be
// what `git log --raw --numstat -M` says in the snippet's repository (the pages read them from the rows,
// storage/git/changes.ts, and leave to git what the rows cannot tell as git would).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createTestApp, gitLogChanges, ROOT_TOKEN, type TestApp } from '../helper.ts';

const LINES = ['', '', '}', '{', '  return x;', 'a', 'b'];
// Blank lines (which recur enough for git to discard one among unmatched lines), lines that recur, and lines
// all but certainly unmatched.
const lineArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 2, arbitrary: fc.constantFrom(...LINES) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 40 }).map((n) => `line ${n}`) },
  { weight: 4, arbitrary: fc.integer({ min: 1000, max: 1_000_000 }).map((n) => `unique ${n}`) },
);
const uniqueArb = fc.integer({ min: 1000, max: 1_000_000 }).map((n) => `unique ${n}`);
/** A block of new lines around a blank one: where git's diff discards the blank line. */
const blockArb = fc
  .tuple(fc.array(uniqueArb, { minLength: 4, maxLength: 10 }), fc.array(uniqueArb, { minLength: 4, maxLength: 10 }))
  .map(([before, after]) => [...before, '', ...after]);
const editArb = fc.record({
  at: fc.nat(),
  remove: fc.nat({ max: 6 }),
  insert: fc.oneof(fc.array(lineArb, { maxLength: 24 }), blockArb),
});
const stepArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('edit' as const),
      edits: fc.array(editArb, { minLength: 1, maxLength: 4 }),
      newline: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'rename' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('recreate' as const), newline: fc.boolean() }) },
);

function applyEdits(lines: string[], edits: { at: number; remove: number; insert: string[] }[]): string[] {
  const out = [...lines];
  for (const e of edits) out.splice(e.at % (out.length + 1), e.remove, ...e.insert);
  return out;
}

describe("revisions pages list each commit's files as git does", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const gitChanges = async (snippetId: number) => gitLogChanges((await t.gitDir('snippet', snippetId))!);

  const textOf = (markup: string) =>
    markup
      .replace(/<[^>]*>/g, '')
      .replace(/&amp;/g, '&')
      .replace(/\s+/g, ' ')
      .trim();

  /** Every page's commits with their files, newest first. */
  async function listedChanges(web: string) {
    const out: { id: string; changes: string[] }[] = [];
    for (let page = 1; ; page++) {
      const res = await t.request({
        method: 'GET',
        url: `${new URL(web).pathname}/revisions?page=${page}`,
        token: null,
      });
      assert.equal(res.statusCode, 200);
      const items = [...res.body.matchAll(/<li class="revision">([\s\S]*?)\n<\/li>/g)].map(([, item]) => ({
        id: /\/revisions\/([0-9a-f]{40})"/.exec(item)![1],
        changes: [...item.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => textOf(m[1])),
      }));
      out.push(...items);
      if (!res.body.includes('rel="next"')) return out;
    }
  }

  it('for random edits, renames and files made again', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(lineArb, { maxLength: 120 }),
        fc.boolean(),
        fc.array(stepArb, { minLength: 1, maxLength: 24 }),
        async (start, startNewline, steps) => {
          let lines = ['// start', ...start];
          let name = 'a.js';
          const text = (ls: string[], newline: boolean) =>
            ls.length ? `${ls.join('\n')}${newline ? '\n' : ''}` : 'none';
          const snippet = await t.ok(
            'POST',
            '/snippets',
            ROOT_TOKEN,
            {
              title: 'edits',
              visibility: 'public',
              files: [
                { file_path: name, content: text(lines, startNewline) },
                { file_path: 'other.txt', content: 'stays\n' },
              ],
            },
            201,
          );
          for (const step of steps) {
            let files: Record<string, string>[];
            if (step.kind === 'edit') {
              lines = applyEdits(lines, step.edits);
              files = [{ action: 'update', file_path: name, content: text(lines, step.newline) }];
            } else if (step.kind === 'rename') {
              const next = name === 'a.js' ? 'dir/b.js' : 'a.js';
              files = [{ action: 'move', previous_path: name, file_path: next }];
              name = next;
            } else {
              files = [
                { action: 'delete', file_path: 'other.txt' },
                {
                  action: 'create',
                  file_path: 'other.txt',
                  content: `again\n${lines.length}${step.newline ? '\n' : ''}`,
                },
              ];
            }
            // A change that changes nothing is refused or makes an empty commit: either way, git is the oracle.
            await t.api('PUT', `/snippets/${snippet.id}`, ROOT_TOKEN, { files });
          }
          assert.deepEqual(await listedChanges(snippet.web_url), await gitChanges(snippet.id));
        },
      ),
      // Each run is tens of HTTP writes: a failure is reported as found, not shrunk for minutes.
      { numRuns: 25, endOnFailure: true },
    );
  });
});
