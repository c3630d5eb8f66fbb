/**
 * One camera's overrides of its apps' rules as the task editor edits them: a text per tunable field
 * (empty: the app's value), turned into the engine's RuleOverride. Fields the editor does not show
 * (set over the API) are kept as they are.
 */
import type { ListedRule, Rule, RuleOverride } from '../../../engine/contract';
import { layRule, ruleProblems } from '../../../engine/contract';

/** A tunable field: where it lives in the override, and the app's value shown as its placeholder. */
export interface OverrideField {
  /** "interval", "classes.<class_id>.threshold", "left_object.seconds"… */
  key: string;
  /** What the field tunes, for its label: a rule field, of a class where it belongs to one. */
  field: 'interval' | 'threshold' | 'min_pixel' | 'max_pixel' | 'left_seconds' | 'removed_seconds';
  className?: string;
  appValue: number;
  step: number;
}

/** Texts by field key; a key left out follows the app. */
export type OverrideDraft = Record<string, string>;

const CLASS_FIELDS = [
  ['threshold', 0.01],
  ['min_pixel', 1],
  ['max_pixel', 1],
] as const;

/** The app's rule as the engine stores it, from the listing (classes keyed by class_id there). */
export function ruleOfListing(listed: unknown): Rule {
  const { classes, length_reference: _reference, ...rest } = (listed ?? {}) as ListedRule;
  return { ...rest, ...(classes && { classes: Object.values(classes) }) } as Rule;
}

/** The fields an operator tunes per camera for an app with this rule. */
export function overrideFields(rule: Rule): OverrideField[] {
  const fields: OverrideField[] = [
    { key: 'interval', field: 'interval', appValue: rule.interval ?? 0, step: 1 },
  ];
  for (const entry of rule.classes ?? []) {
    for (const [field, step] of CLASS_FIELDS)
      fields.push({
        key: `classes.${entry.class_id}.${field}`,
        field,
        className: entry.name,
        appValue: entry[field],
        step,
      });
  }
  if (rule.left_object)
    fields.push({
      key: 'left_object.seconds',
      field: 'left_seconds',
      appValue: rule.left_object.seconds,
      step: 1,
    });
  if (rule.removed_object)
    fields.push({
      key: 'removed_object.seconds',
      field: 'removed_seconds',
      appValue: rule.removed_object.seconds,
      step: 1,
    });
  return fields;
}

/** The texts of the fields an override sets. */
export function draftOf(override: RuleOverride | undefined): OverrideDraft {
  const draft: OverrideDraft = {};
  if (!override) return draft;
  if (override.interval !== undefined) draft.interval = String(override.interval);
  for (const entry of override.classes ?? [])
    for (const [field] of CLASS_FIELDS)
      if (entry[field] !== undefined) draft[`classes.${entry.class_id}.${field}`] = String(entry[field]);
  if (override.left_object?.seconds !== undefined)
    draft['left_object.seconds'] = String(override.left_object.seconds);
  if (override.removed_object?.seconds !== undefined)
    draft['removed_object.seconds'] = String(override.removed_object.seconds);
  return draft;
}

/**
 * The override the texts make over the stored one (fields not shown kept), and the keys whose
 * text is not a number.
 */
export function overrideOf(
  stored: RuleOverride | undefined,
  draft: OverrideDraft,
  fields: readonly OverrideField[],
): { override: RuleOverride; notNumbers: string[] } {
  const notNumbers: string[] = [];
  const numberAt = (key: string): number | undefined => {
    const text = draft[key]?.trim() ?? '';
    if (text === '') return undefined;
    const value = Number(text);
    if (!Number.isFinite(value)) notNumbers.push(key);
    return Number.isFinite(value) ? value : undefined;
  };
  const { interval: _interval, classes, left_object, removed_object, ...kept } = stored ?? {};
  const override: RuleOverride = { ...kept };
  const interval = numberAt('interval');
  if (interval !== undefined) override.interval = interval;

  const shown = new Set(fields.map((field) => field.key));
  const byClass = new Map((classes ?? []).map((entry) => [entry.class_id, { ...entry }]));
  for (const field of fields) {
    const [, classId, name] = field.key.split('.');
    if (!field.key.startsWith('classes.') || classId === undefined) continue;
    const entry = byClass.get(classId) ?? { class_id: classId };
    const value = numberAt(field.key);
    const key = name as (typeof CLASS_FIELDS)[number][0];
    if (value === undefined) delete entry[key];
    else entry[key] = value;
    byClass.set(classId, entry);
  }
  const tuned = [...byClass.values()].filter((entry) => Object.keys(entry).length > 1);
  if (tuned.length > 0) override.classes = tuned;

  for (const [part, current] of [
    ['left_object', left_object],
    ['removed_object', removed_object],
  ] as const) {
    const key = `${part}.seconds`;
    const { seconds: storedSeconds, ...others } = current ?? {};
    const seconds = shown.has(key) ? numberAt(key) : storedSeconds;
    const next = { ...others, ...(seconds !== undefined && { seconds }) };
    if (Object.keys(next).length > 0) override[part] = next;
  }
  return { override, notNumbers };
}

/** The rule checks of the engine on the rule this camera would run: "field: what is wrong" lines. */
export function overrideProblems(rule: Rule, override: RuleOverride): string[] {
  return ruleProblems(layRule(rule, override), null);
}
