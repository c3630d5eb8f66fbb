import { describe, expect, it } from 'vitest';
import { engineArgs } from '../main/engine-args';
import {
  applyPatch,
  DEFAULT_SETTINGS,
  defaultMediaDirs,
  LAN_HOST,
  LOOPBACK_HOST,
  MAX_MEDIA_DIRS,
  mediaDirProblem,
  parsePort,
  parseSavedSettings,
  resolveSettings,
  type SavedSettings,
  serializeSettings,
  settingsView,
} from '../main/settings';

/*
 * main/settings.ts and main/engine-args.ts are pure: they are tested as they are, without Electron
 * (its binary cannot run on this machine). main/index.ts only reads the file, asks Electron for the
 * userData and Videos folders (app.getPath) and hands them to these functions.
 */

const DEFAULT_DIR = '/home/op/.config/vision-console/data';
const VIDEOS = '/home/op/Videos';
const DEFAULTS = { dataDir: DEFAULT_DIR, videosDir: VIDEOS };

describe('desktop settings', () => {
  it('defaults to loopback, an ephemeral port, the default data folder and its media folder with Videos', () => {
    expect(parseSavedSettings(undefined)).toEqual({ saved: DEFAULT_SETTINGS, warnings: [] });
    expect(DEFAULT_SETTINGS.media_dirs).toBeNull();
    expect(resolveSettings({}, DEFAULT_SETTINGS, DEFAULTS)).toEqual({
      settings: {
        host: LOOPBACK_HOST,
        port: 0,
        dataDir: DEFAULT_DIR,
        mediaDirs: [`${DEFAULT_DIR}/media`, VIDEOS],
      },
      warnings: [],
    });
  });

  it('reads port, LAN exposure, data folder and media folders from the file; VC_PORT wins over the port', () => {
    const { saved, warnings } = parseSavedSettings(
      '{"port": 9100, "lan": true, "data_dir": "/srv/vision", "media_dirs": ["/srv/clips", "/mnt/cameras"]}',
    );
    expect(warnings).toEqual([]);
    expect(saved).toEqual({
      port: 9100,
      lan: true,
      data_dir: '/srv/vision',
      media_dirs: ['/srv/clips', '/mnt/cameras'],
    });
    expect(resolveSettings({}, saved, DEFAULTS).settings).toEqual({
      host: LAN_HOST,
      port: 9100,
      dataDir: '/srv/vision',
      mediaDirs: ['/srv/clips', '/mnt/cameras'],
    });
    expect(resolveSettings({ VC_PORT: '9200' }, saved, DEFAULTS).settings.port).toBe(9200);
  });

  it('the default media folders follow the data folder; Videos is left out where the OS has none', () => {
    const moved = resolveSettings({}, { ...DEFAULT_SETTINGS, data_dir: '/srv/vision' }, DEFAULTS);
    expect(moved.settings.mediaDirs).toEqual(['/srv/vision/media', VIDEOS]);
    expect(defaultMediaDirs('/srv/vision', null)).toEqual(['/srv/vision/media']);
    // A Videos folder that could not be a media folder is not one by default either.
    expect(defaultMediaDirs('/srv/vision', '/')).toEqual(['/srv/vision/media']);
    expect(defaultMediaDirs('/srv/vision', '/srv/vision/media')).toEqual(['/srv/vision/media']);
  });

  it('ignores bad values with a warning each instead of failing', () => {
    const badEnv = resolveSettings({ VC_PORT: 'http' }, { ...DEFAULT_SETTINGS, port: 9100 }, DEFAULTS);
    expect(badEnv.settings.port).toBe(9100);
    expect(badEnv.warnings).toHaveLength(1);
    const badFile = parseSavedSettings(
      '{"port": 70000, "lan": "yes", "data_dir": "relative/dir", "media_dirs": "/srv/clips"}',
    );
    expect(badFile.saved).toEqual(DEFAULT_SETTINGS);
    expect(badFile.warnings).toHaveLength(4);
    expect(badFile.warnings[3]).toMatch(
      /media_dirs must be a list of folders; using the default media folders/,
    );
    expect(parseSavedSettings('not json').warnings).toHaveLength(1);
    expect(parseSavedSettings('[1]').warnings).toHaveLength(1);
  });

  it('leaves each bad media folder out with a warning: relative, not text, empty, a root, a repeat, past the limit', () => {
    const { saved, warnings } = parseSavedSettings(
      JSON.stringify({ media_dirs: ['clips', '/srv/clips', 7, '', '/', '/srv/clips', '/mnt/cameras'] }),
    );
    expect(saved.media_dirs).toEqual(['/srv/clips', '/mnt/cameras']);
    expect(warnings).toEqual([
      'console-settings.json: media_dirs: "clips" is not an absolute path; left out',
      'console-settings.json: media_dirs: 7 is not a folder path; left out',
      'console-settings.json: media_dirs: "" is not a folder path; left out',
      'console-settings.json: media_dirs: "/" is the root of a file system: every video file on it would be a source; left out',
    ]);
    const many = Array.from({ length: MAX_MEDIA_DIRS + 2 }, (_, i) => `/srv/clips/${i}`);
    const capped = parseSavedSettings(JSON.stringify({ media_dirs: many }));
    expect(capped.saved.media_dirs).toEqual(many.slice(0, MAX_MEDIA_DIRS));
    expect(capped.warnings).toHaveLength(2);
    // Nothing usable left, or null: the defaults.
    const none = parseSavedSettings('{"media_dirs": ["relative", "/"]}');
    expect(none.saved.media_dirs).toBeNull();
    expect(none.warnings.at(-1)).toMatch(/names no usable folder; using the default media folders/);
    expect(parseSavedSettings('{"media_dirs": null}')).toEqual({ saved: DEFAULT_SETTINGS, warnings: [] });
  });

  it('mediaDirProblem: absolute folders only, never a file system root', () => {
    expect(mediaDirProblem('/srv/clips')).toBeNull();
    expect(mediaDirProblem('clips')).toBe('is not an absolute path');
    expect(mediaDirProblem('/')).toMatch(/root of a file system/);
    expect(mediaDirProblem('/srv/..')).toMatch(/root of a file system/);
    expect(mediaDirProblem(`/${'a'.repeat(5000)}`)).toBe('is not a folder path');
    expect(mediaDirProblem(null)).toBe('is not a folder path');
  });

  it('applies a patch from the console and writes it back as it reads it', () => {
    const next = applyPatch(DEFAULT_SETTINGS, {
      lan: true,
      data_dir: '/srv/vision',
      media_dirs: ['/srv/clips'],
    });
    expect(next).toEqual({ port: 0, lan: true, data_dir: '/srv/vision', media_dirs: ['/srv/clips'] });
    expect(parseSavedSettings(serializeSettings(next as SavedSettings)).saved).toEqual(next);
    expect(applyPatch(DEFAULT_SETTINGS, { data_dir: 'relative' })).toEqual({
      error: 'data_dir must be an absolute path',
    });
    expect(applyPatch(DEFAULT_SETTINGS, { media_dirs: ['/srv/clips', 'relative'] })).toEqual({
      error: 'media_dirs: relative is not an absolute path',
    });
    expect(applyPatch(DEFAULT_SETTINGS, { media_dirs: ['/'] })).toMatchObject({
      error: expect.stringMatching(/root of a file system/),
    });
    // "" returns to the default folder, null to the default media folders; a patch without them keeps them.
    const custom = { ...DEFAULT_SETTINGS, data_dir: '/srv/vision', media_dirs: ['/srv/clips'] };
    expect(applyPatch(custom, { data_dir: '' })).toMatchObject({ data_dir: '', media_dirs: ['/srv/clips'] });
    expect(applyPatch(custom, { media_dirs: null })).toMatchObject({
      data_dir: '/srv/vision',
      media_dirs: null,
    });
  });

  it('the view says when VC_PORT overrides the saved port, and which media folders the defaults are', () => {
    const running = {
      url: 'http://127.0.0.1:9200',
      host: LOOPBACK_HOST,
      port: 9200,
      dataDir: DEFAULT_DIR,
      mediaDirs: [`${DEFAULT_DIR}/media`, VIDEOS],
    };
    expect(settingsView(DEFAULT_SETTINGS, running, DEFAULTS, { VC_PORT: '9200' }).portFromEnv).toBe(true);
    const view = settingsView(DEFAULT_SETTINGS, running, DEFAULTS, {});
    expect(view.portFromEnv).toBe(false);
    expect(view.defaultMediaDirs).toEqual([`${DEFAULT_DIR}/media`, VIDEOS]);
    // The defaults of the next start: a saved data folder brings its own media folder.
    const moved = settingsView({ ...DEFAULT_SETTINGS, data_dir: '/srv/vision' }, running, DEFAULTS, {});
    expect(moved.defaultMediaDirs).toEqual(['/srv/vision/media', VIDEOS]);
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

describe('the engine process command line', () => {
  const launch = (mediaDirs: string[]) =>
    engineArgs({
      settings: { host: LOOPBACK_HOST, port: 0, dataDir: DEFAULT_DIR, mediaDirs },
      port: undefined,
      appOrigin: 'app://console',
      consoleDir: null,
      builtinDir: '/opt/vision/builtin',
    });
  /** The values of one repeatable flag, as engine/cli.ts reads them. */
  const values = (args: string[], flag: string) =>
    args.flatMap((arg, i) => (arg === flag ? [args[i + 1] as string] : []));

  it('passes each media folder as --media-dir, in order, with the data folder', () => {
    const args = launch([`${DEFAULT_DIR}/media`, VIDEOS, '/srv/clips with spaces']);
    expect(values(args, '--media-dir')).toEqual([`${DEFAULT_DIR}/media`, VIDEOS, '/srv/clips with spaces']);
    expect(values(args, '--data-dir')).toEqual([DEFAULT_DIR]);
    expect(values(launch(['/srv/clips']), '--media-dir')).toEqual(['/srv/clips']);
  });

  it('the defaults reach the engine as flags: the settings file never leaves the engine to its own media_dirs', () => {
    const { settings } = resolveSettings({}, DEFAULT_SETTINGS, DEFAULTS);
    const args = engineArgs({
      settings,
      port: undefined,
      appOrigin: 'app://console',
      consoleDir: null,
      builtinDir: '/opt/vision/builtin',
    });
    expect(values(args, '--media-dir')).toEqual([`${DEFAULT_DIR}/media`, VIDEOS]);
  });
});
