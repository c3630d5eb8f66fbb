/** Colours of applications on canvases and charts: the rule's own, else a stable one from a palette. */

const PALETTE = ['#ff9f0a', '#30d158', '#0a84ff', '#ff375f', '#bf5af2', '#64d2ff', '#ffd60a', '#ac8e68'];

/** A colour picked by the app id, the same on every screen and every run. */
export function paletteColor(appId: string): string {
  let hash = 0;
  for (const char of appId) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) >>> 0;
  return PALETTE[hash % PALETTE.length] as string;
}

/** The area colour of an app's rule, else its first class's colour, else the palette's. */
export function appColor(appId: string, rule: unknown): string {
  const listed = (rule ?? {}) as {
    class_area?: { color?: string };
    classes?: Record<string, { color?: string }>;
  };
  const color = listed.class_area?.color ?? Object.values(listed.classes ?? {})[0]?.color;
  return color && /^#[0-9a-f]{6}$/i.test(color) ? color : paletteColor(appId);
}

/** A #rrggbb colour with an alpha, for canvas fills; the default app colour when it is not one. */
export function rgba(hex: string, alpha: number): string {
  const match = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!match) return `rgba(255, 204, 0, ${alpha})`;
  const [r, g, b] = match.slice(1).map((part) => Number.parseInt(part, 16));
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}
