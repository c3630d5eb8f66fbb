import type { Frame } from '../vision/types';
import { ThreadCalls } from '../worker-thread';
import type { Aligned } from './align';
import type { ChangedRegion } from './detect';
import { NotRegisteredError } from './register';
import type { WorkingImage } from './working';

/** detectChanges on two working images, or alignFrames on two frames. */
export type ChangeRequest =
  | { id: number; kind: 'detect'; reference: WorkingImage; current: WorkingImage }
  | { id: number; kind: 'align'; reference: Frame; current: Frame };

export type ChangeReply =
  | { id: number; regions: ChangedRegion[] }
  | { id: number; aligned: Aligned }
  | { id: number; error: string; notRegistered: boolean };

/** A request before ThreadCalls numbers it (Omit applied to each member of the union). */
type Request = ChangeRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

/**
 * detectChanges and alignFrames on a thread of their own (change-worker.ts), one pair after the
 * other. One thread, started with the first pair and never keeping the process alive. The images
 * are copied to it: the caller keeps its image_b as the next reference.
 */
export class ChangeThread {
  private readonly thread = new ThreadCalls<Request, ChangeReply, ChangedRegion[] | Aligned>(
    import.meta.url,
    'change-worker',
    'the change detector',
    (reply) => {
      if ('regions' in reply) return reply.regions;
      if ('aligned' in reply) return reply.aligned;
      return reply.notRegistered ? new NotRegisteredError(reply.error) : new Error(reply.error);
    },
  );

  /** Rejects with NotRegisteredError for two images that do not show enough of one scene. */
  detect(reference: WorkingImage, current: WorkingImage): Promise<ChangedRegion[]> {
    return this.thread.call({ kind: 'detect', reference, current }) as Promise<ChangedRegion[]>;
  }

  /** The reference registered and warped onto the current frame; rejects like detect. */
  align(reference: Frame, current: Frame): Promise<Aligned> {
    return this.thread.call({ kind: 'align', reference, current }) as Promise<Aligned>;
  }
}
