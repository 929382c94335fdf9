import Fastify, { FastifyInstance } from 'fastify';
import { Pool, PoolConfig } from 'pg';
import { PipelinedClient } from '../src/database/pipelined-client';
import { bareAuthentication } from './bare-auth';

/**
 * A bare Fastify + pg server for a yardstick: a pool of the service's pg client, the bare authentication, a readiness
 * route, the routes `register` adds; listens on PORT, stops on SIGTERM.
 */
export function startBareServer(
  register: (app: FastifyInstance, pool: Pool, authenticate: ReturnType<typeof bareAuthentication>) => void,
): void {
  // The service's own driver set-up (pipelined connections, prepared statements): the
  // yardstick differs from the service by the framework only.
  const pool = new Pool({
    connectionString: process.env.DATABASE_URL,
    max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
    Client: PipelinedClient,
    pipeline: true,
  } as PoolConfig);
  const app = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });
  app.get('/health/ready', async () => ({ status: 'ok' }));
  register(app, pool, bareAuthentication(pool));
  app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' }).catch((error) => {
    console.error(error);
    process.exit(1);
  });
  process.on(
    'SIGTERM',
    () =>
      void app
        .close()
        .then(() => pool.end())
        .then(() => process.exit(0)),
  );
}
