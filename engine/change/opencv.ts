import { createRequire } from 'node:module';

/**
 * OpenCV's WebAssembly build (@techstark/opencv-js): pure JavaScript, so it installs wherever the
 * engine does (Windows, macOS, Linux) with no native build. About 8 MB to parse: loaded once, on the
 * first comparison, in the thread that compares (engine/change/change-worker.ts).
 *
 * The typings below name only what engine/change uses; the package's own come from another package
 * (mirada) and describe a different version of the bindings.
 */

export interface Mat {
  rows: number;
  cols: number;
  data: Uint8Array;
  data32F: Float32Array;
  data64F: Float64Array;
  empty(): boolean;
  delete(): void;
}

interface Vector<T> {
  size(): number;
  get(i: number): T;
  delete(): void;
}

interface KeyPoint {
  pt: { x: number; y: number };
}

interface DMatch {
  queryIdx: number;
  trainIdx: number;
  distance: number;
}

interface Deletable {
  delete(): void;
}

export interface OpenCv {
  CV_8UC1: number;
  CV_8UC3: number;
  CV_32FC1: number;
  CV_32FC2: number;
  CV_64FC1: number;
  NORM_HAMMING: number;
  RANSAC: number;
  MOTION_HOMOGRAPHY: number;
  TermCriteria_COUNT: number;
  TermCriteria_EPS: number;
  INTER_LINEAR: number;
  INTER_AREA: number;
  WARP_INVERSE_MAP: number;
  BORDER_CONSTANT: number;
  Mat: {
    new (): Mat;
    new (rows: number, cols: number, type: number): Mat;
    ones(rows: number, cols: number, type: number): Mat;
  };
  matFromArray(rows: number, cols: number, type: number, data: ArrayLike<number>): Mat;
  KeyPointVector: new () => Vector<KeyPoint>;
  DMatchVectorVector: new () => Vector<Vector<DMatch>>;
  ORB: new (
    features: number,
  ) => Deletable & {
    detectAndCompute(image: Mat, mask: Mat, keypoints: Vector<KeyPoint>, descriptors: Mat): void;
  };
  BFMatcher: new (
    norm: number,
    crossCheck: boolean,
  ) => Deletable & {
    knnMatch(query: Mat, train: Mat, matches: Vector<Vector<DMatch>>, k: number): void;
  };
  TermCriteria: new (type: number, count: number, epsilon: number) => unknown;
  Scalar: new (...values: number[]) => unknown;
  Size: new (width: number, height: number) => unknown;
  estimateAffine2D(
    source: Mat,
    target: Mat,
    inliers: Mat,
    method: number,
    threshold: number,
    maxIterations: number,
    confidence: number,
    refineIterations: number,
  ): Mat;
  findHomography(source: Mat, target: Mat, method: number, threshold: number, mask: Mat): Mat;
  findTransformECC(
    template: Mat,
    input: Mat,
    warp: Mat,
    motion: number,
    criteria: unknown,
    mask: Mat,
    gaussianSize: number,
  ): number;
  blur(source: Mat, target: Mat, size: unknown): void;
  dilate(source: Mat, target: Mat, kernel: Mat): void;
  equalizeHist(source: Mat, target: Mat): void;
  resize(source: Mat, target: Mat, size: unknown, fx: number, fy: number, interpolation: number): void;
  warpPerspective(
    source: Mat,
    target: Mat,
    warp: Mat,
    size: unknown,
    flags: number,
    border: number,
    value: unknown,
  ): void;
}

let loading: Promise<OpenCv> | undefined;

/** The OpenCV module, ready; the first call loads and compiles it (a few hundred ms). */
export function loadOpenCv(): Promise<OpenCv> {
  loading ??= new Promise((resolve, reject) => {
    try {
      const module = createRequire(import.meta.url)('@techstark/opencv-js') as {
        onRuntimeInitialized?: () => void;
        Mat?: unknown;
      };
      // The Emscripten module is a thenable: resolving a promise with it would call its then().
      const ready = () => resolve(strip(module));
      if (module.Mat) ready();
      else module.onRuntimeInitialized = ready;
    } catch (error) {
      reject(error);
    }
  });
  return loading;
}

/** The module without its then(), so that it can travel through promises as a plain value. */
function strip(module: object): OpenCv {
  Object.defineProperty(module, 'then', { value: undefined, configurable: true });
  return module as OpenCv;
}
