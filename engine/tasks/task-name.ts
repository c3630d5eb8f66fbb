/**
 * What a task is called where operators see it. The caller may name it (the `name` extension);
 * otherwise it is known by its device id, else by where its pictures come from: the host and the
 * last part of the path of its source (never the credentials or the query), or its mode.
 */
import type { TaskMode } from './schema';

/** The longest name kept; a given name is refused beyond it, a made-up one shortened. */
export const MAX_TASK_NAME = 64;

const shorten = (text: string) =>
  text.length > MAX_TASK_NAME ? `${text.slice(0, MAX_TASK_NAME - 1)}…` : text;

/** A given name as stored: trimmed, inner runs of white space made one space. */
export function normaliseTaskName(name: string): string {
  return name.trim().replace(/\s+/g, ' ');
}

function sourceName(videoUrl: string): string | null {
  if (videoUrl === '') return null;
  try {
    const url = new URL(videoUrl);
    const last = url.pathname
      .split('/')
      .filter((part) => part !== '')
      .at(-1);
    if (url.protocol === 'file:') return last ? decodeURIComponent(last) : null;
    return last ? `${url.hostname}/${decodeURIComponent(last)}` : url.hostname || null;
  } catch {
    // An absolute path, as the contract allows for files.
    return (
      videoUrl
        .split(/[\\/]/)
        .filter((part) => part !== '')
        .at(-1) ?? null
    );
  }
}

/** The name a task is shown with: the given one, else one made from what it is. */
export function taskName(task: {
  name: string;
  device_id: string;
  video_url: string;
  mode: TaskMode;
}): string {
  if (task.name !== '') return task.name;
  if (task.device_id.trim() !== '') return shorten(task.device_id.trim());
  const source = sourceName(task.video_url);
  return source ? shorten(source) : task.mode;
}
