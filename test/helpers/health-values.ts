import type { SubStreamHealth } from '../../engine/contract';

/** A sub-stream task's sub-stream as health says it while all is well: 640x360 analysed, main stream read. */
export const RUNNING_SUB_STREAM: SubStreamHealth = {
  state: 'running',
  width: 640,
  height: 360,
  fps: 25,
  aspect_mismatch: false,
  analysing: 'sub_stream',
  last_error: null,
  main: { state: 'running', drops: 0, last_error: null },
};
