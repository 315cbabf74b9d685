import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { previewLeftoversStartDateSuite } from './preview-leftovers-start-date.suite.js';

afterAll(closePostgresTestServer);
previewLeftoversStartDateSuite(postgresHarness());
