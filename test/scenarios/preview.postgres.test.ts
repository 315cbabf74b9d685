import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { previewScenarios } from './preview.suite.js';

afterAll(closePostgresTestServer);
previewScenarios(postgresHarness());
