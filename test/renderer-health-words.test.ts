import { describe, expect, it } from 'vitest';
import { decodingState, overloadState } from '../renderer/src/health';
import { translate } from '../renderer/src/i18n';

/**
 * Health as translated states (renderer/src/health.ts): a hardware decoder that failed reads
 * "hardware decoding unavailable, using the CPU", ffmpeg's device error kept for the details; an
 * overload as a state with its figure.
 */

const CUDA_ERROR = '[AVHWDeviceContext @ 0x55d0] Cannot load libcuda.so.1';

describe('decodingState', () => {
  it('says a failed hardware path plainly, keeping ffmpeg for the details', () => {
    const state = decodingState({ hwaccel: 'none', fallback: CUDA_ERROR });
    expect(state).toEqual({ key: 'health.hwUnavailable', detail: CUDA_ERROR });
    expect(translate('en', state.key)).toBe('Hardware decoding unavailable, using the CPU');
    expect(translate('zh-CN', state.key)).toBe('硬件解码不可用，正在使用 CPU');
  });

  it('names the path in use when nothing failed, and another path than asked', () => {
    expect(decodingState({ hwaccel: 'vaapi', fallback: null })).toEqual({
      key: 'system.hwaccel.vaapi',
      detail: null,
    });
    expect(decodingState({ hwaccel: 'vaapi', fallback: 'cuda: no device' })).toEqual({
      key: 'health.hwOther',
      params: { path: 'vaapi' },
      detail: 'cuda: no device',
    });
  });
});

describe('overloadState', () => {
  it("gives the loop's lateness as a figure, anything else as a busy machine", () => {
    const late = overloadState("the engine's event loop ran 1.4 s late");
    expect(translate('zh-CN', late.key, late.params)).toBe('引擎处理滞后：响应延迟 1.4 秒');
    expect(late.detail).toBe("the engine's event loop ran 1.4 s late");
    expect(overloadState('inference hosts starved for CPU').key).toBe('health.overload.busy');
  });
});
