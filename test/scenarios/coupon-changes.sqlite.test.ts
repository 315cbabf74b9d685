import { sqliteHarness } from '../support/sqlite.js';
import { couponChangeScenarios } from './coupon-changes.suite.js';

couponChangeScenarios(sqliteHarness);
