import type { Storage } from 'billing-engine';
import { afterAll } from 'vitest';
import {
  closePostgresTestServer,
  ON_PGLITE,
  PGLITE_SKIP_REASON,
  POSTGRES_URL,
  postgresTestServer,
  schemaStorage,
} from '../support/postgres.js';
import { raceCases } from '../support/race-cases.js';

afterAll(closePostgresTestServer);

raceCases({
  name: 'postgres',
  ...(ON_PGLITE ? { skipReason: PGLITE_SKIP_REASON } : {}),
  async open() {
    const server = await postgresTestServer();
    const schema = await server.freshSchema();
    const opened: Storage[] = [];
    // Each storage has a pool of its own, as separate application instances would.
    const openOne = async () => {
      const { storage } = await schemaStorage(server, schema, { pool: { max: 5 } });
      opened.push(storage);
      return storage;
    };
    const seed = await openOne();
    return {
      seed,
      location: { dialect: 'postgres', url: POSTGRES_URL, schema },
      openStorages: (count) => Promise.all(Array.from({ length: count }, openOne)),
      async dispose() {
        for (const storage of opened) await storage.close();
      },
    };
  },
});
