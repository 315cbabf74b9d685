import { afterAll } from 'vitest';
import {
  closePostgresTestServer,
  ON_PGLITE,
  PGLITE_SKIP_REASON,
  postgresTestServer,
  schemaStorage,
} from '../support/postgres.js';
import { exactlyOnceSuite } from './exactly-once.suite.js';

afterAll(closePostgresTestServer);

exactlyOnceSuite({
  name: 'postgres',
  ...(ON_PGLITE ? { skipReason: PGLITE_SKIP_REASON } : {}),
  async create() {
    const server = await postgresTestServer();
    const schema = await server.freshSchema();
    return {
      open: async () => (await schemaStorage(server, schema)).storage,
      async dispose() {},
    };
  },
});

// The same with clients that run one statement at a time: each batch's steps then run one after
// another, the path every pool without `pipeline: true` takes.
exactlyOnceSuite({
  name: 'postgres, clients without pipelining',
  ...(ON_PGLITE ? { skipReason: PGLITE_SKIP_REASON } : {}),
  async create() {
    const server = await postgresTestServer();
    const schema = await server.newSchema();
    return {
      open: async () => (await schemaStorage(server, schema, { pool: { pipeline: false } as never })).storage,
      async dispose() {},
    };
  },
});
