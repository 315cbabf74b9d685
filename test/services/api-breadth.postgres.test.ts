import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { apiBreadthSuite } from './api-breadth.suite.js';

afterAll(closePostgresTestServer);
apiBreadthSuite(postgresHarness());
