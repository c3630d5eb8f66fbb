import { describe, expect, it } from 'vitest';
import { AppUpdateBody } from '../engine/api/schemas';
import { Counter } from '../engine/rules/schema';
import { compileCheck } from '../engine/schema/ajv';
import {
  bodyOf,
  draftFromListing,
  type RuleDraft,
  serverFieldError,
  validateRuleDraft,
} from '../renderer/src/validation/rule';
import { pointerToPath, schemaErrors, splitProblem } from '../renderer/src/validation/schema-errors';

/**
 * The rule editor's checks: the engine's own AppUpdateBody schema (checked with TypeBox's
 * interpreter, which the console's CSP allows) and ruleProblems, each problem on its field.
 */

/** The listing of the example package's crowd app (classes keyed by class_id). */
const LISTED = {
  interval: 10,
  class_area: { color: '#af52de' },
  classes: {
    '0': { class_id: '0', name: 'person', color: '#af52de', threshold: 0.5, min_pixel: 0, max_pixel: 0 },
  },
  counter: { numeric_type: 0, distance: 80, min_count: 5, max_count: 0, class_counts: [] },
};

const serverCheck = compileCheck(AppUpdateBody, 'body');

function edit(change: (draft: RuleDraft) => void): RuleDraft {
  const draft = draftFromListing('Crowd gathering', LISTED);
  change(draft);
  return draft;
}

describe('rule form', () => {
  it('reads the listing into an array of classes and writes the update body back', () => {
    const draft = draftFromListing('Crowd gathering', LISTED);
    expect(validateRuleDraft(draft)).toEqual({});
    expect(bodyOf(draft)).toEqual({
      name: 'Crowd gathering',
      rule: {
        interval: 10,
        class_area: { color: '#af52de' },
        classes: [LISTED.classes['0']],
        counter: LISTED.counter,
      },
    });
    // Sections the form has not got are left out: the engine keeps the stored ones.
    const bare = bodyOf({ ...draft, class_area: null, counter: null });
    expect(Object.keys(bare.rule).sort()).toEqual(['classes', 'interval']);
  });

  it('typed text becomes a number when it is one, and is reported when it is not', () => {
    const errors = validateRuleDraft(
      edit((draft) => {
        (draft.classes[0] as { threshold: number | string }).threshold = ' 0.75 ';
        draft.interval = '';
      }),
    );
    expect(errors).toEqual({ 'rule.interval': { key: 'validation.number' } });
  });

  it('names the field and the bound of each shape problem', () => {
    const errors = validateRuleDraft(
      edit((draft) => {
        const entry = draft.classes[0] as RuleDraft['classes'][number];
        entry.threshold = 1.5;
        entry.color = 'red';
        entry.name = '';
        draft.interval = -1;
        draft.name = '';
        (draft.counter as NonNullable<RuleDraft['counter']>).numeric_type = 2;
        (draft.counter as NonNullable<RuleDraft['counter']>).min_count = 1.5;
      }),
    );
    expect(errors).toEqual({
      name: { key: 'validation.empty' },
      'rule.interval': { key: 'validation.min', params: { min: '0' } },
      'rule.classes.0.name': { key: 'validation.empty' },
      'rule.classes.0.color': { key: 'validation.color' },
      'rule.classes.0.threshold': { key: 'validation.max', params: { max: '1' } },
      'rule.counter.numeric_type': { key: 'validation.oneOf', params: { values: '[0,1]' } },
      'rule.counter.min_count': { key: 'validation.integer' },
    });
  });

  it('then the server-side checks of ruleProblems: bounds in order, no class twice', () => {
    const errors = validateRuleDraft(
      edit((draft) => {
        const entry = draft.classes[0] as RuleDraft['classes'][number];
        entry.min_pixel = 50;
        entry.max_pixel = 20;
        draft.classes.push({ ...entry, min_pixel: 0, max_pixel: 0 });
        const counter = draft.counter as NonNullable<RuleDraft['counter']>;
        counter.max_count = 3;
        counter.class_counts = [{ class_id: '0', min_count: 4, max_count: 2 }];
      }),
    );
    expect(errors).toEqual({
      'rule.classes.0.max_pixel': { key: 'validation.minAboveMax', params: { min: '50', max: '20' } },
      'rule.classes.1.class_id': { key: 'validation.duplicateClass', params: { id: '0' } },
      'rule.counter.max_count': { key: 'validation.minAboveMax', params: { min: '5', max: '3' } },
      'rule.counter.class_counts.0.max_count': {
        key: 'validation.minAboveMax',
        params: { min: '4', max: '2' },
      },
    });
  });

  it('agrees with the server: what it accepts the engine accepts, what it refuses the engine refuses', () => {
    const drafts: RuleDraft[] = [
      draftFromListing('Crowd gathering', LISTED),
      edit((draft) => {
        (draft.classes[0] as RuleDraft['classes'][number]).threshold = 1.01;
      }),
      edit((draft) => {
        (draft.classes[0] as RuleDraft['classes'][number]).color = '#12345g';
      }),
      edit((draft) => {
        draft.interval = 86_401;
      }),
      edit((draft) => {
        (draft.counter as NonNullable<RuleDraft['counter']>).distance = -0.5;
      }),
      edit((draft) => {
        draft.classes = Array.from({ length: 1001 }, (_, i) => ({
          ...LISTED.classes['0'],
          class_id: String(i),
        }));
      }),
      edit((draft) => {
        (draft.classes[0] as RuleDraft['classes'][number]).class_id = 'x'.repeat(65);
      }),
    ];
    for (const draft of drafts) {
      const local = Object.keys(schemaErrors(AppUpdateBody, bodyOf(draft))).length === 0;
      expect(serverCheck(bodyOf(draft)).ok, JSON.stringify(bodyOf(draft)).slice(0, 120)).toBe(local);
    }
    expect(drafts.filter((draft) => Object.keys(validateRuleDraft(draft)).length === 0)).toHaveLength(1);
  });

  it('reads and writes left and removed objects, leaving empty optional boxes out for the engine defaults', () => {
    const left = { seconds: 30, radius: 2, meters: 1.5, person_class_id: '0' };
    const removed = { seconds: 5, fraction: 0.3 };
    const listed = draftFromListing('Crowd gathering', {
      ...LISTED,
      left_object: left,
      removed_object: removed,
    });
    expect([listed.left_object, listed.removed_object]).toEqual([
      left,
      { seconds: 5, fraction: 0.3, person_class_id: '' },
    ]);
    const { rule } = bodyOf({ ...listed, left_object: { ...left, meters: ' ', person_class_id: '' } });
    expect([rule.left_object, rule.removed_object]).toEqual([{ seconds: 30, radius: 2 }, removed]);
    expect(
      validateRuleDraft({ ...listed, removed_object: { seconds: '5', fraction: '0', person_class_id: '' } }),
    ).toEqual({
      'rule.removed_object.fraction': { key: 'validation.above', params: { min: '0' } },
    });
  });

  it('leaves inertia out while both boxes are empty, sends it when typed, refuses more hits than frames', () => {
    expect(draftFromListing('Crowd gathering', LISTED).inertia).toEqual({ hits: '', frames: '' });
    expect(bodyOf(edit(() => {})).rule.inertia).toBeUndefined();
    const listed = draftFromListing('Crowd gathering', { ...LISTED, inertia: { hits: 2, frames: 4 } });
    expect(listed.inertia).toEqual({ hits: 2, frames: 4 });
    expect(bodyOf(edit((d) => (d.inertia = { hits: '4', frames: '6' }))).rule.inertia).toEqual({
      hits: 4,
      frames: 6,
    });
    expect(validateRuleDraft(edit((d) => (d.inertia = { hits: '5', frames: '3' })))).toEqual({
      'rule.inertia.frames': { key: 'validation.hitsAboveFrames', params: { hits: '5', frames: '3' } },
    });
    expect(validateRuleDraft(edit((d) => (d.inertia = { hits: '2', frames: '' })))).toEqual({
      'rule.inertia.frames': { key: 'validation.integer' },
    });
  });

  it('reads and writes stationary and speed, leaving them out while the rule has none', () => {
    const plain = draftFromListing('Crowd gathering', LISTED);
    expect([plain.stationary, plain.speed]).toEqual(['', null]);
    expect(Object.keys(bodyOf(plain).rule)).not.toContain('stationary');
    expect(Object.keys(bodyOf(plain).rule)).not.toContain('speed');
    const speed = [{ class_id: '0', min_speed: 1, max_speed: 3 }];
    const listed = draftFromListing('Crowd gathering', { ...LISTED, stationary: 'once', speed });
    expect([listed.stationary, listed.speed]).toEqual(['once', speed]);
    const { rule } = bodyOf({ ...listed, speed: [{ class_id: '0', min_speed: '1.5', max_speed: '0' }] });
    expect([rule.stationary, rule.speed]).toEqual([
      'once',
      [{ class_id: '0', min_speed: 1.5, max_speed: 0 }],
    ]);
    expect(validateRuleDraft(listed)).toEqual({});
    // The engine's own cross-field check, on the field, before anything is sent.
    expect(
      validateRuleDraft({ ...listed, speed: [{ class_id: '0', min_speed: '5', max_speed: '2' }] }),
    ).toEqual({
      'rule.speed.0.max_speed': { key: 'validation.minAboveMax', params: { min: '5', max: '2' } },
    });
    expect(validateRuleDraft({ ...listed, speed: [{ class_id: '0', min_speed: -1, max_speed: 0 }] })).toEqual(
      {
        'rule.speed.0.min_speed': { key: 'validation.min', params: { min: '0' } },
      },
    );
  });

  it('puts the engine’s own refusal on the field its envelope names', () => {
    const msg = 'body.rule.classes[0].class_id: the model has no class "7"';
    expect(serverFieldError({ field: 'rule.classes[0].class_id', msg })).toEqual({
      path: 'rule.classes.0.class_id',
      message: { key: 'validation.invalid', text: msg },
    });
    expect(serverFieldError({ msg: 'package "x" is used by a running task' })).toEqual({
      path: '',
      message: { key: 'validation.invalid', text: 'package "x" is used by a running task' },
    });
  });
});

describe('schema errors', () => {
  it('checks the engine’s enum fields (oneOf) and maps paths', () => {
    const counter = { numeric_type: 1, distance: 0, min_count: 0, max_count: 0, class_counts: [] };
    expect(schemaErrors(Counter, counter)).toEqual({});
    expect(schemaErrors(Counter, { ...counter, numeric_type: '1' })).toEqual({
      numeric_type: { key: 'validation.oneOf', params: { values: '[0,1]' } },
    });
    expect(schemaErrors(Counter, { ...counter, extra: 1 })).toEqual({
      extra: { key: 'validation.notAllowed' },
    });
    const { class_counts: _dropped, ...missing } = counter;
    expect(schemaErrors(Counter, missing)).toEqual({ class_counts: { key: 'validation.required' } });
    expect(pointerToPath('/rule/classes/0/a~1b')).toBe('rule.classes.0.a/b');
    expect(splitProblem('rule.classes[12].name: is required')).toEqual({
      path: 'rule.classes.12.name',
      what: 'is required',
    });
    expect(splitProblem('no field here')).toBeNull();
  });
});
