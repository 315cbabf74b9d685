import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { renewalCancelInFlightSuite } from './renewal-cancel-in-flight.suite.js';

afterAll(closePostgresTestServer);
renewalCancelInFlightSuite(postgresHarness());
