/**
 * Smoke test of `npm run bench`: the quick run with tiny sizes and a 300 ms time box exits 0 and
 * prints every section with at least one ratio line. Benchmarks are not tests: nothing here looks
 * at a figure or a duration, only at the report's shape.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const outDir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

const SECTIONS = [
  '1. Storage unit (issue 3)',
  '2. runDue renewals (issues 6 and 11)',
  '3. Direct-post signature verification (issue 11)',
  '4. HTTP (issue 11)',
  '5. Growth: runDue with a large book (issue 11)',
];

function runBench(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(root, 'node_modules', '.bin', 'tsx'), ['bench/run.ts'], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run bench (quick)', () => {
  it('exits 0 and prints every section with a ratio line', { timeout: 240_000 }, async () => {
    const resultsFile = join(outDir, 'latest.md');
    const { code, stdout, stderr } = await runBench({
      BENCH_QUICK: '1',
      BENCH_SUBSCRIPTIONS: '50',
      BENCH_TIME_BOX_MS: '300',
      BENCH_RUNDUE_MAX_SECONDS: '1',
      // Growth: 50 due against a book of 500 (and 20 against 500 on Postgres), one run each.
      BENCH_GROWTH_DUE: '50',
      BENCH_GROWTH_BOOK: '500',
      BENCH_GROWTH_PG_DUE: '20',
      BENCH_GROWTH_PG_BOOK: '500',
      BENCH_RESULTS_FILE: resultsFile,
    });
    expect(code, `stderr:\n${stderr}\nstdout:\n${stdout}`).toBe(0);
    // Split the output at the section headings and look for a ratio line in each section.
    const parts = stdout.split(/^== /m);
    for (const title of SECTIONS) {
      const part = parts.find((p) => p.startsWith(`${title} ==`));
      expect(part, `section "${title}" is missing`).toBeDefined();
      expect(part, `section "${title}" has no ratio line`).toMatch(/^ratio /m);
    }
    const written = readFileSync(resultsFile, 'utf8');
    for (const title of SECTIONS) expect(written).toContain(`## ${title}`);
  });
});
