/**
 * The public surface, name by name: the exports of the root and of every subpath, each marked
 * `value` or `type` (and `undocumented` when its declaration has no doc comment). Adding,
 * removing or retyping an export fails here until the snapshot is updated on purpose
 * (`npx vitest run test/package/export-snapshot.test.ts -u`), so the surface never grows by accident.
 */
import { describe, expect, it } from 'vitest';
import { exportedNames, PUBLIC_ENTRIES } from './export-names.js';

describe('public exports', () => {
  const names = exportedNames();
  const lines = (subpath: string) =>
    (names[subpath] ?? []).map(({ name, kind, documented }) => `${kind} ${name}${documented ? '' : ' (undocumented)'}`);

  for (const subpath of Object.keys(PUBLIC_ENTRIES)) {
    it(`${subpath} exports exactly the recorded names`, () => {
      expect(lines(subpath).length).toBeGreaterThan(0);
      expect(lines(subpath)).toMatchSnapshot();
    });
  }

  it('keeps the wire format and the HTTP binding out of the root', () => {
    const root = new Set((names['billing-engine'] ?? []).map((entry) => entry.name));
    for (const subpath of ['billing-engine/chargify', 'billing-engine/http']) {
      const shared = (names[subpath] ?? []).map((entry) => entry.name).filter((name) => root.has(name));
      expect(shared, `${subpath} names also in the root`).toEqual([]);
    }
  });
});
