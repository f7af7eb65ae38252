// DELETE /users/:id of a user with many snippets: `--personal` personal snippets, `--projects` personal projects with
// a snippet each and `--shared` snippets in another user's project (kept, by the ghost user), in process (app.inject);
// how long the delete took and the longest the event loop went without a turn (a timer every millisecond) meanwhile.
// Usage: npx tsx bench/user-delete.ts [--personal 2000] [--projects 100] [--shared 1000] [--database-url postgres://…]
import { parseArgs } from 'node:util';
import { inProcessApp } from './in-process-app.ts';
import { longestGapDuring } from '../test/stall.ts';

const { values } = parseArgs({
  options: {
    personal: { type: 'string', default: '2000' },
    projects: { type: 'string', default: '100' },
    shared: { type: 'string', default: '1000' },
    'database-url': { type: 'string' },
  },
});
const TOKEN = 'bench-user-delete-token-0123456789';
const { app, close } = await inProcessApp({ name: 'userdel', token: TOKEN, databaseUrl: values['database-url'] });
const api = async (method: 'POST' | 'DELETE', url: string, payload?: object, token = TOKEN) => {
  const res = await app.inject({ method, url: `/api/v4${url}`, headers: { 'private-token': token }, payload });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.statusCode === 204 ? null : res.json();
};
const FILES = [{ file_path: 'a.txt', content: 'x' }];
try {
  const user = await api('POST', '/users', { username: 'leaving', email: 'leaving@example.com', name: 'Leaving' });
  const { token } = await api('POST', `/users/${user.id}/personal_access_tokens`, { name: 't', scopes: ['api'] });
  const shared = await api('POST', '/projects', { name: 'shared' });
  await api('POST', `/projects/${shared.id}/members`, { user_id: user.id, access_level: 30 });
  for (let i = 0; i < Number(values.personal); i++)
    await api('POST', '/snippets', { title: `p${i}`, visibility: 'private', files: FILES }, token);
  for (let i = 0; i < Number(values.projects); i++) {
    const project = await api('POST', '/projects', { name: `own${i}` }, token);
    await api('POST', `/projects/${project.id}/snippets`, { title: 's', visibility: 'private', files: FILES }, token);
  }
  for (let i = 0; i < Number(values.shared); i++)
    await api(
      'POST',
      `/projects/${shared.id}/snippets`,
      { title: `s${i}`, visibility: 'private', files: FILES },
      token,
    );
  const started = performance.now();
  const { longestGap } = await longestGapDuring(() => api('DELETE', `/users/${user.id}`));
  console.log(
    `a user with ${values.personal} personal snippets, ${values.projects} projects and ${values.shared} snippets in another's project deleted in ${Math.round(performance.now() - started)} ms, the event loop held ${Math.round(longestGap)} ms at most`,
  );
} finally {
  await close();
}
