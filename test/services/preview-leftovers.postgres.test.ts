import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { previewLeftoversSuite } from './preview-leftovers.suite.js';

afterAll(closePostgresTestServer);
previewLeftoversSuite(postgresHarness());
