/**
 * The rule editor's form (service-interface 2.4-2.6) and its validation with the engine's own
 * checks: the AppUpdateBody schema of PUT /api/zapk/{zapk_id}/app/{app_id} (engine/api/schemas.ts)
 * and then ruleProblems (engine/rules/validate.ts), the model-independent part of the server's
 * semantic checks. Nothing here restates a rule by hand.
 */

import type { Rule } from '../../../engine/contract';
import { AppUpdateBody, ruleProblems } from '../../../engine/contract';
import { type FieldErrors, type FieldMessage, fieldPath, schemaErrors, splitProblem } from './schema-errors';

/** A number field as typed: a number, or the text while it is not one (so it can be reported). */
export type NumberInput = number | string;

export interface ClassDraft {
  class_id: string;
  name: string;
  color: string;
  threshold: NumberInput;
  min_pixel: NumberInput;
  max_pixel: NumberInput;
}

export interface ClassCountDraft {
  class_id: string;
  min_count: NumberInput;
  max_count: NumberInput;
}

export interface CounterDraft {
  numeric_type: NumberInput;
  distance: NumberInput;
  min_count: NumberInput;
  max_count: NumberInput;
  class_counts: ClassCountDraft[];
}

export interface RuleDraft {
  name: string;
  interval: NumberInput;
  /** null: no area colour. */
  class_area: { color: string } | null;
  classes: ClassDraft[];
  /** null: no counter. */
  counter: CounterDraft | null;
  /** Both '' while the rule has none: the engine's default (3 of 5) applies. */
  inertia: { hits: NumberInput; frames: NumberInput };
  /** null: no left-object watch. */
  left_object: LeftObjectDraft | null;
  /** null: no removed-object watch. */
  removed_object: RemovedObjectDraft | null;
  /** '' while the rule has none: left out, the engine's default ("always") applies. */
  stationary: '' | 'always' | 'once';
  /** null while the rule has none: left out (the engine keeps what it has). */
  speed: SpeedDraft[] | null;
}

export interface SpeedDraft {
  class_id: string;
  min_speed: NumberInput;
  max_speed: NumberInput;
}

/** '' in `meters` and `person_class_id`: left out, so the engine's default applies. */
export interface LeftObjectDraft {
  seconds: NumberInput;
  radius: NumberInput;
  meters: NumberInput;
  person_class_id: string;
}

/** '' in `person_class_id`: left out, so the engine's default applies. */
export interface RemovedObjectDraft {
  seconds: NumberInput;
  fraction: NumberInput;
  person_class_id: string;
}

/** The listing's rule (classes keyed by class_id) as an editable form. */
export function draftFromListing(name: string, listed: unknown): RuleDraft {
  const rule = (listed && typeof listed === 'object' ? listed : {}) as {
    interval?: number;
    class_area?: { color: string };
    classes?: Record<string, ClassDraft> | ClassDraft[];
    counter?: CounterDraft;
    inertia?: { hits: number; frames: number };
    left_object?: Partial<LeftObjectDraft>;
    removed_object?: Partial<RemovedObjectDraft>;
    stationary?: 'always' | 'once';
    speed?: SpeedDraft[];
  };
  const left = rule.left_object;
  const removed = rule.removed_object;
  const classes = Array.isArray(rule.classes) ? rule.classes : Object.values(rule.classes ?? {});
  return {
    name,
    interval: rule.interval ?? 0,
    class_area: rule.class_area ? { color: rule.class_area.color } : null,
    classes: classes.map((entry) => ({ ...entry })),
    counter: rule.counter
      ? { ...rule.counter, class_counts: rule.counter.class_counts.map((count) => ({ ...count })) }
      : null,
    inertia: rule.inertia ? { ...rule.inertia } : { hits: '', frames: '' },
    left_object: left
      ? {
          seconds: left.seconds ?? '',
          radius: left.radius ?? '',
          meters: left.meters ?? '',
          person_class_id: left.person_class_id ?? '',
        }
      : null,
    removed_object: removed
      ? {
          seconds: removed.seconds ?? '',
          fraction: removed.fraction ?? '',
          person_class_id: removed.person_class_id ?? '',
        }
      : null,
    stationary: rule.stationary ?? '',
    speed: rule.speed ? rule.speed.map((limit) => ({ ...limit })) : null,
  };
}

/** Text that is a plain decimal number becomes that number; anything else stays text for the check. */
export function toNumber(value: NumberInput): NumberInput {
  if (typeof value === 'number') return value;
  const text = value.trim();
  return /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text) ? Number(text) : value;
}

/** The PUT body for a draft. Sections the form has not got are left out (the engine keeps them). */
export function bodyOf(draft: RuleDraft): { name: string; rule: Rule } {
  const rule: Record<string, unknown> = {
    interval: toNumber(draft.interval),
    classes: draft.classes.map((entry) => ({
      class_id: entry.class_id,
      name: entry.name,
      color: entry.color,
      threshold: toNumber(entry.threshold),
      min_pixel: toNumber(entry.min_pixel),
      max_pixel: toNumber(entry.max_pixel),
    })),
  };
  if (draft.class_area) rule.class_area = { color: draft.class_area.color };
  if (draft.counter) {
    const counter = draft.counter;
    rule.counter = {
      numeric_type: toNumber(counter.numeric_type),
      distance: toNumber(counter.distance),
      min_count: toNumber(counter.min_count),
      max_count: toNumber(counter.max_count),
      class_counts: counter.class_counts.map((count) => ({
        class_id: count.class_id,
        min_count: toNumber(count.min_count),
        max_count: toNumber(count.max_count),
      })),
    };
  }
  const { hits, frames } = draft.inertia;
  // Left out while both are empty: the engine keeps what it has (its default 3 of 5 when nothing).
  if (String(hits).trim() !== '' || String(frames).trim() !== '')
    rule.inertia = { hits: toNumber(hits), frames: toNumber(frames) };
  const person = (id: string) => (id.trim() === '' ? {} : { person_class_id: id.trim() });
  const left = draft.left_object;
  if (left) {
    rule.left_object = {
      seconds: toNumber(left.seconds),
      radius: toNumber(left.radius),
      ...(String(left.meters).trim() === '' ? {} : { meters: toNumber(left.meters) }),
      ...person(left.person_class_id),
    };
  }
  const removed = draft.removed_object;
  if (removed) {
    rule.removed_object = {
      seconds: toNumber(removed.seconds),
      fraction: toNumber(removed.fraction),
      ...person(removed.person_class_id),
    };
  }
  if (draft.stationary !== '') rule.stationary = draft.stationary;
  if (draft.speed) {
    rule.speed = draft.speed.map((limit) => ({
      class_id: limit.class_id,
      min_speed: toNumber(limit.min_speed),
      max_speed: toNumber(limit.max_speed),
    }));
  }
  return { name: draft.name, rule: rule as Rule };
}

/**
 * One problem line of ruleProblems ("rule.classes[0]: min_pixel 5 is greater than max_pixel 2") as
 * the field it concerns and a translatable message.
 */
export function problemMessage(line: string): { path: string; message: FieldMessage } {
  const split = splitProblem(line);
  const path = split?.path ?? '';
  const what = split?.what ?? line;
  const order =
    /^(min_pixel|min_count|min_speed) (\S+) is greater than (max_pixel|max_count|max_speed) (\S+)$/.exec(
      what,
    );
  if (order) {
    return {
      path: `${path}.${order[3]}`,
      message: { key: 'validation.minAboveMax', params: { min: order[2] ?? '', max: order[4] ?? '' } },
    };
  }
  const inertia = /^hits (\S+) is greater than frames (\S+)$/.exec(what);
  if (inertia) {
    return {
      path: `${path}.frames`,
      message: {
        key: 'validation.hitsAboveFrames',
        params: { hits: inertia[1] ?? '', frames: inertia[2] ?? '' },
      },
    };
  }
  const duplicate = /^duplicate class_id "(.*)"$/.exec(what);
  if (duplicate)
    return { path, message: { key: 'validation.duplicateClass', params: { id: duplicate[1] ?? '' } } };
  const unknown = /^the model has no class "(.*)"$/.exec(what);
  if (unknown) return { path, message: { key: 'validation.unknownClass', params: { id: unknown[1] ?? '' } } };
  return { path, message: { key: 'validation.invalid', text: what } };
}

/** Field errors of a draft, keyed like "rule.classes.0.threshold" or "name"; empty when it can be sent. */
export function validateRuleDraft(draft: RuleDraft): FieldErrors {
  const body = bodyOf(draft);
  const errors = schemaErrors(AppUpdateBody, body);
  if (Object.keys(errors).length > 0) return errors;
  for (const line of ruleProblems(body.rule, null)) {
    const { path, message } = problemMessage(line);
    if (!(path in errors)) errors[path] = message;
  }
  return errors;
}

/** The engine's refusal of a PUT on the field its envelope names; under "" when it names none. */
export function serverFieldError(error: { field?: string; msg: string }): {
  path: string;
  message: FieldMessage;
} {
  return {
    path: error.field === undefined ? '' : fieldPath(error.field),
    message: { key: 'validation.invalid', text: error.msg },
  };
}
