// Real GitLab clients' personal snippet calls against snippetd on a real socket: @gitbeaker/rest's
// `Snippets` (all, public, create, show, showContent, showRepositoryFileContent, edit, remove,
// showUserAgentDetails) and python-gitlab's `gl.snippets` (create, list, public, get, content, save,
// delete), each through the client's own methods, as a user keeps snippets outside any project.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { Gitlab } from '@gitbeaker/rest';
import { statusOf } from './support.ts';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const run = promisify(execFile);
/** Debian's interpreter, where python3-gitlab is installed (.ci/run installs it). */
const PYTHON = '/usr/bin/python3';

describe('personal snippets through real clients', () => {
  let t: TestApp;
  let host: string;
  let alice: { id: number; token: string };

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    host = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    alice = await t.user('alice');
  });
  after(() => t.close());

  it('@gitbeaker/rest Snippets: create, list, show, content, edit, remove', async () => {
    const gl = new Gitlab({ host, token: alice.token });
    const created = await gl.Snippets.create('Notes', {
      visibility: 'public',
      files: [
        { filePath: 'b.md', content: '# b\n' },
        { filePath: 'a.txt', content: 'a\n' },
      ],
    });
    assert.equal(created.project_id, null);
    assert.equal(created.web_url, `${host}/-/snippets/${created.id}`);
    assert.equal(created.file_name, 'a.txt');
    const mine = await gl.Snippets.all();
    assert.deepEqual(
      mine.map((s) => s.id),
      [created.id],
    );
    const pub = await gl.Snippets.all({ public: true });
    assert.ok(pub.some((s) => s.id === created.id));
    assert.equal((await gl.Snippets.show(created.id as number)).title, 'Notes');
    assert.equal(await gl.Snippets.showContent(created.id as number), 'a\n');
    assert.equal(await gl.Snippets.showRepositoryFileContent(created.id as number, 'main', 'b.md'), '# b\n');
    const edited = await gl.Snippets.edit(created.id as number, {
      description: 'edited',
      files: [{ action: 'delete', filePath: 'a.txt' }],
    });
    assert.equal(edited.description, 'edited');
    assert.deepEqual(
      (edited.files as { path: string }[]).map((f) => f.path),
      ['b.md'],
    );
    const admin = new Gitlab({ host, token: ROOT_TOKEN });
    assert.deepEqual(Object.keys(await admin.Snippets.showUserAgentDetails(created.id as number)), [
      'user_agent',
      'ip_address',
      'akismet_submitted',
    ]);
    assert.deepEqual(await statusOf(admin.Snippets.remove(created.id as number)), {
      status: 404,
      description: '404 Snippet Not Found',
    });
    await gl.Snippets.remove(created.id as number);
    assert.equal((await statusOf(gl.Snippets.show(created.id as number))).status, 404);
  });

  it('python-gitlab gl.snippets: create, list, public, get, content, save, delete', async () => {
    const script = `
import gitlab, json, sys
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
s = gl.snippets.create({'title': 'py', 'visibility': 'internal', 'file_name': 'x.py', 'content': 'print(1)'})
out = {'id': s.id, 'project_id': s.project_id, 'web_url': s.web_url}
out['listed'] = [x.id for x in gl.snippets.list(get_all=True)]
out['public'] = [x.id for x in gl.snippets.list_public(get_all=True)] if hasattr(gl.snippets, 'list_public') else [x.id for x in gl.snippets.public(get_all=True)]
got = gl.snippets.get(s.id)
out['content'] = got.content().decode()
got.title = 'py2'
got.save()
out['title'] = gl.snippets.get(s.id).title
got.delete()
try:
    gl.snippets.get(s.id)
    out['after_delete'] = 'found'
except gitlab.exceptions.GitlabGetError as e:
    out['after_delete'] = e.response_code
print(json.dumps(out))
`;
    const { stdout } = await run(PYTHON, ['-c', script, host, alice.token]);
    const out = JSON.parse(stdout);
    assert.equal(out.project_id, null);
    assert.equal(out.web_url, `${host}/-/snippets/${out.id}`);
    assert.ok(out.listed.includes(out.id));
    assert.ok(!out.public.includes(out.id), 'an internal snippet is not in the public list');
    assert.equal(out.content, 'print(1)');
    assert.equal(out.title, 'py2');
    assert.equal(out.after_delete, 404);
  });
});
