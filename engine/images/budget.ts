import { MAX_IMAGE_PIXELS } from './decode';
import { imageError } from './image-error';

/**
 * Pixels all image uploads may have in decoding and analysis at once: one largest image. An upload
 * takes up to about 10 bytes per pixel at its peak (measured: the RGB frame, a snapshot's copy with
 * the OSD and the zone's rasterised layer; WebP and BMP decode through whole-image RGBA), so this
 * bounds them to about 1 GB together, however many arrive.
 */
export const DECODE_BUDGET_PIXELS = MAX_IMAGE_PIXELS;
/** How long an upload waits for room in a budget before it is refused (503, try again). */
export const DECODE_WAIT_MS = 10_000;

interface Waiter {
  units: number;
  admit: () => void;
}

/** What a budget answers when units can never fit, and when they did not fit in time. */
export interface BudgetRefusals {
  tooLarge(units: number, capacity: number): Error;
  busy(waitMs: number): Error;
}

/**
 * A budget of units (pixels, bytes) shared by every upload. Each takes its units before the work
 * that costs them and gives them back after, so a flood waits its turn instead of running all at
 * once. Waiters are served first come, first served (a large upload is not starved by small ones),
 * each for a limited time.
 */
export class WaitingBudget {
  private used = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    readonly capacity: number,
    private readonly waitMs: number,
    private readonly refusals: BudgetRefusals,
  ) {}

  /** Runs `work` holding `units` of the budget. */
  async run<T>(units: number, work: () => Promise<T>): Promise<T> {
    const release = await this.acquire(units);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /**
   * Takes `units`, waiting for room up to the budget's wait; resolves to the function that gives
   * them back (once, however often it is called). Refused at once when they can never fit.
   */
  async acquire(units: number): Promise<() => void> {
    this.refuseNeverFitting(units);
    await this.take(units);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.used -= units;
      this.admitWaiting();
    };
  }

  refuseNeverFitting(units: number): void {
    if (units > this.capacity) throw this.refusals.tooLarge(units, this.capacity);
  }

  private take(units: number): Promise<void> {
    if (this.waiting.length === 0 && this.used + units <= this.capacity) {
      this.used += units;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        units,
        admit: () => {
          clearTimeout(timer);
          this.used += units;
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        // It may have been the one in the way of those behind it.
        this.admitWaiting();
        reject(this.refusals.busy(this.waitMs));
      }, this.waitMs);
      this.waiting.push(waiter);
    });
  }

  private admitWaiting(): void {
    for (
      let next = this.waiting[0];
      next && this.used + next.units <= this.capacity;
      next = this.waiting[0]
    ) {
      this.waiting.shift();
      next.admit();
    }
  }
}

/**
 * The decoded pixels of every upload: each takes its images' pixels before they are decoded and
 * gives them back once its analysis is done, so a flood of small files that decode to huge images
 * waits its turn instead of decoding all at once. 413 for images that could never fit, 503 for
 * pixels that did not free up in time.
 */
export class DecodeBudget extends WaitingBudget {
  constructor(capacity = DECODE_BUDGET_PIXELS, waitMs = DECODE_WAIT_MS) {
    super(capacity, waitMs, {
      tooLarge: (pixels, most) =>
        imageError(
          'image.too_large',
          `body: the images are ${megapixels(pixels)} megapixels together; at most ${megapixels(most)} megapixels are decoded at once`,
        ),
      busy: (wait) =>
        imageError(
          'image.busy',
          `other uploads fill the memory for decoding images and none finished within ${wait / 1000} s; try again`,
          undefined,
          1,
        ),
    });
  }
}

const megapixels = (pixels: number) => (pixels / 1e6).toFixed(1);
