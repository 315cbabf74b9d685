import { createPostgresStorage } from 'billing-engine/adapters/postgres';
import { closePostgresTestServer, ON_PGLITE, POSTGRES_URL, postgresTestServer, testPool } from '../support/postgres.js';
import { crashSuite } from './crash-suite.js';

crashSuite({
  name: 'postgres',
  // Killing a process mid-transaction needs a real server: PGlite is one in-process session.
  ...(ON_PGLITE
    ? {
        skipReason:
          'BILLING_TEST_POSTGRES_URL is not set; the crash test kills processes holding real server connections, which PGlite (one in-process session) cannot stand for. CI sets it.',
      }
    : {}),
  async create() {
    const server = await postgresTestServer();
    const schema = await server.newSchema();
    const reader = testPool(server, schema, { max: 1 });
    return {
      location: { dialect: 'postgres', url: POSTGRES_URL!, schema },
      async open() {
        const storage = createPostgresStorage({ pool: testPool(server, schema, { max: 4 }), schema: null });
        await storage.migrate();
        return storage;
      },
      async rows(sql) {
        return (await reader.query(sql)).rows as Record<string, unknown>[];
      },
      async dispose() {
        await reader.end();
      },
    };
  },
  close: closePostgresTestServer,
});
