import type { FrameSize } from '../pipeline/app-runtime';
import type { PipelineTask } from '../pipeline/task-pipeline';
import { type AppConfig, DEFAULT_OSD, type Osd, type TaskView } from './schema';
import { taskName } from './task-name';
import type { TaskRow } from './task-repository';

// A stored task row as the analysis and the listing see it.

/** What the analysis needs of a task row. */
export function pipelineTask(row: TaskRow): PipelineTask {
  return {
    task_id: row.task_id,
    zapk_id: row.zapk_id,
    app_ids: JSON.parse(row.app_ids) as string[],
    app_configs: JSON.parse(row.app_configs) as AppConfig[],
    osd: { ...DEFAULT_OSD, ...(JSON.parse(row.osd) as Osd) },
    business_id: row.business_id,
    report_url: row.report_url,
    report_secret: row.report_secret || undefined,
    polygon_frame: polygonFrameOf(row),
  };
}

/** The frame size a task's polygons were drawn on, when known. */
export function polygonFrameOf(row: TaskRow): FrameSize | null {
  return row.polygon_width && row.polygon_height
    ? { width: row.polygon_width, height: row.polygon_height }
    : null;
}

/** The row as the listing shows it, before its health is added. */
export function toView(row: TaskRow): Omit<TaskView, 'health'> {
  return {
    task_id: row.task_id,
    name: taskName(row),
    mode: row.mode,
    zapk_id: row.zapk_id,
    app_ids: JSON.parse(row.app_ids) as string[],
    device_id: row.device_id,
    business_id: row.business_id,
    video_url: row.video_url,
    report_url: row.report_url,
    osd: JSON.parse(row.osd) as Osd,
    close_code: row.close_code,
    dump: row.dump,
    status: row.status,
    app_configs: JSON.parse(row.app_configs) as AppConfig[],
    created_at: row.created_at,
    closed_at: row.closed_at,
  };
}
