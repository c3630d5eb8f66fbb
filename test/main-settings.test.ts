import { describe, expect, it } from 'vitest';
import { parsePort, resolveSettings } from '../main/settings';

describe('desktop settings', () => {
  it('defaults to an ephemeral port', () => {
    expect(resolveSettings({}, undefined)).toEqual({ settings: { port: 0 }, warnings: [] });
  });

  it('reads the port from settings.json, and VC_PORT wins over it', () => {
    expect(resolveSettings({}, '{"port": 9100}').settings.port).toBe(9100);
    expect(resolveSettings({ VC_PORT: '9200' }, '{"port": 9100}').settings.port).toBe(9200);
  });

  it('ignores bad values with a warning instead of failing', () => {
    const badEnv = resolveSettings({ VC_PORT: 'http' }, '{"port": 9100}');
    expect(badEnv.settings.port).toBe(9100);
    expect(badEnv.warnings).toHaveLength(1);
    const badFile = resolveSettings({}, '{"port": 70000}');
    expect(badFile.settings.port).toBe(0);
    expect(badFile.warnings).toHaveLength(1);
    expect(resolveSettings({}, 'not json').warnings).toHaveLength(1);
  });

  it('parsePort accepts 0..65535 only', () => {
    expect(parsePort(0)).toBe(0);
    expect(parsePort('8080')).toBe(8080);
    expect(parsePort(65536)).toBeNull();
    expect(parsePort(-1)).toBeNull();
    expect(parsePort(80.5)).toBeNull();
    expect(parsePort('1e3')).toBeNull();
    expect(parsePort(null)).toBeNull();
  });
});
