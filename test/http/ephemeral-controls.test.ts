// The controls of ephemeral mode exist only there: on a server that keeps its data, POST /-/snippetd/reset
// and /-/snippetd/seed are the 404 of any unknown path, even for an administrator (test/process/ephemeral
// covers them in ephemeral mode).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

describe('ephemeral controls on a server that keeps its data', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.app.close());

  it('answers 404 for reset and seed', async () => {
    for (const url of ['/-/snippetd/reset', '/-/snippetd/seed']) {
      for (const token of [ROOT_TOKEN, null]) {
        const res = await t.request({ method: 'POST', url, token, payload: {} });
        assert.deepEqual([res.statusCode, res.json], [404, { error: '404 Not Found' }]);
      }
    }
  });
});
