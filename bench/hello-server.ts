/** The ceiling for API benchmarks: a Fastify hello-world route with a response schema, as in fastify/benchmarks. */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const schema = { response: { 200: { type: 'object', properties: { hello: { type: 'string' } } } } };
app.get('/', { schema }, async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.argv[2] ?? 3901), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
