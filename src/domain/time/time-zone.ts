import { invalid } from '../../errors.js';

// Intl construction costs tens of microseconds and every calendar helper checks its zone, so the
// answer for each name is remembered (names are few: one per site).
const validity = new Map<string, boolean>();

/**
 * True when `zone` is an IANA time zone name the runtime knows (`America/New_York`, `UTC`,
 * `Etc/UTC`), as decided by `Intl.DateTimeFormat`. Offsets such as `+05:00` are refused even where a
 * newer runtime would accept them, because a site's zone must carry its daylight-saving rules.
 * Results are cached per name.
 */
export function isValidTimeZone(zone: unknown): zone is string {
  if (typeof zone !== 'string' || zone.length === 0) return false;
  const known = validity.get(zone);
  if (known !== undefined) return known;
  // Newer ICU versions accept bare offsets as zones; a fixed offset has no DST rules, so it is not a site zone.
  let ok = !/^[+-]/.test(zone);
  if (ok) {
    try {
      new Intl.DateTimeFormat(undefined, { timeZone: zone });
    } catch {
      ok = false;
    }
  }
  validity.set(zone, ok);
  return ok;
}

/**
 * Throws a validation error (`Time zone: 'Mars/Base' is not a valid IANA time zone.`, attribute
 * `time_zone`) unless `zone` is a valid IANA time zone name (see {@link isValidTimeZone}). Every
 * zone-taking helper of the time core calls it, so a bad site setting fails loudly instead of
 * producing `NaN` instants.
 */
export function assertTimeZone(zone: unknown): asserts zone is string {
  if (!isValidTimeZone(zone)) {
    throw invalid(`Time zone: '${String(zone)}' is not a valid IANA time zone.`, 'time_zone');
  }
}
