import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configArgs } from '../engine/config/args';
import { type Environment, loadEngineConfig } from '../engine/config/load';
import { checkEngineOptions } from '../engine/config/options';
import { ConfigError } from '../engine/config/problems';
import { DEFAULT_HWACCEL, MAX_SECRET_FILE_BYTES } from '../engine/config/schema';
import type { EngineOptions } from '../engine/index';
import { engineArgs } from '../main/engine-args';

/**
 * The engine's configuration loader as a pure function of argv, environment and the settings file
 * (real files in a scratch folder): precedence, refusals naming the setting, defaults, the cluster's
 * keys and its password. No engine starts here.
 */

const work = mkdtempSync(join(tmpdir(), 'vc-config-'));
const cwd = join(work, 'cwd');
mkdirSync(cwd);
let dirs = 0;

/** A fresh data dir, with settings.json when given (an object is written as JSON, text as it is). */
function dataDir(settings?: unknown): string {
  const dir = join(work, `data-${++dirs}`);
  mkdirSync(dir);
  if (settings !== undefined)
    writeFileSync(
      join(dir, 'settings.json'),
      typeof settings === 'string' ? settings : JSON.stringify(settings),
    );
  return dir;
}

function load(argv: string[], env: Environment = {}) {
  const loaded = loadEngineConfig(argv, env, cwd);
  if (loaded.help) throw new Error('help asked');
  return loaded;
}

/** The ConfigError a load throws: its field and message. */
function refusal(argv: string[], env: Environment = {}): { field: string; message: string } {
  try {
    load(argv, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { field: error.field, message: error.message };
  }
  throw new Error('the configuration was accepted');
}

function secretFile(text: string | Buffer): string {
  const file = join(work, `secret-${++dirs}`);
  writeFileSync(file, text);
  return file;
}

describe('defaults', () => {
  it('gives every setting its schema default, hwaccel auto as the CLI always had it', () => {
    const dir = dataDir();
    const { config, options } = load(['--data-dir', dir]);
    expect(config).toEqual({
      host: '127.0.0.1',
      port: 8080,
      data_dir: dir,
      console_dir: join(cwd, 'out/renderer'),
      install: [],
      allowed_hosts: [],
      allowed_origins: [],
      analysis_fps: 10,
      analysis_size: 1280,
      max_source_pixels: 4096 * 2160,
      execution_provider: 'auto',
      hwaccel: 'auto',
      log_level: 'info',
    });
    expect(DEFAULT_HWACCEL).toBe('auto');
    expect(options).toEqual({
      host: '127.0.0.1',
      port: 8080,
      dataDir: dir,
      consoleDir: join(cwd, 'out/renderer'),
      builtinDir: undefined,
      installPackages: [],
      mediaDirs: undefined,
      allowedHosts: [],
      allowedOrigins: [],
      analysisFps: 10,
      analysisSize: 1280,
      maxSourcePixels: 4096 * 2160,
      inference: { provider: 'auto' },
      hwaccel: 'auto',
      logLevel: 'info',
    });
  });

  it('takes the data dir from --data-dir, else VC_DATA_DIR, else .data, relative to the working directory', () => {
    expect(load([]).options.dataDir).toBe(join(cwd, '.data'));
    expect(load([], { VC_DATA_DIR: 'elsewhere' }).options.dataDir).toBe(join(cwd, 'elsewhere'));
    expect(load(['--data-dir', 'mine'], { VC_DATA_DIR: 'elsewhere' }).options.dataDir).toBe(
      join(cwd, 'mine'),
    );
  });

  it('--help asks for the usage and reads nothing', () => {
    expect(loadEngineConfig(['--help'], {}, cwd)).toEqual({ help: true });
    expect(loadEngineConfig(['-h', '--port', 'x'], {}, cwd)).toEqual({ help: true });
  });
});

describe('precedence: flags over settings.json over the environment', () => {
  it('takes each setting from the first source that names it', () => {
    const dir = dataDir({ port: 9001, analysis_fps: 5, hwaccel: 'none', allowed_hosts: ['file.lan'] });
    const env = {
      VC_PORT: '9002',
      VC_ANALYSIS_FPS: '7',
      VC_ANALYSIS_SIZE: '640',
      VC_HWACCEL: 'cuda',
      VC_ALLOWED_HOSTS: 'env.lan',
      VC_LOG_LEVEL: 'warn',
    };
    const { config } = load(['--data-dir', dir, '--port', '9000', '--allowed-hosts', 'a.lan, b.lan,'], env);
    expect(config).toMatchObject({
      port: 9000, // flag over file and environment
      allowed_hosts: ['a.lan', 'b.lan'], // a flag's list replaces the file's
      analysis_fps: 5, // file over environment
      hwaccel: 'none',
      analysis_size: 640, // the environment where neither names it
      log_level: 'warn',
      execution_provider: 'auto', // the default where nothing does
    });
    // Without the flag the file's; without the file the environment's.
    expect(load(['--data-dir', dir], env).config.port).toBe(9001);
    expect(load(['--data-dir', dataDir()], env).config).toMatchObject({
      port: 9002,
      allowed_hosts: ['env.lan'],
    });
  });

  it('an empty environment variable is no setting', () => {
    expect(load(['--data-dir', dataDir()], { VC_PORT: '', VC_HWACCEL: '' }).config).toMatchObject({
      port: 8080,
      hwaccel: 'auto',
    });
  });

  it('relative paths: the data dir is the base in settings.json, the working directory on the command line', () => {
    const dir = dataDir({ media_dirs: ['clips', '/srv/abs'] });
    expect(load(['--data-dir', dir]).options.mediaDirs).toEqual([join(dir, 'clips'), '/srv/abs']);
    expect(load(['--data-dir', dir, '--media-dir', 'a', '--media-dir', 'b,c']).options.mediaDirs).toEqual([
      join(cwd, 'a'),
      join(cwd, 'b,c'),
    ]);
    expect(load(['--data-dir', dir, '--install', 'p.zapk', '--builtin-dir', 'b']).options).toMatchObject({
      installPackages: [join(cwd, 'p.zapk')],
      builtinDir: join(cwd, 'b'),
    });
    // "" serves the API only.
    expect(load(['--data-dir', dir, '--console-dir', '']).options.consoleDir).toBeUndefined();
  });
});

describe('refusals name the setting', () => {
  const inFile = (settings: unknown) => {
    const dir = dataDir(settings);
    return { dir, ...refusal(['--data-dir', dir]) };
  };

  it('an unknown key of settings.json, at the top and in cluster, with what the file takes', () => {
    const top = inFile({ port: 8080, analysis_fsp: 5 });
    expect(top.field).toBe('analysis_fsp');
    expect(top.message).toBe(
      `${join(top.dir, 'settings.json')}: analysis_fsp is not a setting; it takes host, port, media_dirs, ` +
        'allowed_hosts, allowed_origins, analysis_fps, analysis_size, max_source_pixels, execution_provider, ' +
        'hwaccel, log_level, cluster',
    );
    const nested = inFile({ cluster: { servers: ['nats://a:4222'], pasword_file: 'x' } });
    expect(nested.field).toBe('cluster.pasword_file');
    expect(nested.message).toContain(
      'cluster.pasword_file is not a setting; it takes servers, user, password_file',
    );
    // The command line's own settings are not the file's.
    expect(inFile({ data_dir: '/elsewhere' }).message).toContain('data_dir is not a setting');
    expect(inFile({ install: ['p.zapk'] }).message).toContain('install is not a setting');
  });

  it('a wrong type or a value out of range, with what it must be and what it was', () => {
    const cases: Array<[unknown, string, string]> = [
      [{ port: '8080' }, 'port', 'port must be a whole number 0..65535, not "8080"'],
      [{ port: 65536 }, 'port', 'port must be a whole number 0..65535, not 65536'],
      [{ analysis_fps: 500 }, 'analysis_fps', 'analysis_fps must be 0.1..60, not 500'],
      [{ analysis_fps: 0 }, 'analysis_fps', 'analysis_fps must be 0.1..60, not 0'],
      [{ analysis_size: 100 }, 'analysis_size', 'analysis_size must be a whole number 320..3840, not 100'],
      [
        { analysis_size: 640.5 },
        'analysis_size',
        'analysis_size must be a whole number 320..3840, not 640.5',
      ],
      [
        { max_source_pixels: 0 },
        'max_source_pixels',
        'max_source_pixels must be a whole number 1..2147483647, not 0',
      ],
      [
        { max_source_pixels: 2 ** 31 },
        'max_source_pixels',
        'max_source_pixels must be a whole number 1..2147483647, not 2147483648',
      ],
      [
        { hwaccel: 'gpu' },
        'hwaccel',
        'hwaccel must be one of auto, none, vaapi, cuda, qsv, videotoolbox, d3d11va',
      ],
      [{ execution_provider: 'npu' }, 'execution_provider', 'execution_provider must be one of auto, cpu'],
      [{ host: 7 }, 'host', 'host must be a non-empty text, not 7'],
      [
        { allowed_hosts: 'a.lan' },
        'allowed_hosts',
        'allowed_hosts must be a list, each a host name, not "a.lan"',
      ],
      [{ allowed_hosts: ['a.lan', 3] }, 'allowed_hosts[1]', 'allowed_hosts[1] must be a host name, not 3'],
      [{ media_dirs: [''] }, 'media_dirs[0]', 'media_dirs[0] must be a path, not ""'],
    ];
    for (const [settings, field, message] of cases) {
      const refused = inFile(settings);
      expect(refused.field, JSON.stringify(settings)).toBe(field);
      expect(refused.message, JSON.stringify(settings)).toContain(`settings.json: ${message}`);
    }
  });

  it('a file that is not JSON, or not an object', () => {
    expect(inFile('{"port": 8080,}').message).toMatch(/settings\.json is not valid JSON: /);
    expect(inFile([1]).message).toMatch(/settings\.json: the file must be an object, not \[1\]$/);
  });

  it('flags and environment variables by their own names', () => {
    const dir = dataDir();
    expect(refusal(['--data-dir', dir, '--port', '70000'])).toEqual({
      field: 'port',
      message: '--port must be a whole number 0..65535, not 70000',
    });
    expect(refusal(['--data-dir', dir, '--analysis-fps', '500']).message).toBe(
      '--analysis-fps must be 0.1..60, not 500',
    );
    expect(refusal(['--data-dir', dir, '--port', '80abc']).message).toBe(
      '--port must be a whole number 0..65535, not "80abc"',
    );
    expect(refusal(['--data-dir', dir, '--hwaccel', 'gpu']).message).toMatch(
      /^--hwaccel must be one of auto, /,
    );
    expect(refusal(['--data-dir', dir], { VC_PORT: 'http' })).toEqual({
      field: 'port',
      message: 'VC_PORT must be a whole number 0..65535, not "http"',
    });
    // Refused even where a flag wins over it: a bad source is never silently passed over.
    expect(refusal(['--data-dir', dir, '--analysis-size', '640'], { VC_ANALYSIS_SIZE: '99' }).message).toBe(
      'VC_ANALYSIS_SIZE must be a whole number 320..3840, not 99',
    );
    expect(() => load(['--data-dir', dir, '--bogus'])).toThrow(
      expect.objectContaining({ code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' }),
    );
  });
});

describe('cluster', () => {
  it('is absent unless servers are named, whatever the environment holds', () => {
    expect(
      load(['--data-dir', dataDir()], { VC_CLUSTER_PASSWORD: 'secret' }).options.cluster,
    ).toBeUndefined();
  });

  it('from flags: servers repeated or comma-separated, the password read from its file and trimmed', () => {
    const password = secretFile('  s3cret pass \n');
    const ca = secretFile('-----BEGIN CERTIFICATE-----\n');
    const { options } = load([
      ...[
        '--data-dir',
        dataDir(),
        '--cluster',
        'nats://a:4222,tls://b.lan:4222',
        '--cluster',
        'nats://[::1]:4222',
      ],
      ...['--cluster-user', 'vision', '--cluster-password-file', password, '--node-name', 'line-3'],
      ...['--cluster-ca', ca, '--advertise-url', 'http://10.0.0.5:8080', '--max-cameras', '12'],
    ]);
    expect(options.cluster).toEqual({
      servers: ['nats://a:4222', 'tls://b.lan:4222', 'nats://[::1]:4222'],
      user: 'vision',
      password: 's3cret pass',
      nodeName: 'line-3',
      caFile: ca,
      advertiseUrl: 'http://10.0.0.5:8080',
      maxCameras: 12,
    });
  });

  it('from settings.json, its files relative to the data dir; a flag wins key by key', () => {
    const dir = dataDir({
      cluster: {
        servers: ['nats://file:4222'],
        user: 'file-user',
        password_file: 'nats-password',
        node_name: 'from-file',
        max_cameras: 4,
      },
    });
    writeFileSync(join(dir, 'nats-password'), 'from-the-file\n');
    expect(load(['--data-dir', dir]).options.cluster).toEqual({
      servers: ['nats://file:4222'],
      user: 'file-user',
      password: 'from-the-file',
      nodeName: 'from-file',
      maxCameras: 4,
    });
    expect(
      load(['--data-dir', dir, '--cluster', 'nats://flag:4222', '--node-name', 'n2']).options.cluster,
    ).toEqual({
      servers: ['nats://flag:4222'],
      user: 'file-user',
      password: 'from-the-file',
      nodeName: 'n2',
      maxCameras: 4,
    });
  });

  it('the password from VC_CLUSTER_PASSWORD when no file is named; a named file wins', () => {
    const base = ['--data-dir', dataDir(), '--cluster', 'nats://a:4222', '--cluster-user', 'u'];
    expect(load(base, { VC_CLUSTER_PASSWORD: ' env-secret ' }).options.cluster?.password).toBe('env-secret');
    const file = secretFile('file-secret');
    expect(
      load([...base, '--cluster-password-file', file], { VC_CLUSTER_PASSWORD: 'env-secret' }).options.cluster
        ?.password,
    ).toBe('file-secret');
  });

  it('refuses anonymous access: no user, or no password', () => {
    const dir = dataDir();
    const anonymous = /^cluster: anonymous access is refused: name a user .* and a password/;
    expect(
      refusal(['--data-dir', dir, '--cluster', 'nats://a:4222'], { VC_CLUSTER_PASSWORD: 'x' }).message,
    ).toMatch(anonymous);
    const noPassword = refusal(['--data-dir', dir, '--cluster', 'nats://a:4222', '--cluster-user', 'u'], {
      VC_CLUSTER_PASSWORD: '  ',
    });
    expect(noPassword.message).toMatch(anonymous);
  });

  it('refuses cluster settings without servers, and values the schema refuses', () => {
    const dir = dataDir();
    const base = ['--data-dir', dir, '--cluster-user', 'u'];
    expect(refusal(base).message).toBe(
      'cluster: user given but no servers to join (--cluster or cluster.servers)',
    );
    const cases: Array<[string[], string]> = [
      [
        ['--cluster', 'nats://u:p@a:4222'],
        '--cluster must be nats://host:port or tls://host:port, no credentials',
      ],
      [['--cluster', 'http://a:4222'], '--cluster must be nats://host:port or tls://host:port'],
      [['--cluster', 'nats://a', '--node-name', 'a.b'], '--node-name must be letters, digits, - and _'],
      [
        ['--cluster', 'nats://a', '--max-cameras', '0'],
        '--max-cameras must be a whole number of at least 1, not 0',
      ],
      [['--cluster', 'nats://a', '--advertise-url', 'ftp://x'], '--advertise-url must be http://host:port'],
    ];
    for (const [flags, message] of cases) expect(refusal([...base, ...flags]).message).toContain(message);
    const file = dataDir({ cluster: { servers: [] } });
    expect(refusal(['--data-dir', file]).message).toContain(
      'settings.json: cluster.servers must be a list of at least 1, each nats://host:port',
    );
  });

  it('refuses a password file that cannot be one: missing, empty, not a file, too large', () => {
    const base = ['--data-dir', dataDir(), '--cluster', 'nats://a:4222', '--cluster-user', 'u'];
    const withFile = (file: string) => refusal([...base, '--cluster-password-file', file]);
    expect(withFile(join(work, 'missing')).message).toMatch(/cannot be read: ENOENT/);
    expect(withFile(secretFile(' \n')).message).toMatch(/is empty$/);
    expect(withFile(work).message).toMatch(/is not a file$/);
    expect(withFile(secretFile(Buffer.alloc(MAX_SECRET_FILE_BYTES + 1, 'x'))).message).toContain(
      `holds more than ${MAX_SECRET_FILE_BYTES} bytes`,
    );
    expect(
      load([...base, '--cluster-password-file', secretFile('x'.repeat(MAX_SECRET_FILE_BYTES))]).options
        .cluster,
    ).toBeDefined();
    expect(
      refusal([...base, '--cluster-password-file', secretFile('p'), '--cluster-ca', join(work, 'no-ca')])
        .field,
    ).toBe('cluster.ca_file');
  });
});

describe("startEngine's options are held to the same schema", () => {
  const dir = join(work, 'in-process');
  const refused = (options: Partial<EngineOptions>) => {
    try {
      checkEngineOptions({ dataDir: dir, ...options });
    } catch (error) {
      return (error as Error).message;
    }
    return null;
  };

  it('refuses what the command line refuses, under the option name', () => {
    expect(refused({ analysisFps: 500 })).toBe('engine option analysisFps must be 0.1..60, not 500');
    expect(refused({ port: -1 })).toBe('engine option port must be a whole number 0..65535, not -1');
    expect(refused({ analysisSize: 5000 })).toBe(
      'engine option analysisSize must be a whole number 320..3840, not 5000',
    );
    expect(refused({ hwaccel: 'gpu' as 'none' })).toMatch(/^engine option hwaccel must be one of auto/);
    expect(refused({ inference: { provider: 'npu' as 'cpu' } })).toMatch(
      /^engine option inference.provider must/,
    );
    expect(refused({ logLevel: 'loud' as 'info' })).toMatch(/^engine option logLevel must be one of/);
    expect(refused({ dataDir: '' })).toBe('engine option dataDir must be a path, not ""');
    const cluster = { servers: ['nats://a:4222'], user: 'u', password: 'p' };
    expect(refused({ cluster: { ...cluster, password: '' } })).toMatch(/anonymous access is refused/);
    expect(refused({ cluster: { ...cluster, nodeName: 'a b' } })).toMatch(
      /^engine option cluster.nodeName must/,
    );
    expect(refused({ cluster: { ...cluster, servers: [] } })).toMatch(/^engine option cluster.servers must/);
  });

  it('accepts what the loader gives, and options left to their defaults', () => {
    expect(refused({})).toBeNull();
    expect(
      refused({ cluster: { servers: ['nats://a:4222'], user: 'u', password: 'p', maxCameras: 3 } }),
    ).toBeNull();
    const file = secretFile('p');
    const { options } = load([
      ...['--data-dir', dataDir(), '--media-dir', '/srv', '--cluster', 'nats://a:4222'],
      ...['--cluster-user', 'u', '--cluster-password-file', file],
    ]);
    expect(() => checkEngineOptions(options)).not.toThrow();
  });
});

describe("the desktop's engine arguments go through the schema", () => {
  const launch = {
    settings: { host: '0.0.0.0', port: 0, dataDir: '/var/lib/vision', mediaDirs: ['/srv/a', '/srv/b,c'] },
    appOrigin: 'app://console',
    consoleDir: null,
    builtinDir: '/opt/vision/builtin',
  };

  it('are read back by the loader as the options the desktop meant', () => {
    const args = engineArgs({ ...launch, port: 43123 });
    const { options } = loadEngineConfig(args, {}, cwd) as { options: EngineOptions };
    expect(options).toMatchObject({
      host: '0.0.0.0',
      port: 43123,
      dataDir: '/var/lib/vision',
      consoleDir: undefined,
      builtinDir: '/opt/vision/builtin',
      mediaDirs: ['/srv/a', '/srv/b,c'],
      allowedOrigins: ['app://console'],
      logLevel: 'info',
    });
  });

  it('refuse a value the engine would refuse, naming the setting, before any process starts', () => {
    expect(() => engineArgs({ ...launch, port: 70000 })).toThrow(
      'engine setting port must be a whole number 0..65535, not 70000',
    );
    expect(() => configArgs({ analysis_fps: 0 })).toThrow(
      'engine setting analysis_fps must be 0.1..60, not 0',
    );
    expect(() => configArgs({ hwaccel: 'x' } as never)).toThrow(/^engine setting hwaccel must be one of/);
  });

  it('write lists as the engine reads them: repeated paths, comma-joined names, cluster flags', () => {
    expect(
      configArgs({
        media_dirs: ['/a', '/b'],
        allowed_hosts: ['x.lan', 'y.lan'],
        cluster: { servers: ['nats://a:4222', 'nats://b:4222'], user: 'u', max_cameras: 2 },
      }),
    ).toEqual([
      ...['--media-dir', '/a', '--media-dir', '/b', '--allowed-hosts', 'x.lan,y.lan'],
      ...[
        '--cluster',
        'nats://a:4222',
        '--cluster',
        'nats://b:4222',
        '--cluster-user',
        'u',
        '--max-cameras',
        '2',
      ],
    ]);
  });
});
