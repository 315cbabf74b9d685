import { memoryHarness } from '../support/storages.js';
import { couponChangeScenarios } from './coupon-changes.suite.js';

couponChangeScenarios(memoryHarness);
