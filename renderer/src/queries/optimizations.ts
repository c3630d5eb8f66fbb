/** A task's optimization runs and a run's samples as the console caches them, and their writes. */
import { infiniteQueryOptions, mutationOptions, type QueryClient, queryOptions } from '@tanstack/react-query';
import {
  judgeSample,
  listOptimizations,
  listSamples,
  type OptimizationStart,
  type OptimizationView,
  type SampleJudgement,
  type SampleView,
  startOptimization,
  type Verdict,
} from '../api';
import { isCollecting } from '../optimization/run';
import type { Transport } from '../transport';

/** How often a collecting run's status is read again; finished runs are not polled. */
export const RUNS_REFRESH_MS = 2_000;
/** Samples per page of a run's sample list. */
export const SAMPLES_PAGE = 60;

export const optimizationKeys = {
  runs: (taskId: string) => ['optimizations', taskId] as const,
  samples: (taskId: string, optimizationId: string) =>
    ['optimization-samples', taskId, optimizationId] as const,
};

export const optimizationsQuery = (transport: Transport, taskId: string) =>
  queryOptions({
    queryKey: optimizationKeys.runs(taskId),
    queryFn: ({ signal }) => listOptimizations(transport, taskId, signal),
    refetchInterval: (query) => (query.state.data?.some(isCollecting) ? RUNS_REFRESH_MS : false),
  });

export interface SampleFilter {
  verdict: Verdict | '';
  appId: string;
}

export const samplesQuery = (
  transport: Transport,
  run: Pick<OptimizationView, 'task_id' | 'optimization_id'>,
  filter: SampleFilter,
) =>
  infiniteQueryOptions({
    queryKey: [...optimizationKeys.samples(run.task_id, run.optimization_id), filter.verdict, filter.appId],
    initialPageParam: 0,
    queryFn: ({ pageParam, signal }) =>
      listSamples(
        transport,
        run.task_id,
        run.optimization_id,
        {
          after_id: pageParam,
          limit: SAMPLES_PAGE,
          verdict: filter.verdict || undefined,
          app_id: filter.appId || undefined,
        },
        signal,
      ),
    getNextPageParam: (last) => last.next_after_id ?? undefined,
  });

export function invalidateRuns(client: QueryClient, taskId: string): Promise<void> {
  return client.invalidateQueries({ queryKey: optimizationKeys.runs(taskId) });
}

export const startOptimizationMutation = (transport: Transport, client: QueryClient, taskId: string) =>
  mutationOptions({
    mutationFn: (body: OptimizationStart) => startOptimization(transport, taskId, body),
    onSettled: () => invalidateRuns(client, taskId),
  });

/** A judgement changes the run's counts and proposals (the sample list is patched by the screen). */
export const judgeSampleMutation = (
  transport: Transport,
  client: QueryClient,
  run: Pick<OptimizationView, 'task_id' | 'optimization_id'>,
) =>
  mutationOptions({
    mutationFn: ({ sample, judgement }: { sample: SampleView; judgement: SampleJudgement }) =>
      judgeSample(transport, run.task_id, run.optimization_id, sample.sample_id, judgement),
    onSettled: () => invalidateRuns(client, run.task_id),
  });
