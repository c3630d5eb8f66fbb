import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { onnxEntries, onnxManifest, rawZip } from './zip-fixtures';

/**
 * Tiny hostile ONNX models, written by hand as protobuf (the few ModelProto fields they need), for
 * the tests of the inference bounds. Each takes the example package's input (images, float32
 * [1, 3, 416, 416]) and answers a yolox output of 3 classes ([1, 3549, 8], all zeros) when it ends,
 * so it passes every check that looks at shapes: only its time or memory can refuse it.
 */

// Protobuf wire format: varints and length-delimited fields are all these messages use.
type Field = Uint8Array;

function varint(value: number | bigint): number[] {
  let rest = BigInt(value);
  const bytes: number[] = [];
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    bytes.push(rest > 0n ? low | 0x80 : low);
  } while (rest > 0n);
  return bytes;
}

const intField = (field: number, value: number | bigint): Field =>
  Uint8Array.from([...varint(field << 3), ...varint(value)]);

function bytesField(field: number, ...parts: Field[]): Field {
  const body = Buffer.concat(parts);
  return Buffer.concat([Uint8Array.from([...varint((field << 3) | 2), ...varint(body.length)]), body]);
}

const stringField = (field: number, text: string): Field => bytesField(field, Buffer.from(text, 'utf8'));

// onnx.proto TensorProto.DataType
const FLOAT = 1;
const INT64 = 7;
const BOOL = 9;

/** A graph input or output: ValueInfoProto with a tensor type and a fixed shape ([] for a scalar). */
function valueInfo(name: string, elemType: number, dims: readonly number[]): Field {
  const shape = dims.map((d) => bytesField(1, intField(1, d)));
  const tensorType = bytesField(1, intField(1, elemType), bytesField(2, ...shape));
  return Buffer.concat([stringField(1, name), bytesField(2, tensorType)]);
}

/** An initializer: TensorProto with its values as raw little-endian bytes. */
function tensor(name: string, elemType: number, dims: readonly number[], raw: Buffer): Field {
  return Buffer.concat([
    ...dims.map((d) => intField(1, d)),
    intField(2, elemType),
    stringField(8, name),
    bytesField(9, raw),
  ]);
}

const int64s = (...values: Array<number | bigint>) => {
  const raw = Buffer.alloc(8 * values.length);
  for (const [i, v] of values.entries()) raw.writeBigInt64LE(BigInt(v), 8 * i);
  return raw;
};
const float32 = (value: number) => {
  const raw = Buffer.alloc(4);
  raw.writeFloatLE(value, 0);
  return raw;
};

interface Attribute {
  name: string;
  int?: number;
  graph?: Field;
}

// AttributeProto.AttributeType
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_GRAPH = 5;

function node(op: string, inputs: string[], outputs: string[], attributes: Attribute[] = []): Field {
  const encoded = attributes.map((a) =>
    a.graph
      ? bytesField(5, stringField(1, a.name), bytesField(6, a.graph), intField(20, ATTRIBUTE_GRAPH))
      : bytesField(5, stringField(1, a.name), intField(3, a.int ?? 0), intField(20, ATTRIBUTE_INT)),
  );
  return bytesField(
    1,
    ...inputs.map((i) => stringField(1, i)),
    ...outputs.map((o) => stringField(2, o)),
    stringField(4, op),
    ...encoded,
  );
}

interface Graph {
  nodes: Field[];
  initializers?: Field[];
  inputs: Field[];
  outputs: Field[];
}

function graph(name: string, g: Graph): Field {
  return Buffer.concat([
    ...g.nodes,
    stringField(2, name),
    ...(g.initializers ?? []).map((t) => bytesField(5, t)),
    ...g.inputs.map((i) => bytesField(11, i)),
    ...g.outputs.map((o) => bytesField(12, o)),
  ]);
}

/** ModelProto: IR version 8, default-domain opset 13. */
function model(g: Field): Buffer {
  return Buffer.concat([
    intField(1, 8),
    stringField(2, 'vision-console tests'),
    bytesField(7, g),
    bytesField(8, stringField(1, ''), intField(2, 13)),
  ]);
}

const INPUT = valueInfo('images', FLOAT, [1, 3, 416, 416]);
const OUTPUT_DIMS = [1, 3549, 8];
const OUTPUT = valueInfo('output', FLOAT, OUTPUT_DIMS);
/** The zeros the models answer with, made at run time: the file stays tiny. */
const ZEROS = node('ConstantOfShape', ['output_shape'], ['zeros']);
const OUTPUT_SHAPE = tensor('output_shape', INT64, [3], int64s(...OUTPUT_DIMS));

/** The largest value of the frame as a float scalar: 0 on the check's blank frame, up to 255 on real ones. */
const BRIGHTEST = node('ReduceMax', ['images'], ['brightest'], [{ name: 'keepdims', int: 0 }]);

/** A loop whose body passes its state through untouched, `trip` (an int64 scalar) times. */
function loop(trip: string, nodes: Field[], initializers: Field[]): Buffer {
  const body = graph('body', {
    nodes: [node('Identity', ['cond_in'], ['cond_out']), node('Identity', ['state_in'], ['state_out'])],
    inputs: [
      valueInfo('iteration', INT64, []),
      valueInfo('cond_in', BOOL, []),
      valueInfo('state_in', FLOAT, OUTPUT_DIMS),
    ],
    outputs: [valueInfo('cond_out', BOOL, []), valueInfo('state_out', FLOAT, OUTPUT_DIMS)],
  });
  return model(
    graph('loop', {
      nodes: [
        ...nodes,
        ZEROS,
        node('Loop', [trip, 'keep_going', 'zeros'], ['output'], [{ name: 'body', graph: body }]),
      ],
      initializers: [...initializers, OUTPUT_SHAPE, tensor('keep_going', BOOL, [], Buffer.from([1]))],
      inputs: [INPUT],
      outputs: [OUTPUT],
    }),
  );
}

/** A Loop with a trip count of 10^13: it never finishes, whatever the frame. */
export function endlessLoopModel(): Buffer {
  return loop('trips', [], [tensor('trips', INT64, [], int64s(10_000_000_000_000n))]);
}

/** A Loop of (brightest pixel x 10^11) trips: none on the check's blank frame, endless on a real frame. */
export function frameLoopModel(): Buffer {
  return loop(
    'trips',
    [
      BRIGHTEST,
      node('Mul', ['brightest', 'per_level'], ['scaled']),
      node('Cast', ['scaled'], ['trips'], [{ name: 'to', int: INT64 }]),
    ],
    [tensor('per_level', FLOAT, [], float32(1e11))],
  );
}

/** Adds the sum of `big` to the zeros, so the big tensors are needed for the output. */
function answerWith(big: string): Field[] {
  return [
    ZEROS,
    node('ReduceSum', [big], ['total'], [{ name: 'keepdims', int: 0 }]),
    node('Add', ['zeros', 'total'], ['output']),
  ];
}

/** Three float tensors of 700 M values (2.8 GB each) alive at once, whatever the frame. */
export function memoryBombModel(): Buffer {
  return model(
    graph('bomb', {
      nodes: [
        node('ConstantOfShape', ['huge_shape'], ['a']),
        node('Add', ['a', 'a'], ['b']),
        node('Mul', ['a', 'b'], ['c']),
        node('Add', ['b', 'c'], ['d']),
        ...answerWith('d'),
      ],
      initializers: [tensor('huge_shape', INT64, [1], int64s(700_000_000)), OUTPUT_SHAPE],
      inputs: [INPUT],
      outputs: [OUTPUT],
    }),
  );
}

/** A tensor of (brightest pixel x 10^7) floats: empty on the check's blank frame, 10 GB on a white one. */
export function frameMemoryBombModel(): Buffer {
  return model(
    graph('frame-bomb', {
      nodes: [
        BRIGHTEST,
        node('Mul', ['brightest', 'per_level'], ['scaled']),
        node('Cast', ['scaled'], ['count'], [{ name: 'to', int: INT64 }]),
        node('Reshape', ['count', 'one_dim'], ['huge_shape']),
        node('ConstantOfShape', ['huge_shape'], ['huge']),
        ...answerWith('huge'),
      ],
      initializers: [
        tensor('per_level', FLOAT, [], float32(1e7)),
        tensor('one_dim', INT64, [1], int64s(1)),
        OUTPUT_SHAPE,
      ],
      inputs: [INPUT],
      outputs: [OUTPUT],
    }),
  );
}

/**
 * A valid package (the zip fixtures' onnx package: a yolox detector of 3 labels, app "motion")
 * whose model is `model`, under its own zapk_id.
 */
export function writeModelZapk(path: string, zapkId: string, model: Buffer): void {
  const manifest = onnxManifest();
  manifest.zapk_id = zapkId;
  const detector = manifest.models.detector;
  if (detector) detector.sha256 = createHash('sha256').update(model).digest('hex');
  const entries = onnxEntries(manifest).map((entry) =>
    entry.name === 'models/fake.onnx' ? { ...entry, data: model } : entry,
  );
  writeFileSync(path, rawZip(entries));
}
