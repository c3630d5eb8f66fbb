/** A camera timeline's day and where an item's mark sits on it, pure. */

/** The narrowest a mark is drawn (% of the day), so that a one-alarm item can be seen and clicked. */
export const MIN_MARK_PERCENT = 0.25;

/** The browser's local day holding `at`: [since, until) in ms since the epoch. */
export function dayOf(at: number): { since: number; until: number } {
  const start = new Date(at);
  start.setHours(0, 0, 0, 0);
  const end = new Date(start);
  end.setDate(end.getDate() + 1);
  return { since: start.getTime(), until: end.getTime() };
}

/** An item's mark as left and width in % of the day, clipped to it. */
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
