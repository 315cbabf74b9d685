import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { webhooksSuite } from './webhooks.suite.js';

afterAll(closePostgresTestServer);
webhooksSuite(postgresHarness());
