import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { billingCoreScenarios } from './billing-core.suite.js';

afterAll(closePostgresTestServer);
billingCoreScenarios(postgresHarness());
