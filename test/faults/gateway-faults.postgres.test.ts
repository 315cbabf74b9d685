import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { gatewayFaultsSuite } from './gateway-faults.suite.js';

afterAll(closePostgresTestServer);
gatewayFaultsSuite(postgresHarness());
