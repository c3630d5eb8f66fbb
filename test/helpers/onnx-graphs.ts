import onnxProto from 'onnx-proto';

/**
 * Small ONNX models that answer known tensors, written with onnx-proto (the ONNX protobuf schema as
 * a library): each output is a Constant node, whatever the inputs hold. They stand in for a model
 * family's export layout (names, shapes, element types) so that the engine's whole path, install
 * checks included, runs on each layout without the real weights.
 */

const { onnx } = onnxProto;

type ElementType = 'float32' | 'uint8' | 'int64';

const ELEMENT: Record<ElementType, number> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  uint8: onnx.TensorProto.DataType.UINT8,
  int64: onnx.TensorProto.DataType.INT64,
};

export interface GraphInput {
  name: string;
  type: ElementType;
  dims: number[];
}

export interface GraphOutput {
  name: string;
  type: 'float32' | 'int64';
  dims: number[];
  /** Row-major; the rest of the tensor is zeros. */
  values: number[];
}

function valueInfo(name: string, type: ElementType, dims: readonly number[]) {
  return {
    name,
    type: {
      tensorType: { elemType: ELEMENT[type], shape: { dim: dims.map((dimValue) => ({ dimValue })) } },
    },
  };
}

function constant(output: GraphOutput) {
  const size = output.dims.reduce((product, d) => product * d, 1);
  const values = [...output.values, ...new Array(Math.max(0, size - output.values.length)).fill(0)];
  const raw =
    output.type === 'float32'
      ? new Uint8Array(Float32Array.from(values).buffer)
      : new Uint8Array(BigInt64Array.from(values, (v) => BigInt(Math.round(v))).buffer);
  return {
    opType: 'Constant',
    output: [output.name],
    attribute: [
      {
        name: 'value',
        type: onnx.AttributeProto.AttributeType.TENSOR,
        t: { dims: output.dims, dataType: ELEMENT[output.type], rawData: raw },
      },
    ],
  };
}

/** The serialised model: the given inputs (unused), and outputs that always hold the given values. */
export function constantModel(inputs: readonly GraphInput[], outputs: readonly GraphOutput[]): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'vision-console-tests',
    opsetImport: [{ domain: '', version: 17 }],
    graph: {
      name: 'constant-outputs',
      node: outputs.map(constant),
      input: inputs.map((input) => valueInfo(input.name, input.type, input.dims)),
      output: outputs.map((output) => valueInfo(output.name, output.type, output.dims)),
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

const scalar = (name: string, value: number) => ({
  name,
  dims: [],
  dataType: ELEMENT.float32,
  rawData: new Uint8Array(Float32Array.of(value).buffer),
});

const node = (opType: string, input: string[], output: string[], attribute: object[] = []) => ({
  opType,
  input,
  output,
  attribute,
});

/** A tensor whose sides are named dimensions: one model file serves every input size. */
function sizedInfo(name: string, channels: number) {
  const dim = [{ dimValue: 1 }, { dimValue: channels }, { dimParam: 'height' }, { dimParam: 'width' }];
  return { name, type: { tensorType: { elemType: ELEMENT.float32, shape: { dim } } } };
}

export interface SiameseOptions {
  /** What the output holds: sigmoid(z), z itself, or [-z, z] (two-class logits, channel 1 changed). */
  output: 'probability' | 'logit' | 'two-class-logits';
  /** z = gain * (sum over channels of |A - B| - threshold). */
  gain: number;
  threshold: number;
}

/**
 * A siamese change model in the export layout of BIT, TinyCD and ChangeFormer: inputs A and B,
 * float [1, 3, H, W]; output [1, 1, H, W] or [1, 2, H, W]. It calls a pixel changed where the two
 * images' values (as normalised) differ by more than `threshold` summed over the channels.
 */
export function siameseChangeModel(options: SiameseOptions): Uint8Array {
  const z = options.output === 'logit' ? 'change' : 'z';
  const nodes = [
    node('Sub', ['A', 'B'], ['difference']),
    node('Abs', ['difference'], ['distance']),
    node(
      'ReduceSum',
      ['distance', 'channels'],
      ['summed'],
      [{ name: 'keepdims', type: onnx.AttributeProto.AttributeType.INT, i: 1 }],
    ),
    node('Sub', ['summed', 'threshold'], ['over']),
    node('Mul', ['over', 'gain'], [z]),
  ];
  if (options.output === 'probability') nodes.push(node('Sigmoid', ['z'], ['change']));
  if (options.output === 'two-class-logits')
    nodes.push(
      node('Neg', ['z'], ['unchanged']),
      node(
        'Concat',
        ['unchanged', 'z'],
        ['change'],
        [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 1 }],
      ),
    );
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'vision-console-tests',
    opsetImport: [{ domain: '', version: 17 }],
    graph: {
      name: 'siamese-change',
      node: nodes,
      initializer: [
        {
          name: 'channels',
          dims: [1],
          dataType: ELEMENT.int64,
          rawData: new Uint8Array(BigInt64Array.of(1n).buffer),
        },
        scalar('threshold', options.threshold),
        scalar('gain', options.gain),
      ],
      input: [sizedInfo('A', 3), sizedInfo('B', 3)],
      output: [sizedInfo('change', options.output === 'two-class-logits' ? 2 : 1)],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}
