import type { Frame } from '../vision/types';
import { changeImage } from './detect';
import type { OpenCv } from './opencv';
import { register, rescale } from './register';

/** The reference as the current camera sees it, at the current image's full size. */
export interface Aligned {
  /** Packed RGB, current.width x current.height; black where the reference does not reach. */
  warped: Uint8Array;
  /** 1 where the whole bilinear sample lies inside the reference, else 0; one per pixel. */
  valid: Uint8Array;
}

/**
 * Registers the reference onto the current image as detectChanges does (on their working grids),
 * then warps the reference's full-size pixels onto the current image's: what a change model, which
 * sees pixels rather than grids, compares. Throws NotRegisteredError like register.
 */
export function alignFrames(cv: OpenCv, reference: Frame, current: Frame): Aligned {
  const before = changeImage(reference);
  const now = changeImage(current);
  const { homography } = register(cv, before, now);
  const h = cv.matFromArray(3, 3, cv.CV_64FC1, rescale(homography, before.factor, now.factor));
  const size = new cv.Size(current.width, current.height);
  const flags = cv.INTER_LINEAR + cv.WARP_INVERSE_MAP;
  const zero = new cv.Scalar(0, 0, 0, 0);
  const target = new cv.Mat();
  try {
    const source = cv.matFromArray(reference.height, reference.width, cv.CV_8UC3, reference.data);
    cv.warpPerspective(source, target, h, size, flags, cv.BORDER_CONSTANT, zero);
    source.delete();
    const warped = target.data.slice();
    // A sample that reaches past the reference's border blends in black: not valid.
    const ones = new cv.Mat(reference.height, reference.width, cv.CV_8UC1);
    ones.data.fill(255);
    cv.warpPerspective(ones, target, h, size, flags, cv.BORDER_CONSTANT, zero);
    ones.delete();
    const covered = target.data;
    const valid = new Uint8Array(covered.length);
    for (let i = 0; i < covered.length; i++) valid[i] = covered[i] === 255 ? 1 : 0;
    return { warped, valid };
  } finally {
    h.delete();
    target.delete();
  }
}
