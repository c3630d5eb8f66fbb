/**
 * Where the effect optimization screen stands: shown or not, and which task and run it reviews. It
 * is kept beside the session's screen (store.ts) so that the other screens need not know about it;
 * the header's navigation leaves it when another screen is chosen.
 */
import { create } from 'zustand';

export interface OptimizationNav {
  /** The optimization screen is shown in place of the session's screen. */
  active: boolean;
  taskId: string | null;
  /** null: the task's latest run. */
  runId: string | null;
  /** Shows the screen for a task (its latest run, or the one named). */
  open(taskId: string, runId?: string): void;
  /** Shows the screen as it was left. */
  show(): void;
  leave(): void;
  selectTask(taskId: string | null): void;
  selectRun(runId: string | null): void;
}

export const useOptimizationNav = create<OptimizationNav>()((set) => ({
  active: false,
  taskId: null,
  runId: null,
  open(taskId, runId) {
    set({ active: true, taskId, runId: runId ?? null });
  },
  show() {
    set({ active: true });
  },
  leave() {
    set({ active: false });
  },
  selectTask(taskId) {
    set({ taskId, runId: null });
  },
  selectRun(runId) {
    set({ runId });
  },
}));
