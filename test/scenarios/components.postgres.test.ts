import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { componentScenarios } from './components.suite.js';

afterAll(closePostgresTestServer);
componentScenarios(postgresHarness());
