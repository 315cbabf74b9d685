import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { couponScenarios } from './coupons.suite.js';

afterAll(closePostgresTestServer);
couponScenarios(postgresHarness());
