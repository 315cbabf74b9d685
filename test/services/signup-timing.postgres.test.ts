import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { signupTimingSuite } from './signup-timing.suite.js';

afterAll(closePostgresTestServer);
signupTimingSuite(postgresHarness());
