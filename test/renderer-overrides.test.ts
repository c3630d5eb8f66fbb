import { describe, expect, it } from 'vitest';
import type { Rule } from '../engine/contract';
import {
  draftOf,
  overrideFields,
  overrideOf,
  overrideProblems,
  ruleOfListing,
} from '../renderer/src/tasks/rule-overrides';

/** The task editor's "this camera's rule": texts per field to the engine's RuleOverride and back. */

const LISTED = {
  interval: 30,
  classes: {
    '0': { class_id: '0', name: 'person', color: '#ff0000', threshold: 0.5, min_pixel: 0, max_pixel: 0 },
    '2': { class_id: '2', name: 'car', color: '#0000ff', threshold: 0.6, min_pixel: 10, max_pixel: 0 },
  },
  left_object: { seconds: 60, radius: 2 },
  length_reference: { pixels: 100, meters: 2 },
};
const rule: Rule = ruleOfListing(LISTED);
const fields = overrideFields(rule);

describe("this camera's rule in the task editor", () => {
  it("offers the tunable fields with the app's values as placeholders", () => {
    expect(fields.map((f) => [f.key, f.appValue])).toEqual([
      ['interval', 30],
      ['classes.0.threshold', 0.5],
      ['classes.0.min_pixel', 0],
      ['classes.0.max_pixel', 0],
      ['classes.2.threshold', 0.6],
      ['classes.2.min_pixel', 10],
      ['classes.2.max_pixel', 0],
      ['left_object.seconds', 60],
    ]);
  });

  it('makes the override of the fields given, keeping what the editor does not show', () => {
    const stored = { inertia: { hits: 2, frames: 4 }, left_object: { radius: 3 } };
    const { override, notNumbers } = overrideOf(
      stored,
      { 'classes.2.threshold': '0.8', interval: ' 5 ', 'left_object.seconds': '20' },
      fields,
    );
    expect(notNumbers).toEqual([]);
    expect(override).toEqual({
      inertia: { hits: 2, frames: 4 },
      interval: 5,
      classes: [{ class_id: '2', threshold: 0.8 }],
      left_object: { radius: 3, seconds: 20 },
    });
    expect(draftOf(override)).toEqual({
      interval: '5',
      'classes.2.threshold': '0.8',
      'left_object.seconds': '20',
    });
  });

  it('drops a field reset to empty, and names a text that is not a number', () => {
    const stored = { classes: [{ class_id: '0', threshold: 0.7, min_pixel: 40 }] };
    const reset = overrideOf(stored, { 'classes.0.min_pixel': '40' }, fields);
    expect(reset.override).toEqual({ classes: [{ class_id: '0', min_pixel: 40 }] });
    expect(overrideOf(stored, {}, fields).override).toEqual({});
    expect(overrideOf(undefined, { interval: 'soon' }, fields).notNumbers).toEqual(['interval']);
  });

  it("checks the rule the camera would run with the engine's own cross-field checks", () => {
    expect(overrideProblems(rule, { classes: [{ class_id: '2', max_pixel: 5 }] })).toEqual([
      'rule.classes[1]: min_pixel 10 is greater than max_pixel 5',
    ]);
    expect(overrideProblems(rule, { classes: [{ class_id: '2', max_pixel: 50 }] })).toEqual([]);
  });
});
