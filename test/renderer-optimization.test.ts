import { describe, expect, it } from 'vitest';
import type { OptimizationView, Proposal, SampleView } from '../engine/optimization/schema';
import { columnsOf, keepSelection, moveSelection, verdictOfKey } from '../renderer/src/optimization/grid';
import { engineLink, exportPath, socketLink } from '../renderer/src/optimization/links';
import { decimal, hasVerdicts, proposalAction, signed, undoOf } from '../renderer/src/optimization/proposals';
import { busyApps, chosenRun, elapsedShare, secondsLeft } from '../renderer/src/optimization/run';
import {
  boxFromDrag,
  detectionCounts,
  replaceSample,
  sampleTags,
  withReason,
} from '../renderer/src/optimization/samples';
import { startErrors, startRequest } from '../renderer/src/optimization/start';
import { LinkSigner } from '../renderer/src/transport/link-signer';

/** The proposal of docs/api.md 4.13 (person, 0.8 proposed down to 0.53). */
function proposal(overrides: Partial<Proposal> = {}): Proposal {
  return {
    app_id: 'person',
    class_id: '0',
    name: 'person',
    current_threshold: 0.8,
    app_threshold: 0.8,
    proposed_threshold: 0.53,
    judged: 3,
    basis: { stable_tracks: 8, flickering_tracks: 4, right: 2, wrong: 1, missed: 0 },
    f1: { current: 0.364, proposed: 0.842 },
    alarms: { current: 185, proposed: 508, change: 323 },
    apply: {
      method: 'PUT',
      path: '/api/zapk/coco-yolox-nano/app/person',
      body: {
        rule: {
          classes: [
            { class_id: '0', name: 'person', color: '#ff3b30', threshold: 0.53, min_pixel: 0, max_pixel: 0 },
            { class_id: '2', name: 'car', color: '#30d158', threshold: 0.6, min_pixel: 0, max_pixel: 0 },
          ],
        },
      },
    },
    apply_camera: {
      method: 'PUT',
      path: '/api/task/7d1c2a4e-5b6f-4a8d-9c0e-1f2a3b4c5d6e',
      body: { rule_overrides: { person: { interval: 9, classes: [{ class_id: '0', threshold: 0.53 }] } } },
    },
    ...overrides,
  };
}

function sample(id: number, overrides: Partial<SampleView> = {}): SampleView {
  return {
    sample_id: id,
    app_id: 'person',
    frame_id: id * 10,
    timestamp: 1_795_248_233_861 + id,
    width: 768,
    height: 576,
    reasons: ['near_threshold'],
    annotations: [
      {
        class_id: '0',
        label: 'person',
        score: 0.85,
        bbox: [643, 239, 40, 83],
        track_id: '1',
        hard: true,
        verdict: 'none',
      },
      {
        class_id: '0',
        label: 'person',
        score: 0.5,
        bbox: [30, 110, 17, 32],
        track_id: null,
        hard: false,
        verdict: 'none',
      },
    ],
    missed: [],
    verdict: 'none',
    image_url: `/api/task/t/optimization/o/samples/${id}/image`,
    thumb_url: `/api/task/t/optimization/o/samples/${id}/image?thumb=true`,
    created_at: 1_795_248_225_976,
    ...overrides,
  };
}

function run(overrides: Partial<OptimizationView> = {}): OptimizationView {
  return {
    optimization_id: 'run-1',
    task_id: 'task-1',
    app_ids: ['person'],
    status: 'running',
    end_reason: '',
    duration: 30,
    max_samples: 500,
    created_at: 1_000_000,
    ends_at: 1_030_000,
    finished_at: null,
    frames_analysed: 10,
    sample_count: 2,
    samples_by_reason: { near_threshold: 2, flicker: 0, counter_toggle: 0 },
    verdicts: { right: 0, wrong: 0, none: 2 },
    samples_dropped: 0,
    sample_limit: null,
    image_bytes: 1000,
    proposals: [],
    ...overrides,
  };
}

describe('grid keyboard', () => {
  it('moves by one sideways and by a row up and down, staying inside the grid', () => {
    // 10 cells, 4 columns: rows 0-3, 4-7, 8-9.
    expect(moveSelection('ArrowRight', 0, 10, 4)).toBe(1);
    expect(moveSelection('ArrowRight', 9, 10, 4)).toBe(9);
    expect(moveSelection('ArrowLeft', 0, 10, 4)).toBe(0);
    expect(moveSelection('ArrowLeft', 5, 10, 4)).toBe(4);
    expect(moveSelection('ArrowDown', 1, 10, 4)).toBe(5);
    expect(moveSelection('ArrowDown', 5, 10, 4)).toBe(9);
    // Nothing below 7 in the short last row: the last cell.
    expect(moveSelection('ArrowDown', 7, 10, 4)).toBe(9);
    expect(moveSelection('ArrowDown', 8, 10, 4)).toBe(8);
    expect(moveSelection('ArrowUp', 9, 10, 4)).toBe(5);
    expect(moveSelection('ArrowUp', 3, 10, 4)).toBe(3);
    expect(moveSelection('Home', 6, 10, 4)).toBe(0);
    expect(moveSelection('End', 2, 10, 4)).toBe(9);
  });

  it('ignores other keys and empty grids, and treats a bad column count as one', () => {
    expect(moveSelection('a', 2, 10, 4)).toBeNull();
    expect(moveSelection('ArrowDown', 0, 0, 4)).toBeNull();
    expect(moveSelection('ArrowDown', 2, 10, 0)).toBe(3);
  });

  it('judges with R, W and N in either case', () => {
    expect(verdictOfKey('r')).toBe('right');
    expect(verdictOfKey('R')).toBe('right');
    expect(verdictOfKey('w')).toBe('wrong');
    expect(verdictOfKey('N')).toBe('none');
    expect(verdictOfKey('x')).toBeNull();
    expect(verdictOfKey('Enter')).toBeNull();
  });

  it('counts the columns of a computed grid template', () => {
    expect(columnsOf('216px 216px 216px 216px')).toBe(4);
    expect(columnsOf(' 300px ')).toBe(1);
    expect(columnsOf('none')).toBe(1);
    expect(columnsOf('')).toBe(1);
  });

  it('keeps the selected sample, or takes the one now at its place when it left the list', () => {
    expect(keepSelection(5, 1, [3, 5, 8])).toBe(5);
    expect(keepSelection(5, 1, [3, 8, 9])).toBe(8);
    expect(keepSelection(9, 2, [3, 8])).toBe(8);
    expect(keepSelection(null, 0, [3, 8])).toBe(3);
    expect(keepSelection(3, 0, [])).toBeNull();
  });
});

describe('proposal to rule update', () => {
  it('applies the engine request as a 4.3 update of the app', () => {
    const action = proposalAction(proposal());
    expect(action).toEqual({
      kind: 'apply',
      update: {
        target: 'app',
        zapkId: 'coco-yolox-nano',
        appId: 'person',
        body: proposal().apply?.body,
      },
    });
  });

  it("applies it to the run's camera only as that camera's override, and undoes it", () => {
    const action = proposalAction(proposal(), 'camera');
    expect(action).toEqual({
      kind: 'apply',
      update: {
        target: 'camera',
        taskId: '7d1c2a4e-5b6f-4a8d-9c0e-1f2a3b4c5d6e',
        appId: 'person',
        body: proposal().apply_camera?.body,
      },
    });
    if (action.kind !== 'apply') throw new Error('an apply action is expected');
    // The camera followed the app's 0.8: undone, its override keeps only what it had besides.
    expect(undoOf(action.update, proposal()).body).toEqual({ rule_overrides: { person: { interval: 9 } } });
    // A camera with its own 0.7 gets that back.
    const own = proposal({ current_threshold: 0.7 });
    expect(undoOf(action.update, own).body).toEqual({
      rule_overrides: { person: { interval: 9, classes: [{ class_id: '0', threshold: 0.7 }] } },
    });
    const another = proposal({
      apply_camera: { method: 'PUT', path: '/api/task/x', body: { rule_overrides: { crowd: {} } } },
    });
    expect(proposalAction(another, 'camera').kind).toBe('invalid');
  });

  it('offers nothing from a run whose samples of the class nobody judged', () => {
    const unjudged = proposal({ judged: 0 });
    expect(proposalAction(unjudged, 'app')).toEqual({ kind: 'none' });
    expect(proposalAction(unjudged, 'camera')).toEqual({ kind: 'none' });
  });

  it('undoes an applied proposal: the same rule with the replaced threshold back', () => {
    const action = proposalAction(proposal());
    if (action.kind !== 'apply') throw new Error('an apply action is expected');
    expect(undoOf(action.update, proposal())).toEqual({
      target: 'app',
      zapkId: 'coco-yolox-nano',
      appId: 'person',
      body: {
        rule: {
          classes: [
            { class_id: '0', name: 'person', color: '#ff3b30', threshold: 0.8, min_pixel: 0, max_pixel: 0 },
            { class_id: '2', name: 'car', color: '#30d158', threshold: 0.6, min_pixel: 0, max_pixel: 0 },
          ],
        },
      },
    });
  });

  it('shows F1 only once a sample of the class is judged', () => {
    expect(
      hasVerdicts(
        proposal({ basis: { stable_tracks: 8, flickering_tracks: 4, right: 0, wrong: 0, missed: 0 } }),
      ),
    ).toBe(false);
    expect(
      hasVerdicts(
        proposal({ basis: { stable_tracks: 8, flickering_tracks: 4, right: 0, wrong: 2, missed: 0 } }),
      ),
    ).toBe(true);
    expect(
      hasVerdicts(
        proposal({ basis: { stable_tracks: 0, flickering_tracks: 0, right: 1, wrong: 0, missed: 0 } }),
      ),
    ).toBe(true);
    expect(
      hasVerdicts(
        proposal({ basis: { stable_tracks: 0, flickering_tracks: 0, right: 0, wrong: 0, missed: 1 } }),
      ),
    ).toBe(true);
  });

  it('decodes the path segments the engine encoded', () => {
    const encoded = proposal({
      app_id: 'crowd zone',
      apply: {
        ...(proposal().apply as NonNullable<Proposal['apply']>),
        path: '/api/zapk/my%20pkg/app/crowd%20zone',
      },
    });
    const action = proposalAction(encoded);
    expect(
      action.kind === 'apply' &&
        action.update.target === 'app' && [action.update.zapkId, action.update.appId],
    ).toEqual(['my pkg', 'crowd zone']);
  });

  it('offers nothing without evidence and nothing when the threshold stays', () => {
    expect(proposalAction(proposal({ proposed_threshold: null, apply: null }))).toEqual({ kind: 'none' });
    expect(proposalAction(proposal({ app_threshold: 0.53 }))).toEqual({ kind: 'same' });
    expect(proposalAction(proposal({ current_threshold: 0.53 }), 'camera')).toEqual({ kind: 'same' });
  });

  it('never sends a request that is not an update of this class to the proposed value', () => {
    const base = proposal().apply as NonNullable<Proposal['apply']>;
    const cases: Array<[string, Proposal]> = [
      ['another endpoint', proposal({ apply: { ...base, path: '/api/task/x' } })],
      ['a path with a query', proposal({ apply: { ...base, path: '/api/zapk/p/app/person?x=1' } })],
      ['another app', proposal({ apply: { ...base, path: '/api/zapk/coco-yolox-nano/app/crowd' } })],
      ['another value', proposal({ proposed_threshold: 0.6 })],
      [
        'a body the schema refuses',
        proposal({
          proposed_threshold: 1.5,
          apply: {
            ...base,
            body: {
              rule: {
                classes: [
                  {
                    class_id: '0',
                    name: 'person',
                    color: '#ff3b30',
                    threshold: 1.5,
                    min_pixel: 0,
                    max_pixel: 0,
                  },
                ],
              },
            },
          },
        }),
      ],
    ];
    for (const [what, candidate] of cases) {
      expect(proposalAction(candidate).kind, what).toBe('invalid');
    }
  });

  it('shows changes with their sign and thresholds with two decimals', () => {
    expect(signed(323)).toBe('+323');
    expect(signed(-5)).toBe('\u22125');
    expect(signed(0)).toBe('0');
    expect(decimal(0.5)).toBe('0.50');
    expect(decimal(null)).toBe('\u2014');
  });
});

describe('engine links', () => {
  /** A signer whose engine mints "link-<n>" tokens and records each request; time moves by hand. */
  function signerWithClock() {
    const requests: string[][] = [];
    let now = 1_000_000;
    let minted = 0;
    const signer = new LinkSigner(
      async (paths) => {
        requests.push(paths);
        minted += 1;
        return {
          links: paths.map((path) => ({ path, url: `${path}?token=link-${minted}` })),
          expires_in: 600,
        };
      },
      () => now,
    );
    return { signer, requests, advance: (ms: number) => (now += ms) };
  }
  const settle = () => new Promise((done) => setTimeout(done, 0));
  const { signer, requests, advance } = signerWithClock();
  const web = { base: 'http://192.168.1.20:8080/', signer, token: 'api-token' };
  const desktop = { base: 'http://127.0.0.1:39217', signer: null, token: null };

  it('signs web links with a link token (one request for the page), never the API token', async () => {
    const thumb = '/api/task/t/optimization/o/samples/3/image?thumb=true';
    expect(engineLink(thumb, web)).toBeNull();
    expect(engineLink(exportPath('t', 'o'), web)).toBeNull();
    await settle();
    expect(requests).toEqual([
      ['/api/task/t/optimization/o/samples/3/image', '/api/task/t/optimization/o/export'],
    ]);
    expect(engineLink(thumb, web)).toBe(
      'http://192.168.1.20:8080/api/task/t/optimization/o/samples/3/image?thumb=true&token=link-1',
    );
    expect(engineLink(exportPath('t', 'o'), web)).toBe(
      'http://192.168.1.20:8080/api/task/t/optimization/o/export?token=link-1',
    );
    expect(engineLink(thumb, web)).not.toContain('api-token');
  });

  it('renews a link token a minute before it expires, and links nothing once it has', async () => {
    const path = '/api/task/t/optimization/o/export';
    advance(540_000);
    expect(engineLink(path, web)).toContain('token=link-1');
    await settle();
    expect(engineLink(path, web)).toContain('token=link-2');
    advance(600_000);
    expect(engineLink(path, web)).toBeNull();
  });

  it('puts the API token on video sockets alone', () => {
    expect(socketLink('/api/stream/s/socket', web)).toBe(
      'ws://192.168.1.20:8080/api/stream/s/socket?token=api-token',
    );
    expect(socketLink('/api/stream/s/socket', desktop)).toBe('ws://127.0.0.1:39217/api/stream/s/socket');
  });

  it('links the engine without a token in the desktop app', () => {
    expect(engineLink('/api/task/t/optimization/o/samples/3/image', desktop)).toBe(
      'http://127.0.0.1:39217/api/task/t/optimization/o/samples/3/image',
    );
  });

  it('refuses a path that would take the token elsewhere', () => {
    expect(engineLink('//evil.example/api/x', web)).toBeNull();
    expect(engineLink('http://evil.example/api/x', web)).toBeNull();
    expect(engineLink('/index.html', web)).toBeNull();
  });

  it('encodes ids in the export path', () => {
    expect(exportPath('a/b', 'c?d')).toBe('/api/task/a%2Fb/optimization/c%3Fd/export');
  });
});

describe('runs', () => {
  it('counts down a collecting run and fills its progress', () => {
    const collecting = run();
    expect(secondsLeft(collecting, 1_000_000)).toBe(30);
    expect(secondsLeft(collecting, 1_029_001)).toBe(1);
    expect(secondsLeft(collecting, 1_040_000)).toBe(0);
    expect(elapsedShare(collecting, 1_015_000)).toBe(0.5);
    expect(elapsedShare(collecting, 2_000_000)).toBe(1);
    const ended = run({ status: 'finished', end_reason: 'duration' });
    expect(secondsLeft(ended, 1_000_000)).toBe(0);
    expect(elapsedShare(ended, 1_000_000)).toBe(1);
  });

  it('shows the chosen run, else the latest', () => {
    const runs = [run({ optimization_id: 'a' }), run({ optimization_id: 'b' })];
    expect(chosenRun(runs, 'a')?.optimization_id).toBe('a');
    expect(chosenRun(runs, null)?.optimization_id).toBe('b');
    expect(chosenRun(runs, 'gone')?.optimization_id).toBe('b');
    expect(chosenRun([], null)).toBeNull();
  });

  it('names the apps that are in a collecting run', () => {
    const busy = busyApps([
      run({ optimization_id: 'old', app_ids: ['crowd'], status: 'finished' }),
      run({ optimization_id: 'now', app_ids: ['person', 'car'] }),
    ]);
    expect([...busy.entries()]).toEqual([
      ['person', 'now'],
      ['car', 'now'],
    ]);
  });
});

describe('samples', () => {
  it('filters by reason', () => {
    const list = [
      sample(1),
      sample(2, { reasons: ['flicker', 'near_threshold'] }),
      sample(3, { reasons: ['flicker'] }),
    ];
    expect(withReason(list, 'flicker').map((item) => item.sample_id)).toEqual([2, 3]);
    expect(withReason(list, 'counter_toggle')).toEqual([]);
    expect(withReason(list, null)).toHaveLength(3);
  });

  it('puts a judged sample back in its page, leaving the others', () => {
    const pages = [
      { items: [sample(1), sample(2)], next_after_id: 2 },
      { items: [sample(3)], next_after_id: null },
    ];
    const judged = replaceSample(pages, sample(3, { verdict: 'wrong' }));
    expect(judged[1]?.items[0]?.verdict).toBe('wrong');
    expect(judged[0]).toBe(pages[0]);
    expect(judged[1]?.next_after_id).toBeNull();
    expect(pages[1]?.items[0]?.verdict).toBe('none');
  });

  it('counts detections and hard ones', () => {
    expect(detectionCounts(sample(1))).toEqual({ all: 2, hard: 1 });
  });

  it('writes each detection tag with its place and verdict, neighbours kept apart', () => {
    // Two people side by side: both tags would sit on the same row above their boxes.
    const crowded = sample(1, {
      annotations: [
        {
          class_id: '0',
          label: 'person',
          score: 0.8,
          bbox: [100, 100, 20, 50],
          track_id: '7',
          hard: true,
          verdict: 'right',
        },
        {
          class_id: '0',
          label: 'person',
          score: 0.5,
          bbox: [125, 100, 20, 50],
          track_id: null,
          hard: false,
          verdict: 'none',
        },
      ],
    });
    const [a, b] = sampleTags(crowded, 16);
    expect([a?.text, b?.text]).toEqual(['1 · person 0.80 #7 ✓', '2 · person 0.50']);
    // The first keeps its place above its box (baseline 4 px above the top edge's tag bottom).
    expect([a?.x, a?.y]).toEqual([100, 96]);
    // The second moved off the first's row: their rows do not overlap.
    expect(Math.abs((b?.y ?? 0) - (a?.y ?? 0))).toBeGreaterThanOrEqual(20);
  });

  it('turns a drag over the shown frame into a box in frame pixels', () => {
    // A 768x576 frame shown at 384x288: every shown pixel is two of the frame's.
    const shown = { width: 384, height: 288 };
    const frame = { width: 768, height: 576 };
    expect(boxFromDrag({ x: 10, y: 20 }, { x: 60, y: 100 }, shown, frame)).toEqual([20, 40, 100, 160]);
    // Dragged up and left, and past the frame's edge: ordered and clamped.
    expect(boxFromDrag({ x: 400, y: 300 }, { x: 350, y: 250 }, shown, frame)).toEqual([700, 500, 68, 76]);
    // A click is not a box.
    expect(boxFromDrag({ x: 10, y: 10 }, { x: 11, y: 11 }, shown, frame)).toBeNull();
  });
});

describe('start form', () => {
  const form = { appIds: ['person'], duration: '60', maxSamples: '500' };

  it('sends numbers the engine takes', () => {
    expect(startErrors(form)).toEqual({});
    expect(startRequest(form)).toEqual({ app_ids: ['person'], duration: 60, max_samples: 500 });
    expect(startRequest({ ...form, maxSamples: '' })).toEqual({ app_ids: ['person'], duration: 60 });
  });

  it('names each problem on its field with the engine schema limits', () => {
    expect(startErrors({ ...form, duration: '5' }).duration).toEqual({
      key: 'validation.min',
      params: { min: '10' },
    });
    expect(startErrors({ ...form, duration: '' }).duration).toEqual({ key: 'validation.required' });
    expect(startErrors({ ...form, duration: '1.5' }).duration?.key).toBe('validation.integer');
    expect(startErrors({ ...form, maxSamples: '200000' }).max_samples).toEqual({
      key: 'validation.max',
      params: { max: '100000' },
    });
    expect(startErrors({ ...form, maxSamples: 'many' }).max_samples?.key).toBe('validation.integer');
    expect(startErrors({ ...form, appIds: [] }).app_ids).toEqual({ key: 'optimization.chooseApps' });
    expect(startRequest({ ...form, duration: '5' })).toBeNull();
    expect(startRequest({ ...form, appIds: [] })).toBeNull();
  });
});
