import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { awaitingSignupStartSuite } from './awaiting-signup-start.suite.js';

afterAll(closePostgresTestServer);
awaitingSignupStartSuite(postgresHarness());
