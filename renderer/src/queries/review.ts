/** Review items as the console caches them: one page list per filter, an item's detail, a camera's day. */
import { infiniteQueryOptions, mutationOptions, type QueryClient, queryOptions } from '@tanstack/react-query';
import {
  getReviewItem,
  type IgnoreKind,
  ignoreItem,
  listReviewItems,
  type ReviewItemPage,
  type ReviewItemQuery,
  reviewItems,
  reviewTimeline,
} from '../api';
import type { Transport } from '../transport';

export const ITEMS_PAGE = 50;
/** While an item's clip is being cut, its detail is read again this often. */
export const PENDING_CLIP_REFRESH_MS = 1_000;

export const reviewKeys = {
  all: ['review'] as const,
  lists: ['review', 'list'] as const,
  list: (query: ReviewItemQuery) => ['review', 'list', query] as const,
  item: (itemId: string) => ['review', 'item', itemId] as const,
  timelines: ['review', 'timeline'] as const,
  timeline: (taskId: string, since: number, until: number) =>
    ['review', 'timeline', taskId, since, until] as const,
};

/** Pages newest first, not refetched on a timer (new items would move the rows under the reader). */
export const reviewItemsQuery = (transport: Transport, query: ReviewItemQuery) =>
  infiniteQueryOptions({
    queryKey: reviewKeys.list(query),
    initialPageParam: undefined as number | undefined,
    queryFn: ({ pageParam, signal }) =>
      listReviewItems(transport, { ...query, before: pageParam, limit: ITEMS_PAGE }, signal),
    getNextPageParam: (page) => page.next_before ?? undefined,
    staleTime: Number.POSITIVE_INFINITY,
  });

export const reviewItemQuery = (transport: Transport, itemId: string) =>
  queryOptions({
    queryKey: reviewKeys.item(itemId),
    queryFn: ({ signal }) => getReviewItem(transport, itemId, signal),
    refetchInterval: (query) =>
      query.state.data?.clip?.state === 'pending' ? PENDING_CLIP_REFRESH_MS : false,
  });

export const timelineQuery = (transport: Transport, taskId: string, since: number, until: number) =>
  queryOptions({
    queryKey: reviewKeys.timeline(taskId, since, until),
    queryFn: ({ signal }) => reviewTimeline(transport, { task_id: taskId, since, until }, signal),
  });

type Target = { itemIds: string[] } | { filter: ReviewItemQuery };

/**
 * Marks items reviewed (or not). Named items are patched in the cached pages, so no row moves; "all
 * shown" marks what the engine counts at that moment, so the pages are read again.
 */
export const reviewItemsMutation = (transport: Transport, client: QueryClient) =>
  mutationOptions({
    mutationFn: ({ target, reviewed }: { target: Target; reviewed: boolean }) =>
      reviewItems(transport, target, reviewed),
    onSuccess: (_updated, { target, reviewed }) => {
      void client.invalidateQueries({ queryKey: reviewKeys.timelines });
      if ('filter' in target) {
        void client.invalidateQueries({ queryKey: reviewKeys.all });
        return;
      }
      const at = reviewed ? Date.now() : null;
      const ids = new Set(target.itemIds);
      client.setQueriesData<{ pages: ReviewItemPage[] }>(
        { queryKey: reviewKeys.lists },
        (data) =>
          data && {
            ...data,
            pages: data.pages.map((page) => ({
              ...page,
              items: page.items.map((item) => (ids.has(item.item_id) ? { ...item, reviewed_at: at } : item)),
            })),
          },
      );
      for (const id of ids) void client.invalidateQueries({ queryKey: reviewKeys.item(id) });
    },
  });

/** "Ignore this object here": `apply: false` asks for the proposal, `apply: true` applies it. */
export const ignoreMutation = (transport: Transport) =>
  mutationOptions({
    mutationFn: ({ itemId, kind, apply }: { itemId: string; kind: IgnoreKind; apply: boolean }) =>
      ignoreItem(transport, itemId, kind, apply),
  });
