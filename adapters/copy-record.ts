/**
 * The deep copy both storage families make of records they hand out: the memory adapter on every
 * read and write, the SQL adapters' per-transaction read cache on every cached answer.
 */

/**
 * Deep copy of a stored record, with the result `structuredClone` gives for record data: plain
 * objects and arrays are copied member by member, Dates become new Dates with the same time, and
 * primitives are kept. Records are exactly that (JSON-like trees with Dates), and a hand-written
 * walk over them is many times faster than `structuredClone`, which serialises and parses every
 * value; a copy is made on every read and write, so it is on the path of every request. Anything
 * else (a Map, a typed array, a class instance, a null-prototype object) is passed to
 * `structuredClone`, so it is copied exactly as before.
 */
export function copy<T>(value: T): T {
  if (typeof value === 'object') return value === null ? value : (copyObject(value) as T);
  // A function or a symbol cannot be cloned: structuredClone refuses it, as it always did.
  return typeof value === 'function' || typeof value === 'symbol' ? structuredClone(value) : value;
}

function copyObject(value: object): unknown {
  const prototype = Object.getPrototypeOf(value);
  if (prototype === Object.prototype) {
    // A spread copies the own properties at once into an object of the same shape (much faster
    // than adding them one by one); then only the nested objects are replaced by their copies.
    // An own `__proto__` key stays a plain property: the spread defines it, and the assignment
    // below then writes that own property rather than the prototype.
    const source = value as Record<string, unknown>;
    const out: Record<string, unknown> = { ...source };
    for (const key in source) {
      const member = source[key];
      if (typeof member === 'object') {
        if (member !== null && Object.hasOwn(source, key)) out[key] = copyObject(member);
      } else if ((typeof member === 'function' || typeof member === 'symbol') && Object.hasOwn(source, key)) {
        copy(member);
      }
    }
    return out;
  }
  if (prototype === Date.prototype) return new Date((value as Date).getTime());
  if (Array.isArray(value)) {
    const length = value.length;
    const out: unknown[] = new Array(length);
    // `in`: a hole stays a hole, as structuredClone keeps it.
    for (let i = 0; i < length; i++) if (i in value) out[i] = copy(value[i]);
    return out;
  }
  return structuredClone(value);
}
