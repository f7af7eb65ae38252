// `snippetd fsck` may run beside a serving instance (docs/operations.md): while three clients create, update
// and delete snippets, every fsck run reports no problem, and a last one after them is clean too. Before, its
// reads of a repository's objects and refs, and of a snippet's row and branch, were apart: one or two runs in
// six reported missing objects, heads that differ or repositories without their snippet.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { processServer } from '../helper.ts';
import { cliCommand, exited } from '../../scripts/spawn-server.ts';

const run = promisify(execFile);
const TOKEN = 'fsck-beside-writes-root-token';
const HEADERS = { 'PRIVATE-TOKEN': TOKEN, 'content-type': 'application/json' };

describe('snippetd fsck beside a serving instance', () => {
  let started: Awaited<ReturnType<typeof processServer>>;
  after(async () => {
    await started?.stop();
  });

  it('reports no problem while snippets are created, updated and deleted', async () => {
    started = await processServer('snippetd-fsck-beside-', TOKEN);
    const { server, env } = started;
    const api = async (method: string, url: string, body?: object) => {
      const res = await fetch(`${server.url}/api/v4${url}`, { method, headers: HEADERS, body: JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : null };
    };
    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await api('POST', '/snippets', { title: 's', files: [{ file_path: 'a.txt', content: `${i}` }] })).json.id,
      );
    let stop = false;
    const writer = async (w: number) => {
      for (let k = 1; !stop; k++) {
        if (k % 4 === 0) {
          const made = await api('POST', '/snippets', {
            title: 'n',
            files: [{ file_path: 'a.txt', content: `${w}-${k}` }],
          });
          if (made.status === 201 && k % 8 === 0) await api('DELETE', `/snippets/${made.json.id}`);
        } else {
          const files = [{ action: 'update', file_path: 'a.txt', content: `${w}-${k}` }];
          await api('PUT', `/snippets/${ids[(w + k) % ids.length]}`, { files });
        }
      }
    };
    const writers = [0, 1, 2].map(writer);
    const reported: string[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        const r = await run(...cliCommand('fsck'), { env }).catch((error) => error);
        if ((r.code ?? 0) !== 0) reported.push(`run ${i}: exit ${r.code}: ${r.stdout}${r.stderr}`);
      }
    } finally {
      stop = true;
      await Promise.all(writers);
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
    assert.deepEqual(reported, []);
    const quiet = await run(...cliCommand('fsck'), { env });
    assert.match(quiet.stdout, / 0 problems, /);
  });
});
