import { describe, expect, it } from 'vitest';
import { toApiError } from '../engine/api/domain-errors';
import { ERRORS } from '../engine/contract/errors';
import { DomainError } from '../engine/domain-error';
import { DecodeBudget } from '../engine/images/budget';

/** A job that holds its budget until finish() is called, and says when it began. */
function job(log: string[], name: string) {
  let finish = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    work: async () => {
      log.push(name);
      await done;
      return name;
    },
    finish: () => finish(),
  };
}

const tick = () => new Promise((done) => setTimeout(done, 10));

describe('DecodeBudget', () => {
  it('runs what fits, and the rest first come, first served as room frees up', async () => {
    const budget = new DecodeBudget(10, 60_000);
    const log: string[] = [];
    const [a, b, c] = [job(log, 'a'), job(log, 'b'), job(log, 'c')];
    const ran = [budget.run(6, a.work), budget.run(6, b.work), budget.run(2, c.work)];
    await tick();
    // c would fit beside a, but b came first: a large image is not starved by small ones.
    expect(log).toEqual(['a']);
    a.finish();
    await tick();
    expect(log).toEqual(['a', 'b', 'c']);
    b.finish();
    c.finish();
    expect(await Promise.all(ran)).toEqual(['a', 'b', 'c']);
  });

  it('refuses a waiter with 503 (50302) after its wait, and lets those behind it in', async () => {
    const budget = new DecodeBudget(10, 100);
    const log: string[] = [];
    const [held, large, small] = [job(log, 'held'), job(log, 'large'), job(log, 'small')];
    const holding = budget.run(8, held.work);
    const refused = budget.run(5, large.work).catch((error: unknown) => error);
    const behind = budget.run(2, small.work);
    const error = await refused;
    expect(error).toBeInstanceOf(DomainError);
    expect(toApiError(error)).toMatchObject({
      code: ERRORS.IMAGES_BUSY.code,
      status: 503,
      headers: { 'retry-after': '1' },
    });
    await tick();
    expect(log).toEqual(['held', 'small']);
    held.finish();
    small.finish();
    expect(await Promise.all([holding, behind])).toEqual(['held', 'small']);
  });

  it('refuses at once (413, 41302) what could never fit, however empty it is', async () => {
    const budget = new DecodeBudget(100_000_000, 60_000);
    const log: string[] = [];
    const error = await budget.run(150_000_000, job(log, 'x').work).catch((thrown: unknown) => thrown);
    expect(toApiError(error)).toMatchObject({
      code: ERRORS.IMAGE_TOO_LARGE.code,
      message: 'body: the images are 150.0 megapixels together; at most 100.0 megapixels are decoded at once',
    });
    expect(log).toEqual([]);
  });
});
