/**
 * The model families a package may name. Kept free of imports so that the inference hosts, which
 * need isOnnxFamily, do not load the manifest's schema validators.
 */
export const ONNX_FAMILIES = [
  'yolox',
  'yolov5',
  'yolov8',
  'yolo-generic',
  'yolo-e2e',
  'yolonas',
  'ssd',
  'rtdetr',
  'rfdetr',
  'dfine',
] as const;
/**
 * ONNX change models: siamese segmentation networks (BIT, TinyCD, ChangeFormer exports) that take
 * the two images of a pair and answer a change map. They serve diff tasks only.
 */
export const CHANGE_MODEL_FAMILIES = ['siamese-change'] as const;
/** Built-in algorithms that need no weights file. */
export const BUILTIN_FAMILIES = ['motion', 'change'] as const;
export type OnnxFamily = (typeof ONNX_FAMILIES)[number];
export type ChangeModelFamily = (typeof CHANGE_MODEL_FAMILIES)[number];
export type ModelFamily = OnnxFamily | ChangeModelFamily | (typeof BUILTIN_FAMILIES)[number];

/** A detector run on onnxruntime: one image in, boxes out. */
export function isOnnxFamily(family: ModelFamily): family is OnnxFamily {
  return (ONNX_FAMILIES as readonly string[]).includes(family);
}

export function isChangeModelFamily(family: ModelFamily): family is ChangeModelFamily {
  return (CHANGE_MODEL_FAMILIES as readonly string[]).includes(family);
}

/** The model is an ONNX file the package ships, loaded and checked by the inference hosts. */
export function hasWeights(family: ModelFamily): boolean {
  return isOnnxFamily(family) || isChangeModelFamily(family);
}
