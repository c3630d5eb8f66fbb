/** A camera timeline's window, where an item's mark sits in it and on which lane, pure. */

/** The narrowest a mark is drawn (% of the window), so that a one-alarm item can be seen and clicked. */
export const MIN_MARK_PERCENT = 0.25;
/** Rows marks are stacked on where they overlap; a mark past the last shares it. */
export const MARK_LANES = 4;

/** The windows a timeline shows: a day, an hour, ten minutes (ms). */
export const SPANS = { day: 86_400_000, hour: 3_600_000, tenMinutes: 600_000 } as const;
export type Span = keyof typeof SPANS;

/** The browser's local day holding `at`: [since, until) in ms since the epoch. */
export function dayOf(at: number): { since: number; until: number } {
  const start = new Date(at);
  start.setHours(0, 0, 0, 0);
  const end = new Date(start);
  end.setDate(end.getDate() + 1);
  return { since: start.getTime(), until: end.getTime() };
}

/**
 * The window of a span holding `at`: the local day, or the hour or ten minutes of the local clock
 * (whole minutes from the day's start, so a time zone's odd offset does not shift them).
 */
export function windowOf(at: number, span: Span): { since: number; until: number } {
  const day = dayOf(at);
  if (span === 'day') return day;
  const size = SPANS[span];
  const since = day.since + Math.floor((at - day.since) / size) * size;
  return { since, until: Math.min(day.until, since + size) };
}

/** An item's mark as left and width in % of the window, clipped to it. */
export function markSpan(
  item: { start: number; end: number },
  since: number,
  until: number,
): { left: number; width: number } {
  const span = until - since;
  const from = Math.max(since, Math.min(until, item.start));
  const to = Math.max(from, Math.min(until, item.end));
  const left = ((from - since) / span) * 100;
  const width = Math.max(MIN_MARK_PERCENT, ((to - from) / span) * 100);
  return { left: Math.min(left, 100 - MIN_MARK_PERCENT), width };
}

/**
 * The lane of each mark (given oldest first): the first whose last mark ends before this one
 * starts, as drawn (at least MIN_MARK_PERCENT wide), so that overlapping items stay apart.
 */
export function lanesOf(spans: ReadonlyArray<{ left: number; width: number }>): number[] {
  const ends: number[] = [];
  return spans.map(({ left, width }) => {
    let lane = ends.findIndex((end) => end <= left);
    if (lane < 0) lane = ends.length < MARK_LANES ? ends.length : MARK_LANES - 1;
    ends[lane] = Math.max(ends[lane] ?? 0, left + width);
    return lane;
  });
}
