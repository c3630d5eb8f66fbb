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
