import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { webhookOutageSuite } from './webhook-outage.suite.js';

afterAll(closePostgresTestServer);
webhookOutageSuite(postgresHarness());
