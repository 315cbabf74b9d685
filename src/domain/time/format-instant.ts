import { formatCivilDate, pad2 } from './civil-calendar.js';
import { assertInstant } from './instant.js';
import { assertTimeZone } from './time-zone.js';
import { wallClockFromMs, zoneOffsetAt } from './wall-clock.js';

/**
 * `instant` as the service writes timestamps in API responses: ISO 8601 local time in `zone` with
 * the zone's offset and no fraction, e.g. `2026-01-01T00:00:00-05:00`; UTC is written `+00:00`,
 * never `Z`. Milliseconds are dropped (truncated), so parsing the result gives the instant rounded
 * down to its second. Built from the exact zone offset rather than with `formatInTimeZone`, whose
 * clock fields go through the process's zone and come out an hour off for local times that do not
 * exist there.
 */
export function formatInstant(instant: Date, zone: string): string {
  const { local, offset } = localParts(instant, zone);
  return `${local.date}T${local.time}${formatOffset(offset, ':')}`;
}

/**
 * `instant` in the format of webhook payload timestamps (reference §3.1), local time in `zone`
 * with a colon-free offset: `2016-11-04 17:06:43 -0400`. The service writes webhooks in US Eastern
 * time; which zone to pass is the caller's (compatibility) choice.
 */
export function formatWebhookTimestamp(instant: Date, zone: string): string {
  const { local, offset } = localParts(instant, zone);
  return `${local.date} ${local.time} ${formatOffset(offset, '')}`;
}

function localParts(instant: Date, zone: string): { local: { date: string; time: string }; offset: number } {
  assertInstant(instant);
  assertTimeZone(zone);
  const ms = instant.getTime();
  const offset = zoneOffsetAt(ms, zone);
  const wall = wallClockFromMs(ms + offset);
  return {
    local: { date: formatCivilDate(wall), time: `${pad2(wall.hour)}:${pad2(wall.minute)}:${pad2(wall.second)}` },
    offset,
  };
}

// Offsets are whole minutes for every zone in modern use; the seconds of historical local mean
// time offsets (before ~1900) cannot be written in ISO 8601 and are dropped.
function formatOffset(offsetMs: number, separator: string): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const minutes = Math.trunc(Math.abs(offsetMs) / 60_000);
  return `${sign}${pad2(Math.floor(minutes / 60))}${separator}${pad2(minutes % 60)}`;
}
