import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { lifecycleScenarios } from './lifecycle.suite.js';

afterAll(closePostgresTestServer);
lifecycleScenarios(postgresHarness());
