// Property tests for file path safety (docs/gitlab-compatibility.md#snippet-file-raw, #snippet-create,
// #file-actions): GitLab's file_path validator refuses traversal ('..' segments), absolute paths, newlines and NUL
// bytes, also when hidden behind one more level of URL encoding (%2e%2e%2f); ordinary relative paths pass. Checked on
// isSafeFilePath directly and through POST /projects/:id/snippets (400 with Grape's literal message, never a 500;
// safe paths 201).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isSafeFilePath } from '../../src/domain/paths.ts';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

// ---- generators ----

const SAFE_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.'.split('');

/** One ordinary path segment: letters, digits, '_', '-', '.'; never '.', '..' or a '.git' look-alike. */
const safeSegment = fc
  .string({ unit: fc.constantFrom(...SAFE_CHARS), minLength: 1, maxLength: 10 })
  .filter((s) => s !== '.' && s !== '..' && !/^\.git/i.test(s) && /[^.]/.test(s));

/** A relative path of 1-4 safe segments joined by '/'. */
const safePath = fc.array(safeSegment, { minLength: 1, maxLength: 4 }).map((segs) => segs.join('/'));

const separator = fc.constantFrom('/', '\\');

/** Segments joined by separators chosen one by one (GitLab treats '\' like '/'). */
function joinWith(segments: string[], seps: string[]): string {
  return segments.reduce((acc, seg, i) => (i === 0 ? seg : acc + seps[(i - 1) % seps.length] + seg), '');
}

/** A path with a '..' segment somewhere: '..', '../x', 'x/..', 'x/../y', with '/' or '\' separators. */
const traversalPath = fc
  .tuple(
    fc.array(safeSegment, { maxLength: 3 }),
    fc.array(safeSegment, { maxLength: 3 }),
    fc.array(separator, { minLength: 1, maxLength: 6 }),
  )
  .map(([pre, post, seps]) => joinWith([...pre, '..', ...post], seps));

/** An absolute path: '/' followed by an (optionally empty) relative path. */
const absolutePath = fc.oneof(
  fc.constant('/'),
  safePath.map((p) => `/${p}`),
);

/** A safe path with a newline or NUL byte inserted somewhere (never a blank string). */
const controlCharPath = fc.tuple(safePath, fc.constantFrom('\n', '\0'), fc.nat()).map(([p, c, at]) => {
  const i = at % (p.length + 1);
  return p.slice(0, i) + c + p.slice(i);
});

const rawUnsafe = fc.oneof(traversalPath, absolutePath, controlCharPath);

/** Every character as %XX, with lower- or upper-case hex (%2e%2e%2f or %2E%2E%2F). */
function percentEncodeAll(value: string, upper: boolean): string {
  return [...Buffer.from(value, 'utf8')]
    .map((b) => {
      const hex = b.toString(16).padStart(2, '0');
      return `%${upper ? hex.toUpperCase() : hex}`;
    })
    .join('');
}

/** An unsafe path, either as is or hidden behind one more level of URL encoding. */
const unsafePath = fc.oneof(
  rawUnsafe,
  rawUnsafe.map((p) => encodeURIComponent(p)),
  fc.tuple(rawUnsafe, fc.boolean()).map(([p, upper]) => percentEncodeAll(p, upper)),
);

/** `p` as one URL path segment, dots included (%2E, which the reference allows). */
const routeSegment = (p: string) => encodeURIComponent(p).replace(/\./g, '%2E');

// ---- isSafeFilePath ----

describe('isSafeFilePath (property)', () => {
  it('refuses any path with a ".." segment', () => {
    fc.assert(
      fc.property(traversalPath, (p) => !isSafeFilePath(p)),
      { numRuns: 500 },
    );
  });

  it('refuses any absolute path', () => {
    fc.assert(
      fc.property(absolutePath, (p) => !isSafeFilePath(p)),
      { numRuns: 300 },
    );
  });

  it('refuses any path containing a newline or a NUL byte', () => {
    fc.assert(
      fc.property(controlCharPath, (p) => !isSafeFilePath(p)),
      { numRuns: 300 },
    );
  });

  it('refuses all of these once more percent-encoded (encodeURIComponent or every byte as %XX)', () => {
    fc.assert(
      fc.property(
        rawUnsafe,
        fc.boolean(),
        (p, upper) => !isSafeFilePath(encodeURIComponent(p)) && !isSafeFilePath(percentEncodeAll(p, upper)),
      ),
      {
        numRuns: 500,
      },
    );
  });

  it('refuses the classic examples', () => {
    for (const p of [
      '..',
      '.',
      '../etc/passwd',
      '../../etc/passwd',
      'a/../../b',
      'a/..',
      '..\\a',
      'a\\..\\b',
      '/etc/passwd',
      'a\nb',
      'a\0b',
      '%2e%2e%2fetc%2fpasswd',
      '%2E%2E%2F',
      '..%2fa',
      'a%2f..',
      '%2fetc',
      'a%0ab',
      'a%00b',
    ]) {
      assert.equal(isSafeFilePath(p), false, JSON.stringify(p));
    }
  });

  it('accepts ordinary relative paths made of safe segments', () => {
    fc.assert(
      fc.property(safePath, (p) => isSafeFilePath(p)),
      { numRuns: 500 },
    );
    for (const p of ['a.txt', 'dir/sub/file.rb', '...', '.hidden', 'a..b', 'x/..y/z', 'snippetfile1.txt']) {
      assert.equal(isSafeFilePath(p), true, JSON.stringify(p));
    }
  });
});

// ---- through HTTP ----

describe('POST /projects/:id/snippets file_path safety (property, HTTP)', () => {
  let t: TestApp;
  let projectId: number;

  before(async () => {
    t = await createTestApp();
    const project = await t.request({ method: 'POST', url: '/api/v4/projects', payload: { name: 'paths-prop' } });
    assert.equal(project.statusCode, 201, project.body);
    projectId = project.json.id;
    await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  /** A GET sent byte for byte over a socket: app.inject would resolve '%2E%2E' and '%2E' segments away. */
  const rawGet = (urlPath: string) => t.socket('GET', urlPath, { 'private-token': ROOT_TOKEN });

  const create = (filePath: string) =>
    t.api('POST', `/projects/${projectId}/snippets`, ROOT_TOKEN, {
      title: 'prop',
      files: [{ file_path: filePath, content: 'x' }],
    });

  it('an unsafe file_path always answers 400 files[0][file_path] should be a valid file path, never 500', async () => {
    await fc.assert(
      fc.asyncProperty(unsafePath, async (p) => {
        const res = await create(p);
        assert.notEqual(res.statusCode, 500, `500 for ${JSON.stringify(p)}: ${res.body}`);
        assert.equal(res.statusCode, 400, `${JSON.stringify(p)}: ${res.body}`);
        assert.deepEqual(res.json, { error: 'files[0][file_path] should be a valid file path' }, JSON.stringify(p));
      }),
      { numRuns: 30 },
    );
  });

  it('an unsafe file_path in the second file names files[1]', async () => {
    await fc.assert(
      fc.asyncProperty(unsafePath, async (p) => {
        const res = await t.request({
          method: 'POST',
          url: `/api/v4/projects/${projectId}/snippets`,
          payload: {
            title: 'prop',
            files: [
              { file_path: 'ok.txt', content: 'x' },
              { file_path: p, content: 'y' },
            ],
          },
        });
        assert.equal(res.statusCode, 400, `${JSON.stringify(p)}: ${res.body}`);
        assert.deepEqual(res.json, { error: 'files[1][file_path] should be a valid file path' }, JSON.stringify(p));
      }),
      { numRuns: 15 },
    );
  });

  it('PUT: an unsafe file_path or previous_path in a file action answers 400 naming the parameter', async () => {
    const made = await create('keep.txt');
    assert.equal(made.statusCode, 201, made.body);
    const url = `/api/v4/projects/${projectId}/snippets/${made.json.id}`;
    await fc.assert(
      fc.asyncProperty(
        unsafePath,
        fc.constantFrom('file_path', 'previous_path'),
        fc.constantFrom('create', 'update', 'delete', 'move'),
        async (p, key, action) => {
          const files = [{ action, content: 'z', file_path: 'keep.txt', previous_path: 'keep.txt', [key]: p }];
          const res = await t.request({ method: 'PUT', url, payload: { files } });
          assert.notEqual(res.statusCode, 500, `500 for ${JSON.stringify(p)}: ${res.body}`);
          assert.equal(res.statusCode, 400, `${key}=${JSON.stringify(p)}: ${res.body}`);
          assert.deepEqual(
            res.json,
            { error: `files[0][${key}] should be a valid file path` },
            `${key}=${JSON.stringify(p)}`,
          );
        },
      ),
      { numRuns: 30 },
    );
    const raw = await t.request({ method: 'GET', url: `${url}/files/main/keep.txt/raw` });
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.body, 'x');
  });

  it('file raw: an unsafe :file_path (URL-encoded in the route) answers 400 file_path should be a valid file path', async () => {
    const made = await create('keep.txt');
    assert.equal(made.statusCode, 201, made.body);
    await fc.assert(
      fc.asyncProperty(unsafePath, async (p) => {
        const res = await rawGet(
          `/api/v4/projects/${projectId}/snippets/${made.json.id}/files/main/${routeSegment(p)}/raw`,
        );
        assert.notEqual(res.statusCode, 500, `500 for ${JSON.stringify(p)}: ${res.body}`);
        assert.equal(res.statusCode, 400, `${JSON.stringify(p)}: ${res.body}`);
        assert.deepEqual(res.json, { error: 'file_path should be a valid file path' }, JSON.stringify(p));
      }),
      {
        numRuns: 30,
        examples: [['..'], ['.'], ['../etc/passwd'], ['%2e%2e%2fetc%2fpasswd'], ['/etc/passwd'], ['a\nb']],
      },
    );
    const ok = await rawGet(`/api/v4/projects/${projectId}/snippets/${made.json.id}/files/main/keep%2Etxt/raw`);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.body, 'x');
  });

  it('a safe file_path answers 201 and the file keeps its path', async () => {
    await fc.assert(
      fc.asyncProperty(safePath, async (p) => {
        const res = await create(p);
        assert.equal(res.statusCode, 201, `${JSON.stringify(p)}: ${res.body}`);
        assert.deepEqual(
          res.json.files.map((f: { path: string }) => f.path),
          [p],
        );
        assert.equal(res.json.file_name, p);
      }),
      { numRuns: 30 },
    );
  });
});
