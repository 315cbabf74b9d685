import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { signupCurrencySuite } from './signup-currency.suite.js';

afterAll(closePostgresTestServer);
signupCurrencySuite(postgresHarness());
