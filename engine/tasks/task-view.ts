import type { PipelineTask } from '../pipeline/task-pipeline';
import type { FrameSize } from '../vision/types';
import { TASK_GPU_DEFAULT, TASK_PRIORITY } from './limits';
import {
  type AppConfig,
  DEFAULT_OSD,
  type Osd,
  type RuleOverrides,
  type StartTaskBody,
  type TaskSummary,
} from './schema';
import { taskName } from './task-name';
import type { ListedRow, TaskRow } from './task-repository';

// A stored task row as the analysis and the listing see it.

/** The rate a video task is analysed at: its own, else the engine's. */
export function analysisFpsOf(row: Pick<TaskRow, 'analysis_fps'>, engineFps: number): number {
  return row.analysis_fps ?? engineFps;
}

/** What the analysis needs of a task row; engineFps is the engine's analysis rate. */
export function pipelineTask(row: TaskRow, engineFps: number): PipelineTask {
  return {
    task_id: row.task_id,
    zapk_id: row.zapk_id,
    app_ids: JSON.parse(row.app_ids) as string[],
    app_configs: areasOf(row),
    rule_overrides: overridesOf(row),
    osd: { ...DEFAULT_OSD, ...(JSON.parse(row.osd) as Osd) },
    business_id: row.business_id,
    report_url: row.report_url,
    report_secret: row.report_secret || undefined,
    polygon_frame: polygonFrameOf(row),
    analysis_fps: analysisFpsOf(row, engineFps),
    persistent: row.persistent === 1,
    motion_gate: gateOf(row),
    gate_regions: gateRegionsOf(row),
  };
}

/** Whether the motion gate is on: a row shared by an engine before it (cluster mode) has it on, the default. */
export const gateOf = (row: Partial<Pick<TaskRow, 'motion_gate'>>): boolean => row.motion_gate !== 0;

/** Whether the motion gate detects on crops (motion_gate 2). */
export const gateRegionsOf = (row: Partial<Pick<TaskRow, 'motion_gate'>>): boolean => row.motion_gate === 2;

/** The frame size a task's polygons were drawn on, when known. */
export function polygonFrameOf(row: TaskRow): FrameSize | null {
  return row.polygon_width && row.polygon_height
    ? { width: row.polygon_width, height: row.polygon_height }
    : null;
}

/** The row as the listing shows it, before its health is added; engineFps is the engine's analysis rate. */
export function summaryOf(row: ListedRow, engineFps: number): Omit<TaskSummary, 'health'> {
  return {
    task_id: row.task_id,
    name: taskName(row),
    mode: row.mode,
    analysis_fps: row.mode === 'video' ? analysisFpsOf(row, engineFps) : null,
    priority: row.priority ?? TASK_PRIORITY.default,
    persistent: row.persistent === 1,
    motion_gate: row.mode === 'video' && gateOf(row),
    gate_regions: row.mode === 'video' && gateRegionsOf(row),
    gpu: row.gpu ?? TASK_GPU_DEFAULT,
    zapk_id: row.zapk_id,
    app_ids: JSON.parse(row.app_ids) as string[],
    device_id: row.device_id,
    business_id: row.business_id,
    video_url: row.video_url,
    analysis_url: row.analysis_url ?? null,
    report_url: row.report_url,
    osd: JSON.parse(row.osd) as Osd,
    close_code: row.close_code,
    dump: row.dump,
    status: row.status,
    rule_overrides: overridesOf(row),
    created_at: row.created_at,
    closed_at: row.closed_at,
  };
}

/** The task's areas (app_configs) as stored. */
export function areasOf(row: Pick<TaskRow, 'app_configs'>): AppConfig[] {
  return JSON.parse(row.app_configs) as AppConfig[];
}

/**
 * The task's overrides of its apps' rules as stored; a row shared by an engine before them (cluster
 * mode) has none.
 */
export function overridesOf(row: Partial<Pick<TaskRow, 'rule_overrides'>>): RuleOverrides {
  return JSON.parse(row.rule_overrides ?? '{}') as RuleOverrides;
}

/** The start body that makes a task like the stored one: what startAgain starts. */
export function startBodyOf(row: TaskRow): StartTaskBody {
  const video = row.mode === 'video';
  return {
    mode: row.mode,
    ...(row.name && { name: row.name }),
    ...(video && row.analysis_fps !== null && { analysis_fps: row.analysis_fps }),
    ...(row.priority !== null && { priority: row.priority }),
    ...(row.gpu !== null && { gpu: row.gpu }),
    ...(video && { persistent: row.persistent === 1, motion_gate: gateOf(row), video_url: row.video_url }),
    ...(video && gateRegionsOf(row) && { gate_regions: true }),
    ...(video && row.analysis_url && { analysis_url: row.analysis_url }),
    zapk_id: row.zapk_id,
    app_ids: JSON.parse(row.app_ids) as string[],
    device_id: row.device_id,
    business_id: row.business_id,
    osd: JSON.parse(row.osd) as Osd,
    app_configs: areasOf(row),
    ...(video && { rule_overrides: overridesOf(row) }),
    report_url: row.report_url,
    ...(row.report_secret && { report_secret: row.report_secret }),
  };
}
