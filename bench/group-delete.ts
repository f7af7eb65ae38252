// DELETE /groups/:id of a large group: `--subgroups` groups inside it, every `--every`-th with a project holding a
// snippet, in process (app.inject); how long the delete took and the longest the event loop went without a turn
// (a timer every millisecond) meanwhile.
// Usage: npx tsx bench/group-delete.ts [--subgroups 1000] [--every 5] [--database-url postgres://…]
import { parseArgs } from 'node:util';
import { inProcessApp } from './in-process-app.ts';
import { longestGapDuring } from '../test/stall.ts';

const { values } = parseArgs({
  options: {
    subgroups: { type: 'string', default: '1000' },
    every: { type: 'string', default: '5' },
    'database-url': { type: 'string' },
  },
});
const TOKEN = 'bench-group-delete-token-0123456789';
const { app, close } = await inProcessApp({ name: 'groupdel', token: TOKEN, databaseUrl: values['database-url'] });
const api = async (method: 'POST' | 'DELETE', url: string, payload?: object) => {
  const res = await app.inject({ method, url: `/api/v4${url}`, headers: { 'private-token': TOKEN }, payload });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
};
try {
  const top = await api('POST', '/groups', { name: 'top', path: 'top' });
  let projects = 0;
  for (let i = 0; i < Number(values.subgroups); i++) {
    const group = await api('POST', '/groups', { name: `g${i}`, path: `g${i}`, parent_id: top.id });
    if (i % Number(values.every) !== 0) continue;
    const project = await api('POST', '/projects', { name: `p${i}`, namespace_id: group.id });
    await api('POST', `/projects/${project.id}/snippets`, {
      title: 's',
      visibility: 'private',
      files: [{ file_path: 'a.txt', content: 'x' }],
    });
    projects++;
  }
  const started = performance.now();
  const { longestGap } = await longestGapDuring(() => api('DELETE', `/groups/${top.id}`));
  console.log(
    `a group with ${values.subgroups} subgroups and ${projects} projects deleted in ${Math.round(performance.now() - started)} ms, the event loop held ${Math.round(longestGap)} ms at most`,
  );
} finally {
  await close();
}
