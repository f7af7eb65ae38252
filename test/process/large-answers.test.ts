// Answers of tens of megabytes made from stored data, on a real `snippetd serve` process (test/stall.ts): a
// project's issue template and a template project's license of 40 MB (now refused unread: templates are at most
// 1 MiB), a file of 40 MB read through the files API
// as JSON, and a page of twenty snippets whose descriptions are a megabyte each (120 MB of JSON). Each was made
// whole on the event loop (JSON.stringify, base64, Buffer.from), holding it 0.4-0.5 s; each is now made in turns.
// These files run alone (scripts/test.mjs, ALONE): a CI dry run's CPU-heavy neighbour files stretched the
// server's own turns past the bound on a slow afternoon (257 and 469 ms).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { processServer } from '../helper.ts';
import type { Spawned } from '../../scripts/spawn-server.ts';
import { assertCalm, currentRss, MiB, whileHostile } from '../stall.ts';
import { apiOf, gitWork } from './pushed-repositories.ts';

const TOKEN = 'large-answers-root-token';
const git = gitWork('snippetd-large-answers-');

describe('answers of tens of megabytes made from stored data', () => {
  let started: Awaited<ReturnType<typeof processServer>>;
  let server: Spawned;
  let project: { id: number; path_with_namespace: string };
  const api = apiOf(() => server, TOKEN);

  before(async () => {
    started = await processServer('snippetd-large-answers-', TOKEN);
    server = started.server;
    project = await api('POST', '/projects', { path: 'large', visibility: 'public' });
  });
  after(async () => {
    await started?.stop();
    git.remove();
  });

  it("a project's 40 MB issue template and a template project's 40 MB license: refused unread, the loop kept free", async () => {
    // Quotes and line breaks, each escaped in JSON: JSON.stringify of 40 MB of them held the loop 0.4-0.9 s; a
    // template is now at most 1 MiB (404 past it), and one just under it is answered in turns.
    const body = '"\n'.repeat(20 * MiB);
    const license = `[fullname] ${body}[fullname]`;
    const fits = '"\n'.repeat(512 * 1024 - 8);
    const blob = (text: string) => `blob\nmark :${text.length}\ndata ${Buffer.byteLength(text)}\n${text}\n`;
    const dir = git.repository(
      'templates',
      `${blob(body)}${blob(license)}${blob(fits)}commit refs/heads/main\ncommitter T <t@example.com> 0 +0000\n` +
        `data 2\nt\nM 100644 :${body.length} .gitlab/issue_templates/Big.md\nM 100644 :${license.length} ` +
        `LICENSE/Big.txt\nM 100644 :${fits.length} .gitlab/issue_templates/Fits.md\n\n`,
    );
    const templates = await api('POST', '/projects', { path: 'templates', visibility: 'public' });
    git.push(server, TOKEN, dir, templates.path_with_namespace);
    await api('PUT', '/application/settings', { file_template_project_id: templates.id });
    const json = async (url: string) => {
      const res = await fetch(`${server.url}/api/v4${url}`);
      return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
    };

    for (const url of [
      `/projects/${templates.id}/templates/issues/Big`,
      `/projects/${project.id}/templates/licenses/Big`,
    ]) {
      const rssBefore = currentRss(server);
      const refused = await whileHostile(server, () => json(url));
      assertCalm(refused.calm, { rssBytes: rssBefore + 64 * MiB });
      assert.equal(refused.answer.status, 404, url);
    }
    const rssBefore = currentRss(server);
    const answered = await whileHostile(server, () => json(`/projects/${templates.id}/templates/issues/Fits`));
    assertCalm(answered.calm, { rssBytes: rssBefore + 128 * MiB });
    assert.equal(answered.answer.status, 200);
    assert.deepEqual(JSON.parse(answered.answer.bytes.toString()), { name: 'Fits', content: fits });
  });

  it('a 40 MB file read through the files API, as JSON with its content in base64: the loop kept free', async () => {
    const content = crypto.randomBytes(40 * MiB);
    const data = `blob\nmark :1\ndata ${content.length}\n`;
    const dir = git.repository(
      'files-api',
      Buffer.concat([
        Buffer.from(data),
        content,
        Buffer.from(
          '\ncommit refs/heads/main\ncommitter T <t@example.com> 0 +0000\ndata 2\nt\nM 100644 :1 big.bin\n\n',
        ),
      ]),
    );
    const target = await api('POST', '/projects', { path: 'files-api', visibility: 'public' });
    git.push(server, TOKEN, dir, target.path_with_namespace);
    const rssBefore = currentRss(server);
    const { answer, calm } = await whileHostile(server, async () => {
      const res = await fetch(`${server.url}/api/v4/projects/${target.id}/repository/files/big.bin?ref=main`);
      return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
    });
    assertCalm(calm, { rssBytes: rssBefore + 512 * MiB });
    assert.equal(answer.status, 200);
    const file = JSON.parse(answer.bytes.toString());
    assert.deepEqual(
      [file.file_name, file.size, file.encoding, file.content_sha256],
      ['big.bin', content.length, 'base64', crypto.createHash('sha256').update(content).digest('hex')],
    );
    assert.ok(Buffer.from(file.content, 'base64').equals(content));

    // Its raw bytes, with GitLab's X-Gitlab-* headers: the hash taken as the file inflates, never held twice.
    const rawRssBefore = currentRss(server);
    const raw = await whileHostile(server, async () => {
      const res = await fetch(`${server.url}/api/v4/projects/${target.id}/repository/files/big.bin/raw`);
      return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
    });
    assertCalm(raw.calm, { rssBytes: rawRssBefore + 256 * MiB });
    assert.equal(raw.answer.status, 200);
    assert.deepEqual(
      ['size', 'content-sha256', 'blob-id', 'last-commit-id'].map((name) => raw.answer.headers.get(`x-gitlab-${name}`)),
      [String(content.length), file.content_sha256, file.blob_id, file.last_commit_id],
    );
    assert.ok(raw.answer.bytes.equals(content));
  });

  it('a page of twenty snippets whose descriptions are a megabyte of control characters each: the loop kept free', async () => {
    // Each character is six in JSON (\u0001): one JSON.stringify of the page's 120 MB took about half a second.
    const description = '\u0001'.repeat(1024 * 1024);
    for (let n = 0; n < 20; n++) {
      await api('POST', `/projects/${project.id}/snippets`, {
        title: `described ${n}`,
        visibility: 'public',
        description,
        files: [{ file_path: 'a.txt', content: 'a' }],
      });
    }
    const rssBefore = currentRss(server);
    const { answer, calm } = await whileHostile(server, async () => {
      const res = await fetch(`${server.url}/api/v4/projects/${project.id}/snippets?per_page=20`, {
        headers: { 'PRIVATE-TOKEN': TOKEN },
      });
      return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
    });
    assertCalm(calm, { rssBytes: rssBefore + 512 * MiB });
    assert.equal(answer.status, 200, answer.bytes.toString().slice(0, 300));
    const listed = JSON.parse(answer.bytes.toString()) as { title: string; description: string }[];
    assert.deepEqual(
      listed.map((s) => [s.title, s.description === description]),
      Array.from({ length: 20 }, (_, n) => [`described ${19 - n}`, true]),
    );
  });

  it('eight first views at once of a page with a 45 MB file: too large to display, its bytes not read', async () => {
    const snippet = await api('POST', '/snippets', {
      title: 'large',
      visibility: 'public',
      files: [
        { file_path: 'large.txt', content: 'y'.repeat(45 * 1024 * 1024) },
        { file_path: 'small.txt', content: 'small\n' },
      ],
    });
    const view = async () => {
      const res = await fetch(snippet.web_url);
      return { status: res.status, text: await res.text() };
    };
    // Each view read the whole file to learn it was too large: eight at once took 660 MiB more.
    const rssBefore = currentRss(server);
    const { answer, calm } = await whileHostile(server, () => Promise.all(Array.from({ length: 8 }, view)));
    assertCalm(calm, { rssBytes: rssBefore + 64 * MiB });
    for (const page of answer) {
      assert.equal(page.status, 200);
      assert.match(page.text, /This file is too large to display: it is larger than 1 MB\./);
      assert.match(page.text, /<span class="hljs-?[^"]*">small<\/span>|>small\n?</);
    }
  });
});
