import type { RuleFiring } from '../rules/rule-kind';
import type { NewEvent } from './schema';

export interface MessageInput {
  task: { task_id: string; business_id: string };
  appId: string;
  /** ms since the epoch. */
  timestamp: number;
  frame: { width: number; height: number; id: number };
  /** The rules of this app that fired on the frame; each carries the same snapshot. */
  firings: readonly RuleFiring[];
  /** The annotated frame, base64 JPEG. */
  image: string;
  /** An uploaded image's query echoed into the result (4.8, 4.9). */
  upload?: { image_id: number; device_id?: string };
}

/** The `message` event of part 6 for one application's fired rules on one frame. */
export function messageEvent(input: MessageInput): Extract<NewEvent, { event: 'message' }> {
  return {
    event: 'message',
    task_id: input.task.task_id,
    app_id: input.appId,
    business_id: input.task.business_id,
    timestamp: input.timestamp,
    data: {
      frame: { height: input.frame.height, width: input.frame.width, id: input.frame.id },
      rules: input.firings.map((firing) => ({ ...firing, image: input.image })),
      ...input.upload,
    },
  };
}
