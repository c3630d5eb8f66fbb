/**
 * How the console names a task everywhere: the operator's name for it (the `name` extension), else
 * the first characters of its id. Screens that know only a task id look it up in the task list.
 */
import { useQuery } from '@tanstack/react-query';
import type { Task } from '../api';
import { useTransport } from '../context';
import { tasksQuery } from '../queries/tasks';

type Named = Pick<Task, 'task_id'> & { name?: string };

export function taskTitle(task: Named): string {
  return task.name?.trim() ? task.name : task.task_id.slice(0, 8);
}

/** A task id's title from the cached task list (its short id until the list is there). */
export function useTaskTitle(): (taskId: string) => string {
  const { data: tasks } = useQuery(tasksQuery(useTransport()));
  return (taskId) => {
    const task = tasks?.find((candidate) => candidate.task_id === taskId);
    return taskTitle(task ?? { task_id: taskId });
  };
}
