import type { Task } from '../api';
import { useT } from '../store';
import { taskState } from '../tasks/status';

/** A task's state as a coloured badge with its words (the colour is never the only sign). */
export function StatusBadge({ task }: { task: Pick<Task, 'close_code' | 'status' | 'health'> }) {
  const t = useT();
  const state = taskState(task);
  return (
    <span className={`badge badge-${state.tone}`} data-tone={state.tone}>
      {t(state.message, state.params)}
    </span>
  );
}
