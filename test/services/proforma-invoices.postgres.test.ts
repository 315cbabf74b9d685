import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { proformaInvoicesSuite } from './proforma-invoices.suite.js';

afterAll(closePostgresTestServer);
proformaInvoicesSuite(postgresHarness());
