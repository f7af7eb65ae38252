// The baseline of bench/templates.ts: a bare Fastify route answering a constant JSON object.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const body = { key: 'mit', name: 'MIT License' };
app.get('/constant', async () => body);
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`listening on ${address} `);
