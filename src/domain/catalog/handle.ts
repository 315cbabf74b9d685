/**
 * Handles: lower-case slugs of letters, digits, hyphens and underscores. A generated handle comes
 * from the name; on collision a deterministic numeric suffix is added (`basic`, `basic-2`, ...).
 */
export const HANDLE_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;

/** The slug of a name: lower case, runs of other characters folded to one hyphen. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return slug === '' ? 'item' : slug;
}

/** The first of `base`, `base-2`, `base-3`, ... that `taken` says is free. */
export async function firstFreeHandle(base: string, taken: (handle: string) => Promise<boolean>): Promise<string> {
  if (!(await taken(base))) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!(await taken(candidate))) return candidate;
  }
}
