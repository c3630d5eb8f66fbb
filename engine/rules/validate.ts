import type { Rule } from './schema';

/**
 * Checks a rule beyond its JSON shape: class ids the model knows, bounds in order, no duplicates.
 * Returns the problems as "field: what is wrong" lines; empty means valid.
 */
export function ruleProblems(rule: Rule, knownClassIds: ReadonlySet<string> | null): string[] {
  const problems: string[] = [];
  const knows = (id: string) => knownClassIds === null || knownClassIds.has(id);

  const seen = new Set<string>();
  rule.classes?.forEach((entry, i) => {
    const at = `rule.classes[${i}]`;
    if (seen.has(entry.class_id)) problems.push(`${at}.class_id: duplicate class_id "${entry.class_id}"`);
    seen.add(entry.class_id);
    if (!knows(entry.class_id)) problems.push(`${at}.class_id: the model has no class "${entry.class_id}"`);
    if (entry.min_pixel > 0 && entry.max_pixel > 0 && entry.min_pixel > entry.max_pixel) {
      problems.push(`${at}: min_pixel ${entry.min_pixel} is greater than max_pixel ${entry.max_pixel}`);
    }
  });

  const counter = rule.counter;
  if (counter) {
    if (counter.max_count > 0 && counter.min_count > counter.max_count) {
      problems.push(
        `rule.counter: min_count ${counter.min_count} is greater than max_count ${counter.max_count}`,
      );
    }
    const counted = new Set<string>();
    counter.class_counts.forEach((cc, i) => {
      const at = `rule.counter.class_counts[${i}]`;
      if (counted.has(cc.class_id)) problems.push(`${at}.class_id: duplicate class_id "${cc.class_id}"`);
      counted.add(cc.class_id);
      if (!knows(cc.class_id)) problems.push(`${at}.class_id: the model has no class "${cc.class_id}"`);
      if (cc.max_count > 0 && cc.min_count > cc.max_count) {
        problems.push(`${at}: min_count ${cc.min_count} is greater than max_count ${cc.max_count}`);
      }
    });
  }
  const limited = new Set<string>();
  rule.speed?.forEach((limit, i) => {
    const at = `rule.speed[${i}]`;
    if (limited.has(limit.class_id)) problems.push(`${at}.class_id: duplicate class_id "${limit.class_id}"`);
    limited.add(limit.class_id);
    if (!knows(limit.class_id)) problems.push(`${at}.class_id: the model has no class "${limit.class_id}"`);
    if (limit.max_speed > 0 && limit.min_speed > limit.max_speed) {
      problems.push(`${at}: min_speed ${limit.min_speed} is greater than max_speed ${limit.max_speed}`);
    }
  });
  for (const key of ['left_object', 'removed_object'] as const) {
    const person = rule[key]?.person_class_id;
    if (person !== undefined && !knows(person)) {
      problems.push(`rule.${key}.person_class_id: the model has no class "${person}"`);
    }
  }
  const inertia = rule.inertia;
  if (inertia && inertia.hits > inertia.frames) {
    problems.push(`rule.inertia: hits ${inertia.hits} is greater than frames ${inertia.frames}`);
  }
  return problems;
}
