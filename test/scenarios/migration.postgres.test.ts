import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { migrationScenarios } from './migration.suite.js';

afterAll(closePostgresTestServer);
migrationScenarios(postgresHarness());
