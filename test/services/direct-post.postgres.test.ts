import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { directPostSuite } from './direct-post.suite.js';

afterAll(closePostgresTestServer);
directPostSuite(postgresHarness());
