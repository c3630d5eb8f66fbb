import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { PassThrough, Readable } from 'node:stream';
import yazl from 'yazl';
import type { RunRow, SampleRow } from './optimization-repository';
import type { Annotation } from './schema';

/** COCO object detection format (cocodataset.org/#format-data), as the export writes it. */
export interface CocoDataset {
  info: { description: string; version: string; year: number; contributor: string; date_created: string };
  licenses: never[];
  images: Array<{ id: number; file_name: string; width: number; height: number; date_captured: string }>;
  annotations: Array<{
    id: number;
    image_id: number;
    category_id: number;
    bbox: number[];
    area: number;
    iscrowd: 0;
    segmentation: never[];
    score: number;
    attributes: { track_id: string; hard: boolean; app_id: string; source: 'model' | 'operator' };
  }>;
  categories: Array<{ id: number; name: string; supercategory: string }>;
}

/** One image of the dataset: the first sample of its content, with what every such sample keeps. */
interface DatasetImage {
  sample: SampleRow;
  split: 'train' | 'val';
  annotations: Box[];
}

/** One image in five goes to val, chosen by its content's hash: the same frames split the same way. */
const VAL_EVERY = 5;

/** A box of the dataset: a detection of the model, or an object the operator marked missed. */
type Box = Pick<Annotation, 'label' | 'bbox' | 'score' | 'track_id' | 'hard'> & {
  source: 'model' | 'operator';
};

/** What a sample gives the dataset: its detections but those judged wrong, and the missed objects. */
function keptBoxes(sample: SampleRow): Box[] {
  return [
    ...sample.annotations
      .filter((a) => a.verdict !== 'wrong')
      .map((a) => ({ ...a, source: 'model' as const })),
    ...sample.missed.map((m) => ({
      label: m.label,
      bbox: m.bbox,
      score: 1,
      track_id: null,
      hard: false,
      source: 'operator' as const,
    })),
  ];
}

const baseName = (sampleId: number) => String(sampleId).padStart(6, '0');

/**
 * The samples as distinct images: samples of the same frame (equal bytes) become one image holding
 * the detections each keeps (each once), and each image goes to train or val by its hash, with at
 * least one in each once there are two.
 */
function distinctImages(
  samples: readonly SampleRow[],
  imagePath: (sampleId: number) => string,
): DatasetImage[] {
  const byHash = new Map<string, DatasetImage & { hash: string }>();
  for (const sample of samples) {
    const hash = createHash('sha256')
      .update(readFileSync(imagePath(sample.sample_id)))
      .digest('hex');
    const image = byHash.get(hash);
    const kept = keptBoxes(sample);
    if (!image) {
      const split = Number.parseInt(hash.slice(0, 8), 16) % VAL_EVERY === 0 ? 'val' : 'train';
      byHash.set(hash, { sample, split, annotations: [...kept], hash });
      continue;
    }
    const seen = new Set(image.annotations.map((a) => `${a.label} ${a.bbox.join(' ')}`));
    for (const annotation of kept) {
      if (!seen.has(`${annotation.label} ${annotation.bbox.join(' ')}`)) image.annotations.push(annotation);
    }
  }
  const images = [...byHash.values()];
  if (images.length >= 2) {
    // Too few images for the hash to be sure to split: the image with the smallest or largest hash moves.
    const sorted = [...images].sort((a, b) => a.hash.localeCompare(b.hash));
    if (!images.some((image) => image.split === 'val')) (sorted[0] as DatasetImage).split = 'val';
    if (!images.some((image) => image.split === 'train')) (sorted.at(-1) as DatasetImage).split = 'train';
  }
  return images.map(({ sample, split, annotations }) => ({ sample, split, annotations }));
}

/**
 * The run's samples as a COCO dataset plus YOLO labels. Categories are the labels of the apps'
 * models (id = label index + 1; the union by name when the apps use different models); a YOLO class
 * is the category id - 1.
 */
function buildDataset(
  run: RunRow,
  images: readonly DatasetImage[],
  labelsOf: (appId: string) => readonly string[],
): { coco: CocoDataset; yolo: Map<number, string>; names: string[] } {
  const names: string[] = [];
  for (const appId of run.app_ids)
    for (const label of labelsOf(appId)) if (!names.includes(label)) names.push(label);
  const categoryOf = (label: string) => {
    if (!names.includes(label)) names.push(label);
    return names.indexOf(label) + 1;
  };
  const created = new Date(run.created_at);
  const coco: CocoDataset = {
    info: {
      description: `Vision Console hard samples of optimization ${run.optimization_id} (task ${run.task_id})`,
      version: '1.0',
      year: created.getUTCFullYear(),
      contributor: 'Vision Console',
      date_created: created.toISOString(),
    },
    licenses: [],
    images: [],
    annotations: [],
    categories: [],
  };
  const yolo = new Map<number, string>();
  for (const { sample, split, annotations } of images) {
    coco.images.push({
      id: sample.sample_id,
      file_name: `${split}/${baseName(sample.sample_id)}.jpg`,
      width: sample.width,
      height: sample.height,
      date_captured: new Date(sample.timestamp).toISOString(),
    });
    const lines: string[] = [];
    for (const annotation of annotations) {
      const [x, y, w, h] = annotation.bbox as [number, number, number, number];
      const categoryId = categoryOf(annotation.label);
      coco.annotations.push({
        id: coco.annotations.length + 1,
        image_id: sample.sample_id,
        category_id: categoryId,
        bbox: [x, y, w, h],
        area: Math.round(w * h * 100) / 100,
        iscrowd: 0,
        segmentation: [],
        score: annotation.score,
        attributes: {
          track_id: annotation.track_id ?? '',
          hard: annotation.hard,
          app_id: sample.app_id,
          source: annotation.source,
        },
      });
      const cx = (x + w / 2) / sample.width;
      const cy = (y + h / 2) / sample.height;
      lines.push(
        [categoryId - 1, cx, cy, w / sample.width, h / sample.height]
          .map((v, i) => (i === 0 ? String(v) : v.toFixed(6)))
          .join(' '),
      );
    }
    yolo.set(sample.sample_id, lines.length > 0 ? `${lines.join('\n')}\n` : '');
  }
  coco.categories = names.map((name, index) => ({ id: index + 1, name, supercategory: '' }));
  return { coco, yolo, names };
}

/**
 * The dataset as a zip, streamed: annotations.json (COCO; file_name relative to images/),
 * images/{train,val}/NNNNNN.jpg (the distinct source frames), labels/{train,val}/NNNNNN.txt (YOLO:
 * class cx cy w h, normalised) and data.yaml (the two folders and the class names). Samples whose
 * image is missing are left out.
 */
export function datasetZip(
  run: RunRow,
  samples: readonly SampleRow[],
  imagePath: (sampleId: number) => string,
  labelsOf: (appId: string) => readonly string[],
): Readable {
  const images = distinctImages(
    samples.filter((s) => existsSync(imagePath(s.sample_id))),
    imagePath,
  );
  const { coco, yolo, names } = buildDataset(run, images, labelsOf);
  // A single image cannot be split: it serves as both.
  const val = images.some((image) => image.split === 'val') ? 'images/val' : 'images/train';
  const zip = new yazl.ZipFile();
  const output = zip.outputStream as PassThrough;
  // yazl reports a failing source file on the ZipFile, which would leave the output stream hanging.
  zip.on('error', (error: Error) => output.destroy(error));
  zip.addBuffer(Buffer.from(JSON.stringify(coco)), 'annotations.json');
  const yaml = [
    `# ${coco.info.description}`,
    'path: .',
    'train: images/train',
    `val: ${val}`,
    'names:',
    ...names.map((name, index) => `  ${index}: ${JSON.stringify(name)}`),
    '',
  ].join('\n');
  zip.addBuffer(Buffer.from(yaml), 'data.yaml');
  for (const { sample, split } of images) {
    const base = `${split}/${baseName(sample.sample_id)}`;
    // JPEG does not shrink further; storing saves the time.
    zip.addFile(imagePath(sample.sample_id), `images/${base}.jpg`, { compress: false });
    zip.addBuffer(Buffer.from(yolo.get(sample.sample_id) ?? ''), `labels/${base}.txt`);
  }
  zip.end();
  return output;
}
