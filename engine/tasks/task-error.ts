import { DomainError } from '../domain-error';

/** Why the tasks domain refuses a request; engine/api/domain-errors.ts maps each kind to its code. */
export type TaskErrorKind =
  | 'task.invalid'
  | 'task.not_found'
  | 'task.closed'
  | 'task.not_closed'
  | 'task.wrong_mode'
  | 'task.license_expired'
  | 'task.not_change_detection_app'
  | 'task.change_detection_not_diff'
  | 'task.time_series_not_video'
  | 'task.image_too_soon';

/**
 * A refusal of the tasks domain, naming the request field at fault where there is one; `cause` is
 * what went wrong inside, for the engine log and never the answer.
 */
export const taskError = (kind: TaskErrorKind, message: string, field?: string, cause?: unknown) =>
  new DomainError<TaskErrorKind>(
    kind,
    message,
    field === undefined ? {} : { field },
    cause === undefined ? undefined : { cause },
  );
