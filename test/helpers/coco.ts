import { type Static, Type } from '@sinclair/typebox';
import yauzl from 'yauzl';
import { compileCheck } from '../../engine/schema/ajv';

/**
 * The COCO object-detection format (cocodataset.org/#format-data) as a schema, with the checks a
 * schema cannot express (unique ids, references, boxes inside their image), and a zip reader.
 * Extra fields are allowed, as in COCO files from other tools.
 */

const Id = Type.Integer({ minimum: 0 });

const CocoImage = Type.Object({
  id: Id,
  file_name: Type.String({ minLength: 1 }),
  width: Type.Integer({ minimum: 1 }),
  height: Type.Integer({ minimum: 1 }),
});

const Polygons = Type.Array(Type.Array(Type.Number(), { minItems: 6 }));
const Rle = Type.Object({
  counts: Type.Union([Type.String(), Type.Array(Type.Integer({ minimum: 0 }))]),
  size: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 2, maxItems: 2 }),
});

const CocoAnnotation = Type.Object({
  id: Id,
  image_id: Id,
  category_id: Id,
  bbox: Type.Array(Type.Number({ minimum: 0 }), { minItems: 4, maxItems: 4 }),
  area: Type.Number({ minimum: 0 }),
  iscrowd: Type.Union([Type.Literal(0), Type.Literal(1)]),
  segmentation: Type.Optional(Type.Union([Polygons, Rle])),
});

const CocoCategory = Type.Object({
  id: Id,
  name: Type.String({ minLength: 1 }),
  supercategory: Type.Optional(Type.String()),
});

export const CocoSchema = Type.Object({
  info: Type.Optional(Type.Object({})),
  licenses: Type.Optional(Type.Array(Type.Object({}))),
  images: Type.Array(CocoImage),
  annotations: Type.Array(CocoAnnotation),
  categories: Type.Array(CocoCategory, { minItems: 1 }),
});
export type Coco = Static<typeof CocoSchema>;

const checkSchema = compileCheck<Coco>(CocoSchema, 'coco');

/** Problems of a COCO document: its schema first, then ids and references. Empty when it is valid. */
export function cocoProblems(value: unknown): string[] {
  const checked = checkSchema(value);
  if (!checked.ok) return [checked.error];
  const coco = checked.value;
  const problems: string[] = [];
  const unique = (what: string, ids: number[]) => {
    if (new Set(ids).size !== ids.length) problems.push(`${what} ids are not unique`);
  };
  unique(
    'image',
    coco.images.map((i) => i.id),
  );
  unique(
    'annotation',
    coco.annotations.map((a) => a.id),
  );
  unique(
    'category',
    coco.categories.map((c) => c.id),
  );
  const images = new Map(coco.images.map((i) => [i.id, i]));
  const categories = new Set(coco.categories.map((c) => c.id));
  for (const a of coco.annotations) {
    const image = images.get(a.image_id);
    if (!image) problems.push(`annotation ${a.id}: no image ${a.image_id}`);
    if (!categories.has(a.category_id)) problems.push(`annotation ${a.id}: no category ${a.category_id}`);
    const [x, y, w, h] = a.bbox as [number, number, number, number];
    if (w <= 0 || h <= 0) problems.push(`annotation ${a.id}: empty box`);
    if (image && (x + w > image.width + 1e-6 || y + h > image.height + 1e-6))
      problems.push(`annotation ${a.id}: box outside its image`);
    if (Math.abs(a.area - w * h) > 0.01 * Math.max(1, w * h))
      problems.push(`annotation ${a.id}: area is not w*h`);
  }
  return problems;
}

/** Every file of a zip, by name. */
export async function readZip(zip: Buffer): Promise<Map<string, Buffer>> {
  const archive = await yauzl.fromBufferPromise(zip, { lazyEntries: true });
  const files = new Map<string, Buffer>();
  for await (const entry of archive.eachEntry()) {
    if (entry.fileName.endsWith('/')) continue;
    const stream = await archive.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    files.set(entry.fileName, Buffer.concat(chunks));
  }
  return files;
}
