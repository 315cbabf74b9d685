import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { subscriptionReferencesSuite } from './subscription-references.suite.js';

afterAll(closePostgresTestServer);
subscriptionReferencesSuite(postgresHarness());
