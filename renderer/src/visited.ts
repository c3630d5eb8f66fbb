/**
 * The screens that show one task (live, optimization, images) are reopened as they were left: the
 * header links to the path last seen there, also after a reload (kept with the tab's session). The
 * others open plain (a task's editor or an event's dialog is not reopened by the header).
 */
import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';
import { type Screen, screenOf } from './routes';

const KEPT: ReadonlySet<Screen> = new Set(['live', 'optimization', 'images']);

interface Visited {
  last: Partial<Record<Screen, string>>;
  visit(path: string): void;
}

export const useVisited = create<Visited>()(
  persist(
    (set) => ({
      last: {},
      visit(path) {
        const screen = screenOf(path);
        if (screen && KEPT.has(screen)) set((state) => ({ last: { ...state.last, [screen]: path } }));
      },
    }),
    {
      name: 'vc.visited',
      storage: createJSONStorage(() => sessionStorage),
      partialize: (state) => ({ last: state.last }),
    },
  ),
);

/** Where the header's link to a screen goes. */
export function headerPath(screen: Screen, last: Visited['last']): string {
  return last[screen] ?? `/${screen}`;
}
