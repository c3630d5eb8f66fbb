/**
 * The screens that show one task (live, optimization, images) are reopened as they were left: the
 * header links to the path last seen there. The others open plain (a task's editor or an event's
 * dialog is not reopened by the header).
 */
import { create } from 'zustand';
import { type Screen, screenOf } from './routes';

const KEPT: ReadonlySet<Screen> = new Set(['live', 'optimization', 'images']);

interface Visited {
  last: Partial<Record<Screen, string>>;
  visit(path: string): void;
}

export const useVisited = create<Visited>()((set) => ({
  last: {},
  visit(path) {
    const screen = screenOf(path);
    if (screen && KEPT.has(screen)) set((state) => ({ last: { ...state.last, [screen]: path } }));
  },
}));

/** Where the header's link to a screen goes. */
export function headerPath(screen: Screen, last: Visited['last']): string {
  return last[screen] ?? `/${screen}`;
}
