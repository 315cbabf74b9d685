import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { subscriptionAdminSuite } from './subscription-admin.suite.js';

afterAll(closePostgresTestServer);
subscriptionAdminSuite(postgresHarness());
