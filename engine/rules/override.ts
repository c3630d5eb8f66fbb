import { type Static, Type } from '@sinclair/typebox';
import { ClassEntry, Counter, LeftObject, RemovedObject, Rule } from './schema';

/**
 * One camera's overrides of an app's rule (extension, issue 34): the values an operator tunes per
 * camera, each derived from the rule's own schema, laid over the app's rule for that camera only.
 * What an override leaves out follows the app's rule, its later edits included.
 */

/** A class entry's tunable values; the class must be one of the app's rule (its name and colour stay the app's). */
export const ClassOverride = Type.Object(
  {
    class_id: ClassEntry.properties.class_id,
    ...Type.Partial(Type.Pick(ClassEntry, ['threshold', 'min_pixel', 'max_pixel'])).properties,
  },
  { additionalProperties: false },
);
export type ClassOverride = Static<typeof ClassOverride>;

const closed = { additionalProperties: false } as const;

export const RuleOverride = Type.Object(
  {
    interval: Rule.properties.interval,
    classes: Type.Optional(
      Type.Array(ClassOverride, {
        maxItems: 1000,
        description: "Per class of the app's rule: the threshold and size bounds this camera uses",
      }),
    ),
    counter: Type.Optional(Type.Partial(Type.Pick(Counter, ['distance', 'min_count', 'max_count']), closed)),
    inertia: Rule.properties.inertia,
    stationary: Rule.properties.stationary,
    left_object: Type.Optional(Type.Partial(Type.Pick(LeftObject, ['seconds', 'radius', 'meters']), closed)),
    removed_object: Type.Optional(Type.Partial(Type.Pick(RemovedObject, ['seconds', 'fraction']), closed)),
  },
  {
    additionalProperties: false,
    description:
      "Extension: this camera's values of the app's rule (thresholds, times, counts); the fields left out follow the app's rule",
  },
);
export type RuleOverride = Static<typeof RuleOverride>;

/** The app's rule with one camera's override laid over it: the rule in force on that camera. */
export function layRule(rule: Rule, override: RuleOverride | undefined): Rule {
  if (!override) return rule;
  const { classes, counter, left_object, removed_object, ...whole } = override;
  const byClass = new Map((classes ?? []).map((entry) => [entry.class_id, entry]));
  // An override of a part the app's rule no longer has (edited away since) is left out, never half-made.
  return {
    ...rule,
    ...whole,
    ...(rule.classes && {
      classes: rule.classes.map((entry) => ({ ...entry, ...byClass.get(entry.class_id) })),
    }),
    ...(rule.counter && counter && { counter: { ...rule.counter, ...counter } }),
    ...(rule.left_object && left_object && { left_object: { ...rule.left_object, ...left_object } }),
    ...(rule.removed_object &&
      removed_object && { removed_object: { ...rule.removed_object, ...removed_object } }),
  };
}

/**
 * What an override asks of the app's rule that it lacks: a class it has no entry for, a part
 * (counter, left_object, removed_object) it has not. "field: what is wrong" lines; empty means it fits.
 */
export function overrideMisfits(rule: Rule, override: RuleOverride): string[] {
  const problems: string[] = [];
  const known = new Set((rule.classes ?? []).map((entry) => entry.class_id));
  const seen = new Set<string>();
  override.classes?.forEach((entry, i) => {
    const at = `classes[${i}].class_id`;
    if (seen.has(entry.class_id)) problems.push(`${at}: duplicate class_id "${entry.class_id}"`);
    seen.add(entry.class_id);
    if (!known.has(entry.class_id))
      problems.push(`${at}: the app's rule has no class "${entry.class_id}" to override`);
  });
  for (const part of ['counter', 'left_object', 'removed_object'] as const) {
    if (override[part] && !rule[part]) problems.push(`${part}: the app's rule has no ${part} to override`);
  }
  return problems;
}
