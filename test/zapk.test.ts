// Over 400 lines on purpose: every way a hostile .zapk can be refused, one case each.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import {
  isSafeRelativePath,
  type Manifest,
  manifestProblems,
  parseLabels,
} from '../engine/packages/manifest';
import {
  buildZapk,
  DEFAULT_LIMITS,
  extractZapk,
  inspectZapk,
  loadManifestDir,
  ZapkError,
} from '../engine/packages/zapk';
import {
  FAKE_ONNX,
  HOSTILE_ZAPKS,
  motionManifest,
  onnxManifest,
  writeValidOnnxZapk,
  writeValidZapk,
} from './helpers/zip-fixtures';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLE = join(ROOT, 'examples/coco-yolox-nano/manifest.json');
const BUILTIN = join(ROOT, 'assets/builtin');
const YOLOX_SHA256 = '695e750a5d5754bb5a8d5325643b59282191a7e7a564e435a415fd3c578eab14'; // MODEL.md

let work: string;
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'zapk-test-'));
});
afterEach(() => {
  rmSync(work, { recursive: true, force: true });
});

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Names and contents of every entry of a zip, read independently of the code under test. */
async function readZip(path: string): Promise<Map<string, Buffer>> {
  const zip = await yauzl.openPromise(path, { lazyEntries: true });
  const files = new Map<string, Buffer>();
  for await (const entry of zip.eachEntry()) {
    const chunks: Buffer[] = [];
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
    files.set(entry.fileName, Buffer.concat(chunks));
  }
  return files;
}

const classIds = (manifest: Manifest, appId: string) =>
  manifest.apps.find((a) => a.app_id === appId)?.rule.classes?.map((c) => c.class_id);

describe('the coco-yolox-nano example', () => {
  it('builds from ../shared into a package with the model, its digest and the labels', async () => {
    const out = join(work, 'coco.zapk');
    const { manifest, bytes } = await buildZapk(EXAMPLE, out);

    expect(bytes).toBe(readFileSync(out).length);
    const model = manifest.models['yolox-nano'];
    expect(model?.file).toBe('models/yolox_nano.onnx');
    expect(model?.labels).toBe('labels/coco-labels.txt');
    expect(model?.sha256).toBe(YOLOX_SHA256);

    const files = await readZip(out);
    expect([...files.keys()].sort()).toEqual([
      'labels/coco-labels.txt',
      'manifest.json',
      'models/yolox_nano.onnx',
    ]);
    const onnx = files.get('models/yolox_nano.onnx') ?? Buffer.alloc(0);
    expect(onnx.length).toBe(3_660_092);
    expect(sha256(onnx)).toBe(YOLOX_SHA256);
    expect(parseLabels(files.get('labels/coco-labels.txt') ?? '')).toHaveLength(80);
    expect(JSON.parse(String(files.get('manifest.json')))).toEqual(manifest);
  });

  it('inspects to the four apps with their types, classes and the exact model input', async () => {
    const out = join(work, 'coco.zapk');
    await buildZapk(EXAMPLE, out);
    const manifest = await inspectZapk(out);

    expect(manifest.zapk_id).toBe('coco-yolox-nano');
    expect(manifest.apps.map((a) => [a.app_id, a.type])).toEqual([
      ['person', 1],
      ['vehicle', 1],
      ['crowd', 1],
      ['loiter', 3],
    ]);
    expect(classIds(manifest, 'person')).toEqual(['0']);
    expect(classIds(manifest, 'vehicle')).toEqual(['2', '3', '5', '7']);
    expect(classIds(manifest, 'crowd')).toEqual(['0']);
    expect(classIds(manifest, 'loiter')).toEqual(['0']);
    const crowd = manifest.apps.find((a) => a.app_id === 'crowd');
    expect(crowd?.rule.counter).toMatchObject({ numeric_type: 0, min_count: 5, max_count: 0 });
    expect(manifest.apps.find((a) => a.app_id === 'loiter')?.rule.interval).toBe(10);
    expect(manifest.apps.every((a) => a.perpetual && a.license_expire === 0)).toBe(true);
    expect(manifest.models['yolox-nano']).toMatchObject({
      family: 'yolox',
      input: {
        width: 416,
        height: 416,
        channel_order: 'BGR',
        scale: 1,
        letterbox: 'top-left',
        pad_value: 114,
      },
      score_threshold: 0.3,
      nms_iou: 0.45,
    });
  });

  it('extracts atomically and the extracted folder loads to the same manifest', async () => {
    const out = join(work, 'coco.zapk');
    const built = await buildZapk(EXAMPLE, out);
    const dest = join(work, 'installed', 'coco');

    const manifest = await extractZapk(out, dest);

    expect(manifest).toEqual(built.manifest);
    expect(readdirSync(join(work, 'installed'))).toEqual(['coco']);
    expect(readdirSync(dest).sort()).toEqual(['labels', 'manifest.json', 'models']);
    expect(sha256(readFileSync(join(dest, 'models/yolox_nano.onnx')))).toBe(YOLOX_SHA256);
    expect(await loadManifestDir(dest)).toEqual(manifest);
  });
});

describe('the built-in package', () => {
  it('loads from assets/builtin without any model file', async () => {
    const manifest = await loadManifestDir(BUILTIN);
    expect(manifest.zapk_id).toBe('builtin');
    expect(manifest.apps.map((a) => [a.app_id, a.type, a.model])).toEqual([
      ['motion', 1, 'motion'],
      ['intrusion', 3, 'motion'],
      ['change', 2, 'change'],
    ]);
    expect(manifest.models.motion).toMatchObject({ family: 'motion', labels: ['motion'] });
    expect(manifest.models.change).toMatchObject({ family: 'change', labels: ['change'] });
    expect(manifest.apps.find((a) => a.app_id === 'change')?.rule.classes).toEqual([
      expect.objectContaining({ class_id: '0', threshold: 0.5, min_pixel: 16 }),
    ]);
    expect(Object.values(manifest.models).some((m) => m.file !== undefined)).toBe(false);
    expect(manifest.apps.every((a) => a.perpetual)).toBe(true);
  });

  it('refuses a folder without manifest.json', async () => {
    await expect(loadManifestDir(work)).rejects.toThrow(/manifest\.json not found at/);
  });
});

describe('hostile archives', () => {
  it.each(HOSTILE_ZAPKS)('refuses $name and leaves nothing behind', async ({ write, reason }) => {
    const zapk = join(work, 'upload.zapk');
    write(zapk);
    const parent = join(work, 'packages');
    mkdirSync(parent);

    await expect(inspectZapk(zapk)).rejects.toThrow(reason);
    const refused = await extractZapk(zapk, join(parent, 'pkg')).catch((error: unknown) => error);

    expect(refused).toBeInstanceOf(ZapkError);
    expect((refused as Error).message).toMatch(reason);
    expect((refused as Error).message).not.toContain('\n');
    expect(readdirSync(parent)).toEqual([]);
    expect(readdirSync(work)).toEqual(['packages', 'upload.zapk']);
  });

  it('applies the limits it is given', async () => {
    const limits = DEFAULT_LIMITS;
    const zapk = join(work, 'valid.zapk');
    writeValidOnnxZapk(zapk);
    // The same valid package passes with the defaults and fails once the limits shrink below it.
    await expect(inspectZapk(zapk)).resolves.toMatchObject({ zapk_id: 'fixture' });
    await expect(inspectZapk(zapk, { ...limits, maxEntryBytes: 16 })).rejects.toThrow(
      /more than the 16 bytes allowed/,
    );
    await expect(inspectZapk(zapk, { ...limits, maxTotalBytes: 100 })).rejects.toThrow(
      /declares more than the 100 bytes allowed in total/,
    );
    await expect(inspectZapk(zapk, { ...limits, maxEntries: 3 })).rejects.toThrow(
      /4 entries, more than the 3/,
    );
  });

  it('refuses to extract over an existing folder and leaves it untouched', async () => {
    const zapk = join(work, 'valid.zapk');
    writeValidZapk(zapk);
    const dest = join(work, 'pkg');
    mkdirSync(dest);
    writeFileSync(join(dest, 'keep.txt'), 'mine');

    await expect(extractZapk(zapk, dest)).rejects.toThrow(/already exists/);
    expect(readdirSync(dest)).toEqual(['keep.txt']);
    expect(readdirSync(work).sort()).toEqual(['pkg', 'valid.zapk']);
  });

  it('extracts a valid hand-made package with folders, files and labels', async () => {
    const zapk = join(work, 'valid.zapk');
    writeValidOnnxZapk(zapk);
    const dest = join(work, 'pkg');
    const manifest = await extractZapk(zapk, dest);
    expect(manifest).toEqual(onnxManifest());
    expect(readFileSync(join(dest, 'models/fake.onnx'))).toEqual(FAKE_ONNX);
    expect(readFileSync(join(dest, 'labels/labels.txt'), 'utf8')).toBe('person\ncar\ntruck\n');
  });
});

describe('buildZapk', () => {
  const source = (manifest: Manifest) => {
    const path = join(work, 'src', 'manifest.json');
    mkdirSync(join(work, 'src'), { recursive: true });
    writeFileSync(path, JSON.stringify(manifest));
    return path;
  };
  const detector = (manifest: Manifest) => {
    const model = manifest.models.detector;
    if (!model) throw new Error('fixture without detector');
    return model;
  };

  it('refuses a manifest naming a missing file and writes nothing', async () => {
    const manifest = onnxManifest();
    detector(manifest).file = '../weights/absent.onnx';
    const out = join(work, 'out.zapk');
    await expect(buildZapk(source(manifest), out)).rejects.toThrow(
      /models\.detector\.file: "\.\.\/weights\/absent\.onnx" is not a file/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('refuses two files that would share one archive name', async () => {
    for (const dir of ['a', 'b']) {
      mkdirSync(join(work, dir));
      writeFileSync(join(work, dir, 'model.onnx'), `${dir} weights`);
    }
    writeFileSync(join(work, 'labels.txt'), 'person\ncar\n');
    const manifest = onnxManifest();
    const first = {
      ...detector(manifest),
      file: '../a/model.onnx',
      labels: '../labels.txt',
      sha256: undefined,
    };
    manifest.models = { first, second: { ...first, file: '../b/model.onnx' } };
    await expect(buildZapk(source(manifest), join(work, 'out.zapk'))).rejects.toThrow(
      /would both be stored as "models\/model\.onnx"/,
    );
  });

  it('refuses a model whose sha256 differs from the manifest, and rule problems', async () => {
    writeFileSync(join(work, 'model.onnx'), FAKE_ONNX);
    writeFileSync(join(work, 'labels.txt'), 'person\ncar\n');
    const manifest = onnxManifest();
    Object.assign(detector(manifest), {
      file: '../model.onnx',
      labels: '../labels.txt',
      sha256: '0'.repeat(64),
    });
    await expect(buildZapk(source(manifest), join(work, 'a.zapk'))).rejects.toThrow(
      /models\.detector\.sha256/,
    );

    detector(manifest).sha256 = undefined;
    const entry = manifest.apps[0]?.rule.classes?.[0];
    if (entry) entry.class_id = '2';
    await expect(buildZapk(source(manifest), join(work, 'b.zapk'))).rejects.toThrow(
      /the model has no class "2"/,
    );
    expect(readdirSync(work).filter((name) => name.endsWith('.zapk') || name.includes('partial'))).toEqual(
      [],
    );
  });
});

describe('manifest checks', () => {
  it('accepts the fixtures and names the field of each semantic problem', () => {
    expect(manifestProblems(motionManifest(), new Map())).toEqual([]);
    expect(manifestProblems(onnxManifest(), new Map([['detector', ['a', 'b']]]))).toEqual([]);

    const m = motionManifest();
    const app = m.apps[0];
    if (!app) throw new Error('fixture without app');
    m.apps.push({ ...app, type: 2, license_expire: 0, perpetual: false });
    m.apps.push({ ...app, app_id: 'other', model: 'ghost' });
    m.models.Bad = {
      family: 'yolox',
      labels: ['x'],
      score_threshold: 0.3,
      nms_iou: 0.4,
      class_agnostic_nms: false,
    };
    expect(manifestProblems(m, null)).toEqual([
      'manifest.models.Bad: model id must match ^[a-z0-9][a-z0-9_-]{0,63}$',
      'manifest.models.Bad.file: is required for family "yolox"',
      'manifest.models.Bad.input: is required for family "yolox"',
      'manifest.apps[1].app_id: duplicate app_id "motion"',
      'manifest.apps[1].model: a change-detection app (type 2) cannot use the "motion" family',
      'manifest.apps[1].license_expire: must be a Unix time in seconds unless perpetual is true',
      'manifest.apps[2].model: the package has no model "ghost"',
    ]);
  });

  it('refuses unsafe paths and blank label lines', () => {
    const m = onnxManifest();
    Object.assign(m.models.detector ?? {}, { file: '../x.onnx', labels: 'C:/labels.txt' });
    expect(manifestProblems(m, new Map([['detector', ['a', '', 'c']]]))).toEqual([
      'manifest.models.detector.file: "../x.onnx" is not a safe relative path',
      'manifest.models.detector.labels: "C:/labels.txt" is not a safe relative path',
      'manifest.models.detector.labels: label on line 2 is empty or longer than 128 characters',
    ]);
  });

  it('tells safe relative paths from escaping ones', () => {
    for (const safe of ['models/a.onnx', 'labels.txt', 'a/b/c-d_e.1'])
      expect(isSafeRelativePath(safe)).toBe(true);
    for (const unsafe of [
      '',
      '/etc/x',
      '../x',
      'a/../x',
      'a//b',
      './a',
      'a\\b',
      'C:/x',
      'c:x',
      'a\0b',
      'a/',
    ]) {
      expect(isSafeRelativePath(unsafe), unsafe).toBe(false);
    }
  });

  it('reads labels with CRLF and an optional final newline', () => {
    expect(parseLabels('a\r\nb\r\n')).toEqual(['a', 'b']);
    expect(parseLabels(Buffer.from('a\nb'))).toEqual(['a', 'b']);
  });
});

describe('the zapk CLI', () => {
  const cli = (...args: string[]) =>
    spawnSync('npx', ['tsx', 'engine/packages/cli.ts', ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('builds and inspects the example', () => {
    const out = join(work, 'coco.zapk');
    const built = cli('build', '--manifest', EXAMPLE, '--out', out);
    expect(built.status, built.stderr).toBe(0);
    expect(built.stdout).toContain(`built ${out} (`);
    expect(existsSync(out)).toBe(true);

    const inspected = cli('inspect', out);
    expect(inspected.status, inspected.stderr).toBe(0);
    expect(inspected.stdout).toContain('coco-yolox-nano 1.0.0');
    expect(inspected.stdout).toMatch(
      /vehicle: type 1 \(detection\), model yolox-nano, classes \[2 car, 3 motorcycle/,
    );
    expect(inspected.stdout).toMatch(/loiter: type 3 \(time-series\)/);
  });

  it('exits 1 with the reason when a package is refused', () => {
    const zapk = join(work, 'slip.zapk');
    HOSTILE_ZAPKS[0]?.write(zapk);
    const result = cli('inspect', zapk);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('error: unsafe entry name "../evil.txt"');

    const missing = cli('build', '--manifest', join(work, 'nope.json'), '--out', join(work, 'x.zapk'));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/error: manifest not found at .*nope\.json/);
  });

  it('exits 2 with the usage on bad arguments', () => {
    for (const args of [
      [],
      ['build', '--manifest', EXAMPLE],
      ['inspect'],
      ['frobnicate'],
      ['inspect', 'a', '--bogus'],
    ]) {
      const result = cli(...args);
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('usage:');
    }
  });
});
