import { describe, expect, it } from 'vitest';
import { param, paths, screenOf, seqParam } from '../renderer/src/routes';
import { headerPath, useVisited } from '../renderer/src/visited';

describe('console addresses', () => {
  it('every screen and what a link names has a path, read back as it was written', () => {
    const task = '6f1c2a9e-0000-4000-8000-000000000001';
    expect(paths.task(task)).toBe(`/tasks/${task}`);
    expect(paths.live(task)).toBe(`/live/${task}`);
    expect(paths.live(null)).toBe('/live');
    expect(paths.optimization(task, 'run-1')).toBe(`/optimization/${task}/run-1`);
    expect(paths.optimization(task, null)).toBe(`/optimization/${task}`);
    expect(paths.optimization(null, 'run-1')).toBe('/optimization');
    expect(paths.event(task, 12, 'person:0')).toBe(`/events/${task}/12/person%3A0`);
    expect(paths.images(task)).toBe(`/images/${task}`);
    expect(param('person%3A0')).toBe('person:0');
    expect(param(undefined)).toBeNull();
    expect(param('%E0%A4%A')).toBe('%E0%A4%A');
    expect(seqParam('12')).toBe(12);
    expect([seqParam('0'), seqParam('1.5'), seqParam('x'), seqParam(undefined)]).toEqual([
      null,
      null,
      null,
      null,
    ]);
  });

  it('an id cannot add segments to a path', () => {
    expect(paths.live('a/../../settings')).toBe('/live/a%2F..%2F..%2Fsettings');
    expect(param('a%2F..%2F..%2Fsettings')).toBe('a/../../settings');
  });

  it('names the screen of a path for the header', () => {
    expect(screenOf('/live/abc')).toBe('live');
    expect(screenOf('/optimization')).toBe('optimization');
    expect(screenOf('/events/t/3/r')).toBe('events');
    expect(screenOf('/')).toBeNull();
    expect(screenOf('/nowhere')).toBeNull();
  });

  it('the header reopens live, optimization and images as they were left, the others plain', () => {
    const { visit } = useVisited.getState();
    for (const path of [
      '/live/t1',
      '/optimization/t1/r1',
      '/images/t2',
      '/tasks/t1',
      '/events/t1/3/r',
      '/live/t3',
    ]) {
      visit(path);
    }
    const { last } = useVisited.getState();
    expect(
      ['live', 'optimization', 'images', 'tasks', 'events', 'packages'].map((screen) =>
        headerPath(screen as never, last),
      ),
    ).toEqual(['/live/t3', '/optimization/t1/r1', '/images/t2', '/tasks', '/events', '/packages']);
  });
});
