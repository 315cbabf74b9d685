import { invalid } from '../../errors.js';

// Intl construction costs tens of microseconds and every calendar helper checks its zone, so valid
// names are remembered (they are few: one per site). Names come from client input, so refused ones
// are not remembered and the set is capped (spelling variants such as 'utc' are each a name).
const known = new Set<string>();
const MAX_REMEMBERED = 1000;

/**
 * True when `zone` is an IANA time zone name the runtime knows (`America/New_York`, `UTC`,
 * `Etc/UTC`), as decided by `Intl.DateTimeFormat`. Offsets such as `+05:00` are refused even where a
 * newer runtime would accept them, because a site's zone must carry its daylight-saving rules.
 * Valid names are cached.
 */
export function isValidTimeZone(zone: unknown): zone is string {
  if (typeof zone !== 'string' || zone.length === 0) return false;
  if (known.has(zone)) return true;
  // Newer ICU versions accept bare offsets as zones; a fixed offset has no DST rules, so it is not a site zone.
  if (/^[+-]/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: zone });
  } catch {
    return false;
  }
  if (known.size < MAX_REMEMBERED) known.add(zone);
  return true;
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
