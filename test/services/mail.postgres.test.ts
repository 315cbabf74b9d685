import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { mailSuite } from './mail.suite.js';

afterAll(closePostgresTestServer);
mailSuite(postgresHarness());
