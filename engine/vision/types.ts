/**
 * The data the vision stages hand each other, one set for all of them: a frame goes into a detector,
 * detections into the tracker, tracked objects into the rules; boxes and points are in source-frame
 * pixels unless a stage says otherwise (pipeline/source-space.ts is where they become so).
 */

/** [x, y]: a vertex of a region, a foot point, a ground position in metres. */
export type Point = readonly [number, number];

/**
 * Points as a request's JSON carries them (polygons, zones, masks, calibration marks): arrays that
 * the schema holds to two coordinates each. The geometry takes them as Points through toPoints. The
 * wire keeps arrays because a tuple schema (`items` as an array) is not OpenAPI 3.0 and the console
 * builds its polygons as number[][].
 */
export type PointList = readonly (readonly number[])[];

/** A frame's or source's size in pixels. */
export interface FrameSize {
  width: number;
  height: number;
}

/** A decoded video frame or image: packed RGB, 3 bytes per pixel, rows top to bottom, no padding. */
export interface Frame extends FrameSize {
  data: Uint8Array;
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

/** A detection of this frame, as the model saw it, with the track it belongs to. */
export type TrackedObject = Detection & { trackId: string; hits: number; confirmed: boolean };
