import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const readme = readFileSync(`${root}/README.md`, 'utf8');
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
// Inside the checkout so that tsx resolves `billing-engine` through tsconfig paths.
const workDir = `${root}/.readme-blocks-${process.pid}`;

// The README's examples are part of the product: each block runs as printed, and every
// `// → value` comment must match the line the block prints at that point.
describe('README examples', () => {
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it('has examples to check', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(3);
  });

  blocks.forEach((code, index) => {
    it(`block ${index + 1} runs and prints what its comments say`, () => {
      mkdirSync(workDir, { recursive: true });
      const file = `${workDir}/block-${index + 1}.ts`;
      writeFileSync(file, code);
      const output = execFileSync(process.execPath, [`${root}/node_modules/tsx/dist/cli.mjs`, file], {
        cwd: root,
        encoding: 'utf8',
        timeout: 60_000,
      });
      const expected = [...code.matchAll(/\/\/ → (.*)$/gm)].map((m) => m[1]!.trim());
      expect(output.trim().split('\n').filter(Boolean)).toEqual(expected);
    }, 90_000);
  });
});
