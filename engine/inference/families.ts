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
/** Built-in algorithms that need no weights file. */
export const BUILTIN_FAMILIES = ['motion', 'change'] as const;
export type OnnxFamily = (typeof ONNX_FAMILIES)[number];
export type ModelFamily = OnnxFamily | (typeof BUILTIN_FAMILIES)[number];

export function isOnnxFamily(family: ModelFamily): family is OnnxFamily {
  return (ONNX_FAMILIES as readonly string[]).includes(family);
}
