import { MAX_IMAGE_PIXELS } from './decode';
import { imageError } from './image-error';

/**
 * Pixels all image uploads may have in decoding and analysis at once: one largest image. An upload
 * takes up to about 10 bytes per pixel at its peak (measured: the RGB frame, a snapshot's copy with
 * the OSD and the zone's rasterised layer; WebP and BMP decode through whole-image RGBA), so this
 * bounds them to about 1 GB together, however many arrive.
 */
export const DECODE_BUDGET_PIXELS = MAX_IMAGE_PIXELS;
/** How long an upload waits for room in the budget before it is refused (503, try again). */
export const DECODE_WAIT_MS = 10_000;

interface Waiter {
  pixels: number;
  admit: () => void;
}

/**
 * A budget of decoded pixels shared by every upload. Each takes its images' pixels before they are
 * decoded and gives them back once its analysis is done, so a flood of small files that decode to
 * huge images waits its turn instead of decoding all at once. Waiters are served first come, first
 * served (a large image is not starved by small ones), each for a limited time.
 */
export class DecodeBudget {
  private used = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    readonly capacity = DECODE_BUDGET_PIXELS,
    private readonly waitMs = DECODE_WAIT_MS,
  ) {}

  /**
   * Runs `work` holding `pixels` of the budget. Refused (413) when they can never fit, and with 503
   * when they do not free up in time.
   */
  async run<T>(pixels: number, work: () => Promise<T>): Promise<T> {
    this.refuseNeverFitting(pixels);
    await this.take(pixels);
    try {
      return await work();
    } finally {
      this.used -= pixels;
      this.admitWaiting();
    }
  }

  /** 413 for images that could not be decoded even with the whole budget to themselves. */
  refuseNeverFitting(pixels: number): void {
    if (pixels > this.capacity)
      throw imageError(
        'image.too_large',
        `body: the images are ${megapixels(pixels)} megapixels together; at most ${megapixels(this.capacity)} megapixels are decoded at once`,
      );
  }

  private take(pixels: number): Promise<void> {
    if (this.waiting.length === 0 && this.used + pixels <= this.capacity) {
      this.used += pixels;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        pixels,
        admit: () => {
          clearTimeout(timer);
          this.used += pixels;
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        // It may have been the one in the way of those behind it.
        this.admitWaiting();
        reject(
          imageError(
            'image.busy',
            `other uploads fill the memory for decoding images and none finished within ${this.waitMs / 1000} s; try again`,
            undefined,
            1,
          ),
        );
      }, this.waitMs);
      this.waiting.push(waiter);
    });
  }

  private admitWaiting(): void {
    for (
      let next = this.waiting[0];
      next && this.used + next.pixels <= this.capacity;
      next = this.waiting[0]
    ) {
      this.waiting.shift();
      next.admit();
    }
  }
}

const megapixels = (pixels: number) => (pixels / 1e6).toFixed(1);
