import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { invoiceScenarios } from './invoices.suite.js';

afterAll(closePostgresTestServer);
invoiceScenarios(postgresHarness());
