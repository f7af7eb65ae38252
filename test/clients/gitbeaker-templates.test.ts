// @gitbeaker/rest against snippetd on a real socket: ProjectTemplates.all / ProjectTemplates.show for
// each of the six types (the client has methods for all of them, so no raw requester calls are needed),
// with issue and merge request templates written through the client's RepositoryFiles.create.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { Gitlab } from '@gitbeaker/rest';
import { statusOf } from './support.ts';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const HEADER = '# This file is a template, and might need editing before it works on your project.\n';
const YEAR = String(new Date().getUTCFullYear());
const require = createRequire(import.meta.url);
const LICENSES = Object.values(require('@rexxars/choosealicense-list/licenses.json') as Record<string, any>);

describe('@gitbeaker/rest ProjectTemplates against snippetd', () => {
  let t: TestApp;
  let root: InstanceType<typeof Gitlab>;
  let projectId: number;

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    root = new Gitlab({ host: `http://127.0.0.1:${port}`, token: ROOT_TOKEN });
    const project = await root.Projects.create({ name: 'Templated', path: 'templated', visibility: 'public' });
    projectId = project.id as number;
    await root.RepositoryFiles.create(
      projectId,
      '.gitlab/issue_templates/Bug.md',
      'main',
      '## Bug\n',
      'issue template',
    );
    await root.RepositoryFiles.create(
      projectId,
      '.gitlab/issue_templates/Feature.md',
      'main',
      '## Feature\n',
      'issue template',
    );
    await root.RepositoryFiles.create(
      projectId,
      '.gitlab/merge_request_templates/Default.md',
      'main',
      '## MR\n',
      'mr template',
    );
  });
  after(() => t.close());

  it('lists every type, following the pages (licenses span two pages of 20)', async () => {
    const licenses = await root.ProjectTemplates.all(projectId, 'licenses');
    assert.equal(licenses.length, LICENSES.length);
    assert.deepEqual(licenses.slice(-3), [
      { key: 'apache-2.0', name: 'Apache License 2.0' },
      { key: 'gpl-3.0', name: 'GNU General Public License v3.0' },
      { key: 'mit', name: 'MIT License' },
    ]);
    const dockerfiles = await root.ProjectTemplates.all(projectId, 'dockerfiles');
    assert.deepEqual(dockerfiles[0], { key: 'Binary', name: 'Binary' });
    const gitignores = await root.ProjectTemplates.all(projectId, 'gitignores');
    assert.ok(gitignores.length > 100, String(gitignores.length));
    assert.ok(gitignores.some((g) => g.key === 'C++') && gitignores.some((g) => g.key === 'macOS'));
    const ci = await root.ProjectTemplates.all(projectId, 'gitlab_ci_ymls');
    assert.deepEqual(ci[0], { key: 'Android', name: 'Android' });
    assert.ok(!ci.some((c) => String(c.key).includes('.latest')));
    assert.deepEqual(await root.ProjectTemplates.all(projectId, 'issues'), [
      { key: 'Bug', name: 'Bug' },
      { key: 'Feature', name: 'Feature' },
    ]);
    assert.deepEqual(await root.ProjectTemplates.all(projectId, 'merge_requests'), [
      { key: 'Default', name: 'Default' },
    ]);
  });

  it('lists one page with pagination info (showExpanded)', async () => {
    const { data, paginationInfo } = await root.ProjectTemplates.all(projectId, 'licenses', {
      perPage: 20,
      page: 1,
      maxPages: 1,
      showExpanded: true,
      pagination: 'offset',
    });
    assert.equal(data.length, 20);
    assert.deepEqual(
      [
        paginationInfo.total,
        paginationInfo.totalPages,
        paginationInfo.perPage,
        paginationInfo.current,
        paginationInfo.next,
        paginationInfo.previous,
      ],
      [LICENSES.length, 2, 20, 1, 2, null],
    );
  });

  it('fetches one template of each type', async () => {
    const docker = await root.ProjectTemplates.show(projectId, 'dockerfiles', 'Binary');
    assert.equal(docker.name, 'Binary');
    assert.ok(docker.content.startsWith(HEADER) && /\nFROM /.test(docker.content));
    const ci = await root.ProjectTemplates.show(projectId, 'gitlab_ci_ymls', 'Ruby');
    assert.equal(ci.name, 'Ruby');
    assert.ok(ci.content.startsWith(HEADER));
    const cpp = await root.ProjectTemplates.show(projectId, 'gitignores', 'C++');
    assert.equal(cpp.name, 'C++');
    assert.ok(!cpp.content.startsWith(HEADER) && cpp.content.length > 0);
    assert.deepEqual(await root.ProjectTemplates.show(projectId, 'issues', 'Bug'), {
      name: 'Bug',
      content: '## Bug\n',
    });
    assert.deepEqual(await root.ProjectTemplates.show(projectId, 'merge_requests', 'Default'), {
      name: 'Default',
      content: '## MR\n',
    });
  });

  it('fetches a license with fullname and project (camelised options become query params)', async () => {
    const mit = (await root.ProjectTemplates.show(projectId, 'licenses', 'mit', {
      fullname: 'Jane Doe',
      project: 'Widget',
    })) as Record<string, unknown>;
    assert.deepEqual(Object.keys(mit), [
      'key',
      'name',
      'nickname',
      'html_url',
      'source_url',
      'popular',
      'description',
      'conditions',
      'permissions',
      'limitations',
      'content',
    ]);
    assert.deepEqual(
      [mit.key, mit.name, mit.popular, mit.html_url, mit.source_url],
      ['mit', 'MIT License', true, 'http://choosealicense.com/licenses/mit/', 'https://spdx.org/licenses/MIT.html'],
    );
    assert.ok(String(mit.content).includes(`Copyright (c) ${YEAR} Jane Doe\n`));
    const byCaller = await root.ProjectTemplates.show(projectId, 'licenses', 'mit');
    assert.ok(byCaller.content.includes(`Copyright (c) ${YEAR} Administrator\n`));
  });

  it('reports 404 for an unknown template and 400 for a bad source_template_project_id', async () => {
    assert.deepEqual(await statusOf(root.ProjectTemplates.show(projectId, 'licenses', 'MIT')), {
      status: 404,
      description: '404 Template Not Found',
    });
    assert.deepEqual(await statusOf(root.ProjectTemplates.show(projectId, 'gitignores', 'Nope')), {
      status: 404,
      description: '404 Template Not Found',
    });
    const bad = await statusOf(
      root.ProjectTemplates.show(projectId, 'gitignores', 'Ruby', {
        sourceTemplateProjectId: 'abc' as unknown as number,
      }),
    );
    assert.deepEqual(bad, { status: 400, description: 'source_template_project_id is invalid' });
  });
});
