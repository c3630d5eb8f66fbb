import { type Static, Type } from '@sinclair/typebox';
import {
  BUILTIN_FAMILIES,
  CHANGE_MODEL_FAMILIES,
  hasWeights,
  isChangeModelFamily,
  isOnnxFamily,
  ONNX_FAMILIES,
} from '../inference/families';
import { APP_TYPE, AppType, LengthReference, Rule } from '../rules/schema';
import { ruleProblems } from '../rules/validate';
import { compileCheck } from '../schema/ajv';
import { hasUnsafeCharacter, Name } from '../schema/text';

/**
 * manifest.json of a .zapk package: the package identity, the models with their exact pre- and
 * post-processing, and the applications built on them. Class ids are label indices as decimal strings.
 */

/** A string limited to a fixed set; ajv then reports "must be one of [...]" instead of a bare anyOf error. */
function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

const ArchivePath = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'Relative path inside the package',
});
const Triple = Type.Array(Type.Number(), { minItems: 3, maxItems: 3 });

export const ModelInput = Type.Object(
  {
    width: Type.Integer({ minimum: 32, maximum: 4096 }),
    height: Type.Integer({ minimum: 32, maximum: 4096 }),
    channel_order: StringEnum(['RGB', 'BGR'] as const),
    scale: Type.Number({
      exclusiveMinimum: 0,
      description: 'Pixel values (0..255) are multiplied by this first',
    }),
    mean: Triple,
    std: Type.Array(Type.Number({ exclusiveMinimum: 0 }), { minItems: 3, maxItems: 3 }),
    letterbox: StringEnum(['top-left', 'center', 'stretch'] as const, {
      description: 'Where the resized image sits; stretch fills the input, ignoring the aspect (DETR family)',
    }),
    pad_value: Type.Integer({ minimum: 0, maximum: 255 }),
    layout: Type.Optional(
      StringEnum(['NCHW', 'NHWC'] as const, { description: 'Tensor layout of the input; default NCHW' }),
    ),
    dtype: Type.Optional(
      StringEnum(['float32', 'uint8'] as const, {
        description:
          'Element type of the input; uint8 takes the raw 0..255 values (SSD exports); default float32',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ModelInput = Static<typeof ModelInput>;

export const ModelSpec = Type.Object(
  {
    family: StringEnum([...ONNX_FAMILIES, ...CHANGE_MODEL_FAMILIES, ...BUILTIN_FAMILIES] as const),
    file: Type.Optional(ArchivePath),
    sha256: Type.Optional(
      Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Lower-case hex digest of file' }),
    ),
    input: Type.Optional(ModelInput),
    change_output: Type.Optional(
      StringEnum(['probabilities', 'logits'] as const, {
        description:
          'siamese-change only: what its change map holds, [1,1,H,W] or [1,2,H,W] (channel 1 "changed"); logits go through a sigmoid (one channel) or a softmax (two); default probabilities',
      }),
    ),
    labels: Type.Union([
      ArchivePath,
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 1000 }),
    ]),
    score_threshold: Type.Number({ minimum: 0, maximum: 1 }),
    nms_iou: Type.Number({ minimum: 0, maximum: 1 }),
    class_agnostic_nms: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type ModelSpec = Static<typeof ModelSpec>;

export const AppSpec = Type.Object(
  {
    app_id: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' }),
    name: Name({ minLength: 1, maxLength: 128 }),
    type: AppType,
    model: Type.String({ minLength: 1, maxLength: 64 }),
    rule: Rule,
    length_reference: Type.Optional(LengthReference),
    license_expire: Type.Integer({ minimum: 0, description: 'Unix seconds; 0 only with perpetual' }),
    perpetual: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type AppSpec = Static<typeof AppSpec>;

export const Manifest = Type.Object(
  {
    format: Type.Literal(1),
    zapk_id: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' }),
    name: Name({ minLength: 1, maxLength: 128 }),
    version: Type.String({
      minLength: 1,
      maxLength: 32,
      pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+([-+][0-9A-Za-z.+-]+)?$',
      description: 'MAJOR.MINOR.PATCH with an optional -pre or +build suffix',
    }),
    models: Type.Record(Type.String(), ModelSpec),
    apps: Type.Array(AppSpec, { minItems: 1, maxItems: 64 }),
  },
  { additionalProperties: false },
);
export type Manifest = Static<typeof Manifest>;

/** Shape check only; returns the first offending field as "manifest.apps[0].type: ...". */
export const checkManifestShape = compileCheck<Manifest>(Manifest, 'manifest');

const MODEL_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * True for a plain relative path that stays inside the folder it is resolved against on every OS:
 * no absolute or drive-letter paths, no backslashes, no NUL, no empty, "." or ".." segments, and no
 * colon at all (drive letters, and NTFS alternate data streams such as "a.txt:hidden").
 */
export function isSafeRelativePath(p: string): boolean {
  if (p.length === 0 || /[\\\0:]/.test(p) || p.startsWith('/')) return false;
  return p.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** One label per line; a UTF-8 BOM, a final newline and CRLF line ends are tolerated. */
export function parseLabels(text: string | Buffer): string[] {
  const lines = String(text)
    .replace(/^\uFEFF/, '')
    .replace(/\r\n/g, '\n')
    .split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** The labels of a model: its inline list, or its labels file read through readText (archive-relative path). */
export function labelsOf(
  manifest: Manifest,
  modelId: string,
  readText: (path: string) => string | Buffer,
): string[] {
  const model = manifest.models[modelId];
  if (!model) throw new Error(`the package has no model "${modelId}"`);
  return Array.isArray(model.labels) ? model.labels : parseLabels(readText(model.labels));
}

function labelListProblems(labels: readonly string[], at: string): string[] {
  if (labels.length === 0 || labels.length > 1000) {
    return [`${at}: must list 1 to 1000 labels, found ${labels.length}`];
  }
  const blank = labels.findIndex((label) => label.trim() === '' || label.length > 128);
  // A blank line would silently shift every later class id, so it is refused rather than skipped.
  if (blank >= 0) return [`${at}: label on line ${blank + 1} is empty or longer than 128 characters`];
  const unsafe = labels.findIndex(hasUnsafeCharacter);
  return unsafe >= 0
    ? [`${at}: label on line ${unsafe + 1} contains a control or bidirectional-override character`]
    : [];
}

function modelProblems(id: string, model: ModelSpec): string[] {
  const at = `manifest.models.${id}`;
  const problems: string[] = [];
  if (!MODEL_ID.test(id)) problems.push(`${at}: model id must match ${MODEL_ID.source}`);
  if (hasWeights(model.family)) {
    if (model.file === undefined) problems.push(`${at}.file: is required for family "${model.family}"`);
    if (model.input === undefined) problems.push(`${at}.input: is required for family "${model.family}"`);
  } else {
    for (const field of ['file', 'sha256', 'input'] as const) {
      if (model[field] !== undefined) {
        problems.push(`${at}.${field}: is not used by the weight-free family "${model.family}"`);
      }
    }
  }
  if (model.change_output !== undefined && !isChangeModelFamily(model.family)) {
    problems.push(`${at}.change_output: is used by the "siamese-change" family only`);
  }
  if (model.file !== undefined && !isSafeRelativePath(model.file)) {
    problems.push(`${at}.file: "${model.file}" is not a safe relative path`);
  }
  if (typeof model.labels === 'string' && !isSafeRelativePath(model.labels)) {
    problems.push(`${at}.labels: "${model.labels}" is not a safe relative path`);
  }
  return problems;
}

function appProblems(app: AppSpec, i: number, manifest: Manifest, labels: string[] | null): string[] {
  const at = `manifest.apps[${i}]`;
  const problems: string[] = [];
  const model = manifest.models[app.model];
  if (!model) return [`${at}.model: the package has no model "${app.model}"`];
  const comparesPairs = model.family === 'change' || isChangeModelFamily(model.family);
  // A detector under a change app installs, and its diff tasks are refused (42206): see docs/api.md.
  if (app.type === APP_TYPE.change && !comparesPairs && !isOnnxFamily(model.family)) {
    problems.push(`${at}.model: a change-detection app (type 2) cannot use the "${model.family}" family`);
  }
  if (app.type !== APP_TYPE.change && comparesPairs) {
    problems.push(`${at}.model: the "${model.family}" family serves change-detection apps (type 2) only`);
  }
  if (!app.perpetual && app.license_expire === 0) {
    problems.push(`${at}.license_expire: must be a Unix time in seconds unless perpetual is true`);
  }
  const known = labels === null ? null : new Set(labels.map((_, index) => String(index)));
  for (const problem of ruleProblems(app.rule, known)) problems.push(`${at}.${problem}`);
  return problems;
}

/**
 * Checks a shape-valid manifest beyond its schema: model ids and families, safe paths, unique app ids,
 * app/model fit, licenses and rules against the model's labels. labelsByModel must hold the labels of
 * every model whose labels live in a file; pass null to skip the label-dependent checks (class ids).
 * Returns "field: problem" lines; empty means valid.
 */
export function manifestProblems(
  manifest: Manifest,
  labelsByModel: ReadonlyMap<string, string[]> | null,
): string[] {
  const problems: string[] = [];
  const labels = new Map<string, string[] | null>();
  for (const [id, model] of Object.entries(manifest.models)) {
    problems.push(...modelProblems(id, model));
    const list = Array.isArray(model.labels) ? model.labels : (labelsByModel?.get(id) ?? null);
    if (labelsByModel !== null && list === null) {
      problems.push(`manifest.models.${id}.labels: the labels file "${model.labels}" was not read`);
    }
    if (list !== null) problems.push(...labelListProblems(list, `manifest.models.${id}.labels`));
    labels.set(id, list);
  }

  const appIds = new Set<string>();
  manifest.apps.forEach((app, i) => {
    if (appIds.has(app.app_id)) problems.push(`manifest.apps[${i}].app_id: duplicate app_id "${app.app_id}"`);
    appIds.add(app.app_id);
    problems.push(...appProblems(app, i, manifest, labels.get(app.model) ?? null));
  });
  return problems;
}
