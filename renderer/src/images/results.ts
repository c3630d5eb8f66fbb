/**
 * The Images screen's results: what the engine stored (each fired rule is an event of the task, so
 * results come back after leaving the screen or reloading) merged with this page's uploads, which
 * also know the images themselves (the "before" of a pair, an image on which nothing fired).
 */
import { queryOptions } from '@tanstack/react-query';
import { create } from 'zustand';
import { type EventItem, type ImageResult, taskEvents } from '../api';
import type { Transport } from '../transport';

type FiredRule = ImageResult['rules'][number];

/** Uploads kept per task on this page; the oldest go (their object URLs freed) beyond it. */
export const KEPT_UPLOADS = 50;
/** Stored events read back for the list (each carries its snapshots). */
export const STORED_EVENTS = 20;

export interface Upload {
  /** When the answer came (ms since the epoch). */
  at: number;
  names: string;
  result: ImageResult;
  /** Object URLs of the uploaded images. */
  after: string;
  before?: string;
}

export interface ResultEntry {
  key: string;
  imageId: number;
  /** When the image was analysed (the engine's timestamp) or its answer came. */
  at: number;
  frame: { width: number; height: number; id: number };
  rules: FiredRule[];
  /** From this page's uploads, when it sent the image. */
  names?: string;
  after?: string;
  before?: string;
}

interface UploadState {
  byTask: Record<string, Upload[]>;
  add(taskId: string, upload: Upload): void;
}

const free = (upload: Upload) => {
  URL.revokeObjectURL(upload.after);
  if (upload.before) URL.revokeObjectURL(upload.before);
};

/** This page's uploads: they outlive the screen (a module store), not the page. */
export const useUploads = create<UploadState>()((set) => ({
  byTask: {},
  add(taskId, upload) {
    set((state) => {
      const kept = [upload, ...(state.byTask[taskId] ?? [])];
      for (const dropped of kept.splice(KEPT_UPLOADS)) free(dropped);
      return { byTask: { ...state.byTask, [taskId]: kept } };
    });
  },
}));

/**
 * Newest first: each image the engine stored events of (one per app that fired, merged), with what
 * this page knows of it, and this page's uploads the engine stored nothing of (no rule fired, or not
 * read back yet). Events of one image share its image id and timestamp; image ids alone start again
 * when the engine restarts, so an upload takes the newest stored image of its id.
 */
export function mergeResults(stored: readonly EventItem[], uploads: readonly Upload[]): ResultEntry[] {
  const images = new Map<string, ResultEntry>();
  for (const item of stored) {
    const body = item.body;
    if (body?.event !== 'message') continue;
    const imageId = body.data.image_id ?? body.data.frame.id;
    const key = `${imageId}@${body.timestamp}`;
    const entry = images.get(key);
    if (entry) entry.rules.push(...body.data.rules);
    else
      images.set(key, {
        key,
        imageId,
        at: body.timestamp,
        frame: body.data.frame,
        rules: [...body.data.rules],
      });
  }
  const entries = [...images.values()].sort((a, b) => b.at - a.at);
  for (const upload of uploads) {
    const known = {
      names: upload.names,
      after: upload.after,
      ...(upload.before && { before: upload.before }),
    };
    const found = entries.find(
      (entry) => entry.imageId === upload.result.image_id && entry.names === undefined,
    );
    if (found) Object.assign(found, known);
    else
      entries.push({
        key: `upload-${upload.after}`,
        imageId: upload.result.image_id,
        at: upload.at,
        frame: upload.result.frame,
        rules: upload.result.rules,
        ...known,
      });
  }
  return entries.sort((a, b) => b.at - a.at);
}

/** The task's latest stored events with their bodies (two reads: where the end is, then the end). */
export async function recentEvents(transport: Transport, taskId: string, signal?: AbortSignal) {
  const head = await taskEvents(transport, taskId, { after_seq: 0, limit: 1 }, signal);
  if (head.last_seq === 0) return [];
  const after = Math.max(0, head.last_seq - STORED_EVENTS);
  return (
    await taskEvents(transport, taskId, { after_seq: after, limit: STORED_EVENTS, with_body: true }, signal)
  ).items;
}

export const imageResultsQuery = (transport: Transport, taskId: string) =>
  queryOptions({
    queryKey: ['image-results', taskId] as const,
    queryFn: ({ signal }) => recentEvents(transport, taskId, signal),
  });
