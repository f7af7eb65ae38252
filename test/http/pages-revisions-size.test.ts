// How large a revision's diff page may get (domain/snippets/history.ts, DIFF_PAGE_HTML; diff-highlight.ts,
// MAX_ROWS_HTML): each file's patch is under GitLab's 200 KB, but highlighting markup makes rows many times the
// patch. A file whose highlighted rows are too many is shown plain, and once the page holds its share of rows,
// the files after it are not shown, with the notes that say so.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const escaped = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

describe("a revision's diff page of large patches", () => {
  let t: TestApp;

  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('shows markup-heavy files plain, up to its share of rows, and says which files are not shown', async () => {
    // Nine files of 190 KiB of `<a>` each, lines of 999 characters. Highlighted as HTML, one is 4 MB of rows
    // (ten such made a page of 41 MB); the others are text (not highlighted, which would only take longer).
    const line = `${'<a>'.repeat(333)}\n`;
    const content = line.repeat(Math.floor((190 * 1024) / line.length));
    // And a small change last, which would fit after a file left out, but comes after it: not shown either.
    const paths = ['f0.html', ...Array.from({ length: 8 }, (_, i) => `f${i + 1}.txt`), 'z.txt'];
    const snippet = await t.must('POST', '/snippets', ROOT_TOKEN, {
      title: 'markup',
      visibility: 'public',
      files: paths.map((file_path) => ({ file_path, content: 'x\n' })),
    });
    await t.must('PUT', `/snippets/${snippet.id}`, ROOT_TOKEN, {
      files: paths.map((file_path) => ({
        action: 'update',
        file_path,
        content: file_path === 'z.txt' ? 'y\n' : content,
      })),
    });
    const web = new URL(snippet.web_url).pathname;
    const list = await t.request({ method: 'GET', url: `${web}/revisions`, token: null });
    const commit = /\/revisions\/([0-9a-f]{40})"/.exec(list.body)![1];
    const res = await t.request({ method: 'GET', url: `${web}/revisions/${commit}`, token: null });
    assert.equal(res.statusCode, 200);
    assert.ok(res.body.length < 5 * 1024 * 1024, `the page is ${res.body.length} characters`);
    assert.doesNotMatch(res.body, /hljs-/);
    assert.match(
      res.body,
      /<p class="too-large">This revision changes more than can be displayed: some files are not shown\.<\/p>/,
    );
    // Each file, in order: its rows (every added line whole, escaped), or the note that it is not shown.
    const sections = res.body.split('<section class="file diff-file"').slice(1);
    assert.deepEqual(
      sections.map((s) => /<h2 id="diff-\d+-name"><code>([^<]+)<\/code><\/h2>/.exec(s)?.[1]),
      paths,
    );
    const shown = sections.map((s) => !s.includes('<p class="too-large">Not shown: this revision changes more'));
    const firstHidden = shown.indexOf(false);
    assert.ok(firstHidden > 0, `files shown: ${shown}`);
    assert.deepEqual(
      shown,
      paths.map((_, i) => i < firstHidden),
    );
    const added = `<ins>${escaped(line.slice(0, -1))}</ins>`;
    for (const section of sections.slice(0, firstHidden))
      assert.equal(section.split(added).length - 1, content.length / line.length);
  });
});
