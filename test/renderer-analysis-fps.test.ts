import { describe, expect, it } from 'vitest';
import { analysisFpsOf } from '../renderer/src/tasks/analysis-fps';

describe('the analysis rate field', () => {
  it('is no field when empty, a number when it reads as one, and a problem otherwise', () => {
    expect(analysisFpsOf('  ')).toEqual({});
    expect(analysisFpsOf(' 2.5 ')).toEqual({ value: 2.5 });
    // The range is the engine schema's to check, so that the form and the engine say the same.
    expect(analysisFpsOf('0')).toEqual({ value: 0 });
    expect(analysisFpsOf('fast')).toEqual({ problem: { key: 'validation.number' } });
  });
});
