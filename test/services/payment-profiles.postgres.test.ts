import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { paymentProfilesSuite } from './payment-profiles.suite.js';

afterAll(closePostgresTestServer);
paymentProfilesSuite(postgresHarness());
