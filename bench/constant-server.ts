// The baseline of bench/templates.ts: a bare Fastify route answering a constant JSON object. With
// BENCH_REPLAY_FILE (a JSON list of {status, headers, body}), also /replay/<i> answering exactly those
// bytes, so a load script can tell what an answer's size costs from what producing it costs.
import fs from 'node:fs';
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const body = { key: 'mit', name: 'MIT License' };
app.get('/constant', async () => body);

const PER_CONNECTION = new Set(['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);
const replays: { status: number; headers: Record<string, string>; body: string }[] = process.env.BENCH_REPLAY_FILE
  ? JSON.parse(fs.readFileSync(process.env.BENCH_REPLAY_FILE, 'utf8'))
  : [];
replays.forEach((answer, i) => {
  const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !PER_CONNECTION.has(name)));
  app.get(`/replay/${i}`, async (_request, reply) => reply.code(answer.status).headers(headers).send(answer.body));
});

const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`listening on ${address} `);
