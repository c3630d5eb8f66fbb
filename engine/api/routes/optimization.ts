import { Type } from '@sinclair/typebox';
import type { Accounts } from '../../auth/accounts';
import type { ErrorKind } from '../../contract/errors';
import { OptimizationView, SampleJudgement, SamplePage, SampleView } from '../../optimization/schema';
import type { Optimizations } from '../../optimization/service';
import type { TaskRegistry } from '../../tasks/registry';
import { holdToken, tokenEnded } from '../authenticate';
import { Envelope, ok } from '../envelope';
import { LIVE_TASK } from '../openapi';
import type { RoutePlugin } from '../route-plugin';
import {
  ExportQuery,
  OptimizationBody,
  OptimizationParams,
  SampleImageQuery,
  SampleListQuery,
  SampleParams,
  TaskParams,
} from '../schemas';
import { checkAppsOfTask } from './media';

const RUN: ErrorKind[] = ['TASK_NOT_FOUND', 'OPTIMIZATION_NOT_FOUND'];
const SAMPLE: ErrorKind[] = [...RUN, 'SAMPLE_NOT_FOUND'];

/** 4.13 effect optimization, and the sample endpoints the console reviews a run with (extensions). */
/** A link to a run's export or a sample's image opens that run's dataset alone. */
const runDataset = (params: Record<string, string>) => [
  'optimization',
  params.task_id,
  params.optimization_id,
];

export const optimizationRoutes: RoutePlugin<{
  accounts: Pick<Accounts, 'hold'>;
  optimizations: Optimizations;
  tasks: Pick<TaskRegistry, 'liveTask'>;
}> = async (app, { accounts, optimizations, tasks }) => {
  app.post(
    '/api/task/:task_id/optimization',
    {
      config: { ownerBound: true, refusals: [...LIVE_TASK, 'OPTIMIZATION_RUNNING'] },
      schema: {
        tags: ['optimization'],
        summary:
          '4.13 Apply for effect optimization: collect hard samples of the apps for `duration` seconds',
        params: TaskParams,
        body: OptimizationBody,
        response: { 200: Envelope(Type.Object({ optimization_id: Type.String() })) },
      },
    },
    async (request) => {
      const task = tasks.liveTask(request.params.task_id, 'video');
      checkAppsOfTask(task, request.body.app_ids);
      return ok({ optimization_id: optimizations.start(task.task_id, request.body) });
    },
  );

  app.get(
    '/api/task/:task_id/optimization/:optimization_id',
    {
      config: { ownerBound: true, refusals: RUN },
      schema: {
        tags: ['optimization'],
        summary: '4.13 Optimization status, sample counts and proposed thresholds',
        params: OptimizationParams,
        response: { 200: Envelope(OptimizationView) },
      },
    },
    async (request) => ok(optimizations.view(request.params.task_id, request.params.optimization_id)),
  );

  app.get(
    '/api/task/:task_id/optimization/:optimization_id/export',
    {
      config: { ownerBound: 'http', linkScope: runDataset, answers: ['application/zip'], refusals: RUN },
      schema: {
        tags: ['optimization'],
        summary:
          '4.13 Download the collected dataset (zip: COCO annotations.json, images/, YOLO labels/ and data.yaml); token in Authorization, or a link token (POST /api/auth/link) in ?token=',
        params: OptimizationParams,
        querystring: ExportQuery,
      },
    },
    async (request, reply) => {
      const { task_id, optimization_id } = request.params;
      const zip = optimizations.export(task_id, optimization_id);
      // A large dataset streams for long: it stops when its token is revoked or expires.
      const release = holdToken(accounts, request, () => reply.raw.destroy());
      if (!release) {
        zip.destroy();
        throw tokenEnded();
      }
      reply.raw.once('close', release);
      return reply
        .header('content-type', 'application/zip')
        .header('content-disposition', `attachment; filename="optimization-${optimization_id}.zip"`)
        .send(zip);
    },
  );

  app.get(
    '/api/task/:task_id/optimizations',
    {
      config: { ownerBound: true, refusals: ['TASK_NOT_FOUND'] },
      schema: {
        tags: ['optimization'],
        summary: "Extension: the task's optimization runs, oldest first",
        params: TaskParams,
        response: { 200: Envelope(Type.Array(OptimizationView)) },
      },
    },
    async (request) => ok(optimizations.list(request.params.task_id)),
  );

  app.get(
    '/api/task/:task_id/optimization/:optimization_id/samples',
    {
      config: { ownerBound: true, refusals: RUN },
      schema: {
        tags: ['optimization'],
        summary: "Extension: a run's samples in sample_id order, paged by sample_id",
        params: OptimizationParams,
        querystring: SampleListQuery,
        response: { 200: Envelope(SamplePage) },
      },
    },
    async (request) =>
      ok(optimizations.samples(request.params.task_id, request.params.optimization_id, request.query)),
  );

  app.put(
    '/api/task/:task_id/optimization/:optimization_id/samples/:sample_id',
    {
      config: { ownerBound: true, refusals: SAMPLE },
      schema: {
        tags: ['optimization'],
        summary:
          "Extension: the operator's judgement of a sample: its hard detections at once (verdict), one by one (detections), and the objects the model missed",
        params: SampleParams,
        body: SampleJudgement,
        response: { 200: Envelope(SampleView) },
      },
    },
    async (request) => {
      const { task_id, optimization_id, sample_id } = request.params;
      return ok(optimizations.judge(task_id, optimization_id, Number(sample_id), request.body));
    },
  );

  app.get(
    '/api/task/:task_id/optimization/:optimization_id/samples/:sample_id/image',
    {
      config: { ownerBound: 'http', linkScope: runDataset, answers: ['image/jpeg'], refusals: SAMPLE },
      schema: {
        tags: ['optimization'],
        summary:
          "Extension: a sample's source frame as JPEG (?thumb=true: 320 px wide); token in Authorization, or a link token (POST /api/auth/link) in ?token=",
        params: SampleParams,
        querystring: SampleImageQuery,
      },
    },
    async (request, reply) => {
      const { task_id, optimization_id, sample_id } = request.params;
      const jpeg = await optimizations.image(
        task_id,
        optimization_id,
        Number(sample_id),
        request.query.thumb ?? false,
      );
      // A sample's image never changes.
      return reply
        .header('content-type', 'image/jpeg')
        .header('cache-control', 'private, max-age=86400')
        .send(jpeg);
    },
  );
};
