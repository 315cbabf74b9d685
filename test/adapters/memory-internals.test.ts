import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copy, Journal, MemoryTable } from '../../adapters/memory/memory-table.js';

/**
 * The memory adapter's own machinery, below the storage port the conformance suite checks: its
 * record copy (a hand-written stand-in for structuredClone) and its secondary indexes, which must
 * follow every change and every rollback.
 */
describe('memory adapter: copy', () => {
  it('gives what structuredClone gives, or refuses what it refuses', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withDate: true,
          withNullPrototype: true,
          withMap: true,
          withSet: true,
          withTypedArray: true,
          withSparseArray: true,
          withBigInt: true,
          withBoxedValues: true,
          withObjectString: true,
        }),
        (value) => {
          let copied: unknown;
          let cloned: unknown;
          let copyError: string | undefined;
          let cloneError: string | undefined;
          try {
            copied = copy(value);
          } catch (error) {
            copyError = (error as Error).name;
          }
          try {
            cloned = structuredClone(value);
          } catch (error) {
            cloneError = (error as Error).name;
          }
          expect(copyError).toBe(cloneError);
          // Node's isDeepStrictEqual calls two invalid Dates different (NaN !== NaN); vitest's strict
          // equality treats them as equal and still checks types, sparseness and prototypes, so it
          // judges whenever Node's check disagrees.
          if (!isDeepStrictEqual(copied, cloned)) expect(copied).toStrictEqual(cloned);
        },
      ),
      { numRuns: 3000 },
    );
    for (const value of [() => 1, { f: () => 1 }, [Symbol('s')]]) expect(() => copy(value)).toThrow();
    const invalid = { at: new Date(Number.NaN) };
    const copiedInvalid = copy(invalid);
    expect(copiedInvalid.at).toBeInstanceOf(Date);
    expect(copiedInvalid.at).not.toBe(invalid.at);
    expect(Number.isNaN(copiedInvalid.at.getTime())).toBe(true);
  });

  it('shares nothing mutable with the original, and keeps an own __proto__ key a key', () => {
    const original = {
      id: 1,
      at: new Date(5),
      data: JSON.parse('{"__proto__":{"admin":true},"list":[{"at":"x"}]}') as Record<string, unknown>,
      nested: { when: new Date(7), tags: ['a'] },
    };
    const copied = copy(original);
    expect(copied).toEqual(original);
    copied.at.setTime(0);
    copied.nested.when.setTime(0);
    copied.nested.tags.push('b');
    (copied.data.list as unknown[]).push(1);
    expect(original.at.getTime()).toBe(5);
    expect(original.nested.when.getTime()).toBe(7);
    expect(original.nested.tags).toEqual(['a']);
    expect(original.data.list).toEqual([{ at: 'x' }]);
    expect(Object.getPrototypeOf(copied.data)).toBe(Object.prototype);
    expect(Object.keys(copied.data)).toEqual(['__proto__', 'list']);
    expect((copied.data as { admin?: boolean }).admin).toBeUndefined();
  });
});

interface Row {
  readonly id: number;
  readonly siteId: number;
  readonly key: string;
}

describe('memory adapter: secondary indexes', () => {
  const keyed = () => {
    const table = new MemoryTable<Row>();
    const index = table.index((row) => `${row.siteId}\u0000${row.key}`);
    const lookup = (siteId: number, key: string) =>
      table.filterIndexed(index, `${siteId}\u0000${key}`, (row) => row.siteId === siteId && row.key === key);
    return { table, index, lookup };
  };

  it('follows inserts, replacements and deletes', () => {
    const { table, lookup } = keyed();
    const journal = new Journal();
    table.insert(journal, { id: table.nextId(), siteId: 1, key: 'a' });
    table.insert(journal, { id: table.nextId(), siteId: 1, key: 'a' });
    table.insert(journal, { id: table.nextId(), siteId: 2, key: 'a' });
    expect(lookup(1, 'a').map((r) => r.id)).toEqual([1, 2]);
    table.replace(journal, { id: 1, siteId: 1, key: 'b' });
    expect(lookup(1, 'a').map((r) => r.id)).toEqual([2]);
    expect(lookup(1, 'b').map((r) => r.id)).toEqual([1]);
    table.delete(journal, 2);
    expect(lookup(1, 'a')).toEqual([]);
    expect(lookup(2, 'a').map((r) => r.id)).toEqual([3]);
  });

  it('follows a rollback of every kind of change, in id order', () => {
    const { table, index, lookup } = keyed();
    const committed = new Journal();
    for (let i = 0; i < 3; i++) table.insert(committed, { id: table.nextId(), siteId: 1, key: 'a' });
    const journal = new Journal();
    table.insert(journal, { id: table.nextId(), siteId: 1, key: 'a' });
    table.replace(journal, { id: 2, siteId: 1, key: 'b' });
    table.delete(journal, 1);
    table.deleteWhere(journal, (row) => row.id === 3);
    expect(lookup(1, 'a').map((r) => r.id)).toEqual([4]);
    journal.rollback();
    expect(lookup(1, 'a').map((r) => r.id)).toEqual([1, 2, 3]);
    expect(lookup(1, 'b')).toEqual([]);
    expect(table.countIndexed(index, '1\u0000a', () => true)).toBe(3);
    expect(table.findIndexed(index, '1\u0000a', (row) => row.id > 1)?.id).toBe(2);
  });

  it('is built over the rows already there and hands out copies', () => {
    const table = new MemoryTable<Row>();
    table.insert(new Journal(), { id: table.nextId(), siteId: 1, key: 'a' });
    const index = table.index((row) => row.key);
    const [found] = table.filterIndexed(index, 'a', () => true);
    expect(found).toEqual({ id: 1, siteId: 1, key: 'a' });
    expect(found).not.toBe(table.peek(1));
  });
});

describe('memory adapter: scans after a rollback', () => {
  it('keep id order when rolled-back deletes put rows back', () => {
    const table = new MemoryTable<Row>();
    const committed = new Journal();
    for (let i = 0; i < 5; i++) table.insert(committed, { id: table.nextId(), siteId: 1, key: 'a' });
    const journal = new Journal();
    table.delete(journal, 2);
    table.deleteWhere(journal, (row) => row.id === 4);
    journal.rollback();
    const all = () => true;
    expect(table.filter(all).map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
    expect([...table.scan()].map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
    // A page read after an id (as the outbox reads its events) finds the row that came back.
    expect(table.find((row) => row.id > 1)?.id).toBe(2);
  });
});
