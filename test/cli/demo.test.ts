import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('npm run demo', () => {
  it('shows the price change it announces: the existing subscriber keeps v1, a new one pays v2', () => {
    const run = spawnSync(process.execPath, [join(root, 'node_modules/tsx/dist/cli.mjs'), 'examples/demo/main.ts'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const out = run.stdout;
    expect(out).toContain('price change: product pro v2 is 39.00 per month for new subscribers');
    expect(out).toContain('Ada is on v1 at 29.00');
    expect(out).toContain('Grace is on v2 at 39.00');
    // Each ledger renews at its own version's price, four times after the signup.
    const [ada = '', grace = ''] = out.split('\nledger of subscription ').slice(1);
    expect(ada.match(/charge {5}29\.00/g)).toHaveLength(5);
    expect(ada).not.toContain('39.00');
    expect(grace.match(/charge {5}39\.00/g)).toHaveLength(5);
  }, 90_000);
});
