import type { TaskRegistry } from '../tasks/registry';
import { DecodeBudget } from './budget';
import { imageError } from './image-error';

/**
 * When an upload of an image or diff task may decode its pixels. The cheap refusals come first:
 * images that could never fit the decode budget (413), the 1 s rule, and one upload of a task at a
 * time (429), so a burst to one task decodes one image. Then the upload waits for its pixels in the
 * engine-wide decode budget and holds them until its analysis is done, so that uploads to many tasks
 * at once cannot together decode more than the budget.
 */
export class UploadGate {
  /** Per task, the upload between its turn and its admission. */
  private readonly turns = new Map<string, object>();

  constructor(
    private readonly tasks: Pick<TaskRegistry, 'checkImageInterval'>,
    private readonly budget = new DecodeBudget(),
  ) {}

  /**
   * Runs `work` for an upload of images of `pixels` in all. `work` calls admitted() once the task
   * registry has admitted the image: from then on the 1 s rule holds the task's next upload back.
   */
  async run<T>(
    taskId: string,
    mode: 'image' | 'diff',
    pixels: number,
    work: (admitted: () => void) => Promise<T>,
  ): Promise<T> {
    this.budget.refuseNeverFitting(pixels);
    this.tasks.checkImageInterval(taskId, mode);
    // The image in progress will be admitted now or not at all, so this one would come too soon.
    if (this.turns.has(taskId))
      throw imageError(
        'image.too_soon',
        'the previous image of this task is still being decoded; images must be at least 1 s apart',
      );
    const turn = {};
    this.turns.set(taskId, turn);
    // Once admitted, the task's next upload may take its turn: this one must not end that one's.
    const admitted = () => {
      if (this.turns.get(taskId) === turn) this.turns.delete(taskId);
    };
    try {
      return await this.budget.run(pixels, () => work(admitted));
    } finally {
      admitted();
    }
  }
}
