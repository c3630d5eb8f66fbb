import { ThreadCalls } from '../worker-thread';
import type { ChangedRegion } from './detect';
import { NotRegisteredError } from './register';
import type { WorkingImage } from './working';

export interface ChangeRequest {
  id: number;
  reference: WorkingImage;
  current: WorkingImage;
}

export type ChangeReply =
  | { id: number; regions: ChangedRegion[] }
  | { id: number; error: string; notRegistered: boolean };

/**
 * detectChanges on a thread of its own (change-worker.ts), one pair after the other. One thread,
 * started with the first pair and never keeping the process alive. The working images are copied
 * to it (a few MB): the caller keeps its image_b as the next reference.
 */
export class ChangeThread {
  private readonly thread = new ThreadCalls<Omit<ChangeRequest, 'id'>, ChangeReply, ChangedRegion[]>(
    import.meta.url,
    'change-worker',
    'the change detector',
    (reply) =>
      'regions' in reply
        ? reply.regions
        : reply.notRegistered
          ? new NotRegisteredError(reply.error)
          : new Error(reply.error),
  );

  /** Rejects with NotRegisteredError for two images that do not show enough of one scene. */
  detect(reference: WorkingImage, current: WorkingImage): Promise<ChangedRegion[]> {
    return this.thread.call({ reference, current });
  }
}
