import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { billingScenarios } from './billing.suite.js';

afterAll(closePostgresTestServer);
billingScenarios(postgresHarness());
