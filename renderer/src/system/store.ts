/**
 * The system history for the session: kept outside the screen so that leaving the page and coming
 * back shows the minutes before, not an empty chart. Not persisted: a reload starts a new history.
 */
import { create } from 'zustand';
import type { SystemInfo } from '../../../engine/contract';
import type { TaskSummary } from '../api';
import { appendSample, type SystemSample, sampleOf } from './history';

interface SystemHistoryState {
  samples: SystemSample[];
  /** The engine's uptime at the last reading: the same answer read twice is recorded once. */
  lastUptimeS: number | null;
  record(system: SystemInfo, tasks: readonly TaskSummary[], at: number): void;
}

export const useSystemHistory = create<SystemHistoryState>((set) => ({
  samples: [],
  lastUptimeS: null,
  record: (system, tasks, at) =>
    set((state) =>
      system.uptime_s === state.lastUptimeS
        ? state
        : {
            lastUptimeS: system.uptime_s,
            samples: appendSample(state.samples, sampleOf(system, tasks, at, state.samples.at(-1))),
          },
    ),
}));
