import { describe, expect, it } from 'vitest';
import { SOURCE_FAILURE_REASONS } from '../engine/contract';
import { dictionaries } from '../renderer/src/i18n';
import { isSourceRefusal, refusalOf } from '../renderer/src/refusals/refusal';
import { ApiError } from '../renderer/src/transport';

/**
 * Engine refusals as the console words them (renderer/src/refusals): a translated message and a
 * hint from the code and the envelope's `reason`, the engine's text kept for the details.
 */

const msg =
  'video_url: the source could not be opened: no video frame came from it (the engine log says why)';

describe('refusalOf', () => {
  it("words a source's failure by its reason, keeping the engine's text", () => {
    for (const reason of SOURCE_FAILURE_REASONS) {
      const refusal = refusalOf(new ApiError(503, 50301, msg, 'video_url', reason));
      expect(refusal).toEqual({
        message: `refusal.source.${reason}`,
        hint: `refusal.source.${reason}.hint`,
        raw: `50301: ${msg}`,
      });
      for (const language of ['en', 'zh-CN'] as const) {
        expect(dictionaries[language][refusal.message]).toBeTruthy();
        expect(dictionaries[language][refusal.hint]).toBeTruthy();
      }
    }
  });

  it('falls back for an engine without the reason, or with one it does not know', () => {
    expect(refusalOf(new ApiError(503, 50301, msg, 'video_url')).message).toBe('refusal.source.no_frame');
    expect(refusalOf(new ApiError(503, 50301, msg, 'video_url', 'solar_flare')).message).toBe(
      'refusal.source.no_frame',
    );
    expect(refusalOf(new ApiError(422, 42207, 'video_url: too large', 'video_url')).message).toBe(
      'refusal.source.too_large',
    );
  });

  it('words other refusals by their status, and an unreachable engine', () => {
    const of = (status: number, code: number) => refusalOf(new ApiError(status, code, 'x')).message;
    expect(of(400, 40001)).toBe('refusal.status.400');
    expect(of(409, 40905)).toBe('refusal.status.409');
    expect(of(503, 50304)).toBe('refusal.status.503');
    expect(of(405, 40501)).toBe('refusal.status.400');
    expect(of(507, 50701)).toBe('refusal.status.500');
    expect(refusalOf(new ApiError(0, 0, 'the engine cannot be reached (fetch failed)'))).toEqual({
      message: 'refusal.unreachable',
      hint: 'refusal.unreachable.hint',
      raw: 'the engine cannot be reached (fetch failed)',
    });
    expect(refusalOf(new Error('boom'))).toEqual({
      message: 'refusal.status.500',
      hint: 'refusal.status.500.hint',
      raw: 'boom',
    });
  });

  it('tells source refusals from the others', () => {
    expect(isSourceRefusal(new ApiError(503, 50301, msg, 'video_url', 'refused'))).toBe(true);
    expect(isSourceRefusal(new ApiError(422, 42207, msg))).toBe(true);
    expect(isSourceRefusal(new ApiError(503, 50304, msg))).toBe(false);
    expect(isSourceRefusal(new Error(msg))).toBe(false);
  });

  it("reads the envelope's reason", async () => {
    const { toEnvelope } = await import('../renderer/src/transport/types');
    const thrown = (() => {
      try {
        toEnvelope(503, { code: 50301, msg, field: 'video_url', reason: 'unresolved' });
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toMatchObject({ code: 50301, field: 'video_url', reason: 'unresolved' });
  });
});
