import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { advanceInvoiceSuite } from './advance-invoices.suite.js';

afterAll(closePostgresTestServer);
advanceInvoiceSuite(postgresHarness());
