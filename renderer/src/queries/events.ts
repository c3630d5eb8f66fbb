/** A stored event as a deep link opens it: read from the task's event history (4.11), never changed. */
import { queryOptions } from '@tanstack/react-query';
import { type EventItem, taskEvents } from '../api';
import type { Transport } from '../transport';

export const eventKeys = {
  one: (taskId: string, seq: number) => ['event', taskId, seq] as const,
};

export const eventQuery = (transport: Transport, taskId: string, seq: number) =>
  queryOptions({
    queryKey: eventKeys.one(taskId, seq),
    queryFn: async (): Promise<EventItem> => {
      const page = await taskEvents(transport, taskId, { after_seq: seq - 1, limit: 1, with_body: true });
      const item = page.items.find((candidate) => candidate.seq === seq);
      if (!item?.body) throw new Error(`task ${taskId} has no stored event #${seq}`);
      return item;
    },
    // A stored event's body does not change.
    staleTime: Number.POSITIVE_INFINITY,
  });
