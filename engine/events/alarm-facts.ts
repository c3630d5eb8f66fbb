/**
 * What alarm review filters an event by, taken from its body once when it is stored: the rules that
 * fired, their classes and the best object score. Lists are kept as ",a,b," so that one LIKE
 * '%,a,%' finds a member (the events repository's filters, and migration 6's backfill, write the same).
 */
import type { CallbackBody } from './schema';

export interface AlarmFacts {
  rules: string;
  classes: string;
  max_score: number;
}

const list = (values: readonly string[]) => (values.length > 0 ? `,${[...new Set(values)].join(',')},` : '');

export function alarmFacts(body: CallbackBody): AlarmFacts {
  if (body.event !== 'message') return { rules: '', classes: '', max_score: 0 };
  const { rules } = body.data;
  let best = 0;
  for (const rule of rules) for (const object of rule.objects) best = Math.max(best, object.score);
  return {
    rules: list(rules.map((rule) => rule.id)),
    classes: list(rules.map((rule) => rule.class_id)),
    max_score: best,
  };
}

/**
 * A filter's member of a ",a,b," list as the LIKE pattern that finds it (LIKE's wildcards in it
 * escaped with \\); undefined when the filter leaves it out.
 */
export const memberPattern = (value: string | undefined) =>
  value === undefined ? undefined : `%,${value.replace(/[\\%_]/g, (c) => `\\${c}`)},%`;
