// Runs the shipped conformance suite (`billing-engine/testing`) against the shipped SQLite adapter,
// as an adopter's app would, with a minimal runner; prints the counts and the first failures.
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { runStorageConformance } from 'billing-engine/testing';

const root = { name: '', children: [], tests: [], beforeEach: [], afterEach: [] };
let current = root;
const api = {
  describe(name, fn) {
    const group = { name, children: [], tests: [], beforeEach: [], afterEach: [] };
    current.children.push(group);
    const parent = current;
    current = group;
    fn();
    current = parent;
  },
  it: Object.assign((name, fn) => current.tests.push({ name, fn }), {
    skip: (name) => current.tests.push({ name, skip: true }),
  }),
  beforeEach: (fn) => current.beforeEach.push(fn),
  afterEach: (fn) => current.afterEach.push(fn),
};

runStorageConformance(api, {
  name: 'sqlite',
  capabilities: { dialect: 'sqlite', concurrentTransactions: false, multiProcess: false },
  async create() {
    const storage = createSqliteStorage({ database: ':memory:' });
    await storage.migrate();
    return storage;
  },
});

const result = { passed: 0, failed: 0, skipped: 0, failures: [] };
async function run(group, before, after, path) {
  const befores = [...before, ...group.beforeEach];
  const afters = [...group.afterEach, ...after];
  for (const test of group.tests) {
    const name = [...path, test.name].join(' > ');
    if (test.skip) {
      result.skipped++;
      continue;
    }
    try {
      for (const hook of befores) await hook();
      try {
        await test.fn();
      } finally {
        for (const hook of afters) await hook();
      }
      result.passed++;
    } catch (error) {
      result.failed++;
      if (result.failures.length < 5) result.failures.push(`${name}: ${error?.message ?? error}`);
    }
  }
  for (const child of group.children) await run(child, befores, afters, [...path, child.name]);
}
await run(root, [], [], []);
console.log(JSON.stringify(result));
