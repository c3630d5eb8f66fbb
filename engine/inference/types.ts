/** A decoded video frame or image: packed RGB, 3 bytes per pixel, rows top to bottom, no padding. */
export interface Frame {
  data: Uint8Array;
  width: number;
  height: number;
}

/** An axis-aligned box in source-frame pixels: (x1, y1) top-left, (x2, y2) bottom-right. */
export interface Box {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

/** One detection of a model in source-frame pixels; classIndex is the label index. */
export interface Detection extends Box {
  score: number;
  classIndex: number;
  /** Changed pixels inside the box (change detection), in source pixels. */
  area?: number;
}
