// Where a snippet's surroundings matter: the client address recorded for user agent details honours
// X-Forwarded-For only from configured proxies, and deleting a project removes its snippets' repositories.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helper.ts';

const apps: TestApp[] = [];
after(() => Promise.all(apps.map((a) => a.close())));

async function snippetIn(t: TestApp, headers: Record<string, string> = {}) {
  const project = await t.request({
    method: 'POST',
    url: '/api/v4/projects',
    payload: { path: `p${Date.now()}`, visibility: 'public' },
  });
  const created = await t.request({
    method: 'POST',
    url: `/api/v4/projects/${project.json.id}/snippets`,
    headers: { 'user-agent': 'lifecycle-test/1.0', ...headers },
    payload: { title: 't', files: [{ file_path: 'a.txt', content: 'a' }] },
  });
  assert.equal(created.statusCode, 201);
  return { projectId: project.json.id as number, id: created.json.id as number };
}

describe('client address of user agent details', () => {
  for (const [name, trusted, expected] of [
    ['ignores X-Forwarded-For from an address that is not a trusted proxy', [], '127.0.0.1'],
    ['takes X-Forwarded-For from a trusted proxy', ['127.0.0.1'], '203.0.113.7'],
  ] as const) {
    it(name, async () => {
      const t = await createTestApp({ trustedProxies: [...trusted] });
      apps.push(t);
      const s = await snippetIn(t, { 'x-forwarded-for': '203.0.113.7' });
      const detail = await t.request({
        method: 'GET',
        url: `/api/v4/projects/${s.projectId}/snippets/${s.id}/user_agent_detail`,
      });
      assert.equal(detail.statusCode, 200);
      assert.deepEqual(detail.json, {
        user_agent: 'lifecycle-test/1.0',
        ip_address: expected,
        akismet_submitted: false,
      });
    });
  }
});

describe('project deletion', () => {
  it('removes the snippets and their repositories with the project', async () => {
    const t = await createTestApp();
    apps.push(t);
    const s = await snippetIn(t);
    const repositories = async () => (await t.app.store.git.all()).map((r) => `${r.kind} ${r.owner_id}`).sort();
    assert.deepEqual(await repositories(), [`snippet ${s.id}`]);
    const deleted = await t.request({ method: 'DELETE', url: `/api/v4/projects/${s.projectId}` });
    assert.equal(deleted.statusCode, 202);
    assert.deepEqual(await repositories(), []);
    const gone = await t.request({ method: 'GET', url: `/api/v4/projects/${s.projectId}/snippets/${s.id}` });
    assert.deepEqual([gone.statusCode, gone.json], [404, { message: '404 Project Not Found' }]);
  });
});
