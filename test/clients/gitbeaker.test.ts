// A real GitLab client (@gitbeaker/rest) against snippetd on a real socket: identity, version, settings,
// users and tokens, groups, and projects by id and by full path.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { Gitlab } from '@gitbeaker/rest';
import { statusOf } from './support.ts';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

describe('@gitbeaker/rest against snippetd', () => {
  let t: TestApp;
  let host: string;
  let root: InstanceType<typeof Gitlab>;
  let rootId: number;
  let userId: number;
  let userToken: string;
  let groupId: number;
  let projectId: number;

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    host = `http://127.0.0.1:${port}`;
    root = new Gitlab({ host, token: ROOT_TOKEN });
  });
  after(() => t.close());

  it('identifies itself with Users.showCurrentUser', async () => {
    const me = await root.Users.showCurrentUser();
    assert.equal(me.username, 'root');
    assert.equal(me.name, 'Administrator');
    assert.equal(me.email, 'admin@example.com');
    assert.equal(me.is_admin, true);
    assert.equal(me.state, 'active');
    assert.equal(me.web_url, `${host}/root`);
    assert.equal(typeof me.id, 'number');
    rootId = me.id as number;
  });

  it("reads the version (GET /version through the client's requester)", async () => {
    const res = await root.requester.get('version', {});
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    const body = res.body as { version: string; revision: string };
    assert.match(body.version, SEMVER);
    assert.equal(typeof body.revision, 'string');
    assert.ok(body.revision.length > 0);
  });

  it('reads and edits the application settings', async () => {
    const settings = await root.ApplicationSettings.show();
    assert.equal(settings.default_branch_name, 'main');
    assert.equal(settings.default_snippet_visibility, 'private');
    assert.deepEqual(settings.restricted_visibility_levels, []);
    const edited = await root.ApplicationSettings.edit({
      defaultSnippetVisibility: 'internal',
      maxSnippetFiles: 7,
    } as never);
    assert.equal(edited.default_snippet_visibility, 'internal');
    assert.equal(edited.max_snippet_files, 7);
    const back = await root.ApplicationSettings.edit({
      defaultSnippetVisibility: 'private',
      maxSnippetFiles: 10,
    } as never);
    assert.equal(back.default_snippet_visibility, 'private');
    assert.equal(back.max_snippet_files, 10);
  });

  it('creates a user and a token for them; the token identifies the user', async () => {
    const user = await root.Users.create({
      username: 'gina',
      email: 'gina@example.com',
      name: 'Gina G',
      password: 'a-long-password',
      skipConfirmation: true,
    });
    assert.equal(user.username, 'gina');
    assert.equal(user.email, 'gina@example.com');
    assert.equal(user.name, 'Gina G');
    assert.equal(user.state, 'active');
    userId = user.id as number;
    assert.notEqual(userId, rootId);

    const shown = await root.Users.show(userId);
    assert.equal(shown.username, 'gina');
    const found = await root.Users.all({ username: 'GINA' });
    assert.deepEqual(
      found.map((u) => u.id),
      [userId],
    );

    const token = await root.Users.createPersonalAccessToken(userId, 'client', ['api']);
    assert.equal(token.name, 'client');
    assert.deepEqual(token.scopes, ['api']);
    assert.equal(token.user_id, userId);
    assert.equal(token.active, true);
    assert.equal(token.revoked, false);
    assert.match(String(token.token), /^glpat-/);
    userToken = String(token.token);

    const gina = new Gitlab({ host, token: userToken });
    const me = await gina.Users.showCurrentUser();
    assert.equal(me.id, userId);
    assert.equal(me.username, 'gina');
    assert.equal(me.is_admin, false);

    const dup = await statusOf(root.Users.create({ username: 'gina', email: 'other@example.com', name: 'Other' }));
    assert.deepEqual(dup, { status: 409, description: 'Username has already been taken' });
    const denied = await statusOf(gina.Users.create({ username: 'hank', email: 'hank@example.com', name: 'Hank' }));
    assert.deepEqual(denied, { status: 403, description: '403 Forbidden' });
  });

  it('lists and shows tokens through PersonalAccessTokens', async () => {
    const gina = new Gitlab({ host, token: userToken });
    const mine = await gina.PersonalAccessTokens.all();
    assert.ok(mine.length >= 1);
    for (const tok of mine) {
      assert.equal(tok.user_id, userId);
      assert.ok(!('token' in tok));
    }
    const self = await gina.PersonalAccessTokens.show();
    assert.equal(self.name, 'client');
    assert.equal(self.user_id, userId);
  });

  it('rotates tokens through PersonalAccessTokens.rotate, by id and as self', async () => {
    const made = await root.PersonalAccessTokens.create(userId, 'to-rotate', ['api'], { expiresAt: '2099-01-31' });
    const rotated = await new Gitlab({ host, token: userToken }).PersonalAccessTokens.rotate(made.id as number, {
      expiresAt: '2099-02-28',
    });
    assert.equal(rotated.name, 'to-rotate');
    assert.equal(rotated.expires_at, '2099-02-28');
    assert.match(String(rotated.token), /^glpat-/);
    const again = await new Gitlab({ host, token: String(rotated.token) }).PersonalAccessTokens.rotate('self');
    assert.equal(again.name, 'to-rotate');
    assert.notEqual(again.token, rotated.token);
    const old = await statusOf(new Gitlab({ host, token: String(rotated.token) }).Users.showCurrentUser());
    assert.equal(old.status, 401);
    const me = await new Gitlab({ host, token: String(again.token) }).Users.showCurrentUser();
    assert.equal(me.id, userId);
  });

  it('creates a group', async () => {
    const group = await root.Groups.create('Client Group', 'client-group', {
      visibility: 'private',
      description: 'made by gitbeaker',
    });
    assert.equal(group.name, 'Client Group');
    assert.equal(group.path, 'client-group');
    assert.equal(group.full_path, 'client-group');
    assert.equal(group.visibility, 'private');
    assert.equal(group.parent_id, null);
    assert.equal(group.web_url, `${host}/groups/client-group`);
    groupId = group.id as number;
    // A tool reads a namespace's id to create a project in it.
    const namespace = await root.Namespaces.show('client-group');
    assert.deepEqual([namespace.id, namespace.kind], [groupId, 'group']);
    const listed = await root.Groups.all({ search: 'client-gr' });
    assert.deepEqual(
      listed.map((g) => g.id),
      [groupId],
    );
    const shown = await root.Groups.show('client-group');
    assert.equal(shown.id, groupId);
  });

  it('creates a project in the group and reads it by id and by full path', async () => {
    const project = await root.Projects.create({
      name: 'Client Project',
      path: 'client-project',
      namespaceId: groupId,
      description: 'hello',
    });
    assert.equal(project.name, 'Client Project');
    assert.equal(project.path, 'client-project');
    assert.equal(project.path_with_namespace, 'client-group/client-project');
    assert.equal(project.visibility, 'private');
    assert.equal(project.default_branch, 'main');
    assert.equal((project.namespace as { id: number }).id, groupId);
    projectId = project.id as number;

    const byId = await root.Projects.show(projectId);
    assert.equal(byId.id, projectId);
    assert.equal(byId.path_with_namespace, 'client-group/client-project');
    assert.equal(byId.description, 'hello');
    assert.equal(byId.http_url_to_repo, `${host}/client-group/client-project.git`);

    const byPath = await root.Projects.show('client-group/client-project');
    assert.equal(byPath.id, projectId);
    assert.deepEqual(byPath, byId);

    // A non-member cannot see the private project: 404, never 403.
    const gina = new Gitlab({ host, token: userToken });
    const hidden = await statusOf(gina.Projects.show('client-group/client-project'));
    assert.deepEqual(hidden, { status: 404, description: '404 Project Not Found' });
  });

  it('commits several files at once, makes a branch and deletes it (Commits.create, Branches.create/remove)', async () => {
    const made = await root.Commits.create(projectId, 'main', 'Seed the project', [
      { action: 'create', filePath: 'README.md', content: '# Client' },
      { action: 'create', filePath: 'bin/run.sh', content: 'ZWNobyBoaQo=', encoding: 'base64' },
    ]);
    assert.equal(made.title, 'Seed the project');
    assert.deepEqual(made.parent_ids, []);
    const tree = await root.Repositories.allRepositoryTrees(projectId, { recursive: true });
    assert.deepEqual(
      tree.filter((e) => e.type === 'blob').map((e) => e.path),
      ['README.md', 'bin/run.sh'],
    );
    // A tree walker reads each blob by the id the tree gives (Repositories.showBlob / showBlobRaw).
    const readme = tree.find((e) => e.path === 'README.md')!;
    const blob = await root.Repositories.showBlob(projectId, String(readme.id));
    assert.deepEqual(blob, { size: 8, encoding: 'base64', content: 'IyBDbGllbnQ=', sha: readme.id });
    const raw = await root.Repositories.showBlobRaw(projectId, String(readme.id));
    assert.equal(raw, '# Client');
    // The whole tree as a zip (Repositories.showArchive: …/repository/archive.zip).
    const zip = (await root.Repositories.showArchive(projectId, { fileType: 'zip', sha: 'main' })) as Blob;
    const names = execFileSync(
      'python3',
      [
        '-c',
        'import sys,zipfile,io; print("\\n".join(zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read())).namelist()))',
      ],
      { input: Buffer.from(await zip.arrayBuffer()), encoding: 'utf8' },
    );
    const prefix = `${(await root.Projects.show(projectId)).path}-main-${made.id}`;
    assert.deepEqual(names.trim().split('\n').sort(), [
      `${prefix}/`,
      `${prefix}/README.md`,
      `${prefix}/bin/`,
      `${prefix}/bin/run.sh`,
    ]);
    const branch = await root.Branches.create(projectId, 'feature/x', 'main');
    assert.equal(branch.name, 'feature/x');
    assert.equal((branch.commit as { id: string }).id, made.id);
    await root.Branches.remove(projectId, 'feature/x');
    const gone = await statusOf(root.Branches.show(projectId, 'feature/x'));
    assert.deepEqual(gone, { status: 404, description: '404 Branch Not Found' });
  });

  it('revokes its own token with PersonalAccessTokens.remove() (DELETE /personal_access_tokens/self)', async () => {
    const made = await root.Users.createPersonalAccessToken(userId, 'throwaway', ['api']);
    const client = new Gitlab({ host, token: String(made.token) });
    await client.PersonalAccessTokens.remove();
    const refused = await statusOf(client.Users.showCurrentUser());
    assert.deepEqual(refused, { status: 401, description: 'invalid_token' });
  });

  it('revokes a token by id; the client then gets 401', async () => {
    const made = await root.Users.createPersonalAccessToken(userId, 'by-id', ['api']);
    await root.PersonalAccessTokens.remove({ tokenId: made.id as number });
    const client = new Gitlab({ host, token: String(made.token) });
    const refused = await statusOf(client.Users.showCurrentUser());
    assert.deepEqual(refused, { status: 401, description: 'invalid_token' });
  });

  it('deletes the group with its project (Groups.remove)', async () => {
    await root.Groups.remove(groupId);
    assert.deepEqual(await statusOf(root.Groups.show(groupId)), { status: 404, description: '404 Group Not Found' });
    assert.deepEqual(await statusOf(root.Projects.show(projectId)), {
      status: 404,
      description: '404 Project Not Found',
    });
  });

  it('deletes a user (Users.remove): 409 while they alone own a group, then with hardDelete', async () => {
    const ivy = await root.Users.create({ username: 'ivy', email: 'ivy@example.com', name: 'Ivy' });
    const token = await root.Users.createPersonalAccessToken(ivy.id as number, 'ivy', ['api']);
    const group = await new Gitlab({ host, token: String(token.token) }).Groups.create('ivys', 'ivys');
    assert.deepEqual(await statusOf(root.Users.remove(ivy.id as number)), {
      status: 409,
      description: 'User cannot be removed while is the sole-owner of a group',
    });
    await root.Users.remove(ivy.id as number, { hardDelete: true });
    assert.deepEqual(await statusOf(root.Users.show(ivy.id as number)), {
      status: 404,
      description: '404 User Not Found',
    });
    assert.deepEqual(await statusOf(root.Groups.show(group.id as number)), {
      status: 404,
      description: '404 Group Not Found',
    });
  });
});
