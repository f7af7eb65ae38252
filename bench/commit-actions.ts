// POST /projects/:id/repository/commits with many changes: rounds of `--actions` new files each, into one folder
// that grows by as many every round, in process (app.inject); each round's time and the longest the event loop
// went without a turn (a timer every millisecond) while it was answered.
// Usage: npx tsx bench/commit-actions.ts [--actions 1000] [--rounds 5] [--database-url postgres://…]
import { parseArgs } from 'node:util';
import { inProcessApp } from './in-process-app.ts';
import { longestGapDuring } from '../test/stall.ts';

const { values } = parseArgs({
  options: {
    actions: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '5' },
    'database-url': { type: 'string' },
  },
});
const TOKEN = 'bench-commit-actions-token-0123456789';
const { app, close } = await inProcessApp({ name: 'commits', token: TOKEN, databaseUrl: values['database-url'] });
const api = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
  app.inject({ method, url: `/api/v4${url}`, headers: { 'private-token': TOKEN }, payload: payload as object });
try {
  const project = (await api('POST', '/projects', { name: 'bench' })).json();
  for (let round = 0; round < Number(values.rounds); round++) {
    const actions = Array.from({ length: Number(values.actions) }, (_, i) => ({
      action: 'create',
      file_path: `folder/r${round}-f${i}.txt`,
      content: `${round} ${i}\n`,
    }));
    const started = performance.now();
    const { answer: res, longestGap } = await longestGapDuring(() =>
      api('POST', `/projects/${project.id}/repository/commits`, {
        branch: 'main',
        commit_message: `round ${round}`,
        actions,
      }),
    );
    if (res.statusCode !== 201) throw new Error(`${res.statusCode} ${res.body}`);
    console.log(
      `round ${round}: ${actions.length} new files into a folder of ${round * actions.length}: ${Math.round(performance.now() - started)} ms, the event loop held ${Math.round(longestGap)} ms at most`,
    );
  }
} finally {
  await close();
}
