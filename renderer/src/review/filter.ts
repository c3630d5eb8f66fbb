/**
 * What the operator narrows alarm review to, kept for the tab (sessionStorage) so that leaving the
 * screen or reloading the page finds the same alarms. Empty strings mean "any".
 */
import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';
import type { ReviewItemQuery } from '../api';

export interface AlarmFilter {
  taskId: string;
  appId: string;
  classId: string;
  /** 'all', or only alarms not yet reviewed, or only reviewed ones. */
  reviewed: 'all' | 'no' | 'yes';
  /** 0..1; 0 is any score. */
  minScore: number;
  /** datetime-local values ('' for none), read in the browser's time zone. */
  since: string;
  until: string;
}

export const EMPTY_FILTER: AlarmFilter = {
  taskId: '',
  appId: '',
  classId: '',
  reviewed: 'no',
  minScore: 0,
  since: '',
  until: '',
};

const time = (local: string) => {
  const ms = local ? new Date(local).getTime() : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
};

/** The filter as GET /api/review/items takes it (absent fields are "any"). */
export function toQuery(filter: AlarmFilter): ReviewItemQuery {
  return {
    task_id: filter.taskId || undefined,
    app_id: filter.appId || undefined,
    class_id: filter.classId || undefined,
    reviewed: filter.reviewed === 'all' ? undefined : filter.reviewed === 'yes',
    min_score: filter.minScore > 0 ? filter.minScore : undefined,
    since: time(filter.since),
    until: time(filter.until),
  };
}

interface FilterStore {
  filter: AlarmFilter;
  set(change: Partial<AlarmFilter>): void;
  reset(): void;
}

export const useAlarmFilter = create<FilterStore>()(
  persist(
    (set) => ({
      filter: EMPTY_FILTER,
      set: (change) => set((state) => ({ filter: { ...state.filter, ...change } })),
      reset: () => set({ filter: EMPTY_FILTER }),
    }),
    {
      name: 'vc.alarms.filter',
      storage: createJSONStorage(() => sessionStorage),
      partialize: (state) => ({ filter: state.filter }),
      merge: (stored, current) => ({
        ...current,
        filter: {
          ...EMPTY_FILTER,
          ...((stored as { filter?: Partial<AlarmFilter> } | undefined)?.filter ?? {}),
        },
      }),
    },
  ),
);
