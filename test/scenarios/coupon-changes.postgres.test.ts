import { afterAll } from 'vitest';
import { closePostgresTestServer, postgresHarness } from '../support/postgres.js';
import { couponChangeScenarios } from './coupon-changes.suite.js';

afterAll(closePostgresTestServer);
couponChangeScenarios(postgresHarness());
