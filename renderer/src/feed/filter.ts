/**
 * The events screen's filter, kept for the tab (sessionStorage): leaving the screen or reloading the
 * page no longer resets it.
 */
import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';
import type { FeedFilter } from './model';

interface FeedFilterStore {
  filter: FeedFilter;
  set(change: Partial<FeedFilter>): void;
}

export const useFeedFilter = create<FeedFilterStore>()(
  persist(
    (set) => ({
      filter: {},
      set: (change) => set((state) => ({ filter: { ...state.filter, ...change } })),
    }),
    {
      name: 'vc.events.filter',
      storage: createJSONStorage(() => sessionStorage),
      partialize: (state) => ({ filter: state.filter }),
    },
  ),
);
