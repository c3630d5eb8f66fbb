import { describe, expect, it } from 'vitest';
import {
  applyPatch,
  DEFAULT_SETTINGS,
  LAN_HOST,
  LOOPBACK_HOST,
  parsePort,
  parseSavedSettings,
  resolveSettings,
  serializeSettings,
  settingsView,
} from '../main/settings';

const DEFAULT_DIR = '/home/op/.config/vision-console/data';

describe('desktop settings', () => {
  it('defaults to loopback, an ephemeral port and the default data folder', () => {
    expect(parseSavedSettings(undefined)).toEqual({ saved: DEFAULT_SETTINGS, warnings: [] });
    expect(resolveSettings({}, DEFAULT_SETTINGS, DEFAULT_DIR)).toEqual({
      settings: { host: LOOPBACK_HOST, port: 0, dataDir: DEFAULT_DIR },
      warnings: [],
    });
  });

  it('reads port, LAN exposure and data folder from the file; VC_PORT wins over the port', () => {
    const { saved } = parseSavedSettings('{"port": 9100, "lan": true, "data_dir": "/srv/vision"}');
    expect(saved).toEqual({ port: 9100, lan: true, data_dir: '/srv/vision' });
    expect(resolveSettings({}, saved, DEFAULT_DIR).settings).toEqual({
      host: LAN_HOST,
      port: 9100,
      dataDir: '/srv/vision',
    });
    expect(resolveSettings({ VC_PORT: '9200' }, saved, DEFAULT_DIR).settings.port).toBe(9200);
  });

  it('ignores bad values with a warning each instead of failing', () => {
    const badEnv = resolveSettings({ VC_PORT: 'http' }, { ...DEFAULT_SETTINGS, port: 9100 }, DEFAULT_DIR);
    expect(badEnv.settings.port).toBe(9100);
    expect(badEnv.warnings).toHaveLength(1);
    const badFile = parseSavedSettings('{"port": 70000, "lan": "yes", "data_dir": "relative/dir"}');
    expect(badFile.saved).toEqual(DEFAULT_SETTINGS);
    expect(badFile.warnings).toHaveLength(3);
    expect(parseSavedSettings('not json').warnings).toHaveLength(1);
    expect(parseSavedSettings('[1]').warnings).toHaveLength(1);
  });

  it('applies a patch from the console and writes it back as it reads it', () => {
    const next = applyPatch(DEFAULT_SETTINGS, { lan: true, data_dir: '/srv/vision' });
    expect(next).toEqual({ port: 0, lan: true, data_dir: '/srv/vision' });
    expect(parseSavedSettings(serializeSettings(next as typeof DEFAULT_SETTINGS)).saved).toEqual(next);
    expect(applyPatch(DEFAULT_SETTINGS, { data_dir: 'relative' })).toEqual({
      error: 'data_dir must be an absolute path',
    });
    // "" returns to the default folder.
    expect(applyPatch({ ...DEFAULT_SETTINGS, data_dir: '/srv/vision' }, { data_dir: '' })).toMatchObject({
      data_dir: '',
    });
  });

  it('the view says when VC_PORT overrides the saved port', () => {
    const running = { url: 'http://127.0.0.1:9200', host: LOOPBACK_HOST, port: 9200, dataDir: DEFAULT_DIR };
    expect(settingsView(DEFAULT_SETTINGS, running, DEFAULT_DIR, { VC_PORT: '9200' }).portFromEnv).toBe(true);
    expect(settingsView(DEFAULT_SETTINGS, running, DEFAULT_DIR, {}).portFromEnv).toBe(false);
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
