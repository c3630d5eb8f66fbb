import { type ConsoleEngine, startConsoleEngine } from './console-engine';
import { VIDEO } from './fixtures';
import { storeAlarms } from './stored-alarms';

/**
 * A console engine with the example package (the fixture COCO model), a camera named "Front door" on
 * its person app analysed at 1 fps to spare the machine, and alarms of `alarmCamera` stored before
 * it started: the screens an operator reads, each with something on it.
 */
export async function startFrontDoor(
  name: string,
  alarmCamera: string,
): Promise<{ c: ConsoleEngine; taskId: string }> {
  const c = await startConsoleEngine(name, { prepare: (dataDir) => storeAlarms(dataDir, alarmCamera) });
  await c.installExample();
  const { task_id: taskId } = await c.api<{ task_id: string }>('POST', '/api/task', {
    zapk_id: 'coco-yolox-nano',
    app_ids: ['person'],
    video_url: VIDEO,
    name: 'Front door',
    analysis_fps: 1,
  });
  return { c, taskId };
}
