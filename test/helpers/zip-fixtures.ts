import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';
import type { Manifest } from '../../engine/packages/manifest';
import { FIXTURES } from './fixtures';

/**
 * Hand-made zip archives for the .zapk tests. Zip libraries refuse to write hostile archives, so
 * rawZip lays out the local headers, central directory and end record itself. Every hostile writer
 * puts one defect into an otherwise valid package, so a refusal can only come from that defect.
 */

export interface RawEntry {
  name: string;
  data?: Buffer | string;
  /** Deflate the data (method 8) instead of storing it (method 0). */
  deflate?: boolean;
  /** Unix mode kept in the upper 16 bits of the external attributes, e.g. 0o120777 for a symlink. */
  mode?: number;
  /** Uncompressed size written in both headers instead of the real one. */
  declaredSize?: number;
  /** CRC-32 written in both headers instead of the real one. */
  crc?: number;
}

export function rawZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const data = Buffer.from(entry.data ?? '');
    const stored = entry.deflate ? deflateRawSync(data) : data;
    const method = entry.deflate ? 8 : 0;
    const size = entry.declaredSize ?? data.length;
    const mode = entry.mode ?? (entry.name.endsWith('/') ? 0o040755 : 0o100644);
    const crc = entry.crc ?? crc32(data);

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(stored.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, stored);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(stored.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE((mode << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);

    offset += local.length + name.length + stored.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A valid weight-free package manifest; tests change one thing in it. */
export function motionManifest(): Manifest {
  return {
    format: 1,
    zapk_id: 'fixture',
    name: 'Fixture package',
    version: '1.0.0',
    models: {
      motion: {
        family: 'motion',
        labels: ['motion'],
        score_threshold: 0.25,
        nms_iou: 0.5,
        class_agnostic_nms: true,
      },
    },
    apps: [
      {
        app_id: 'motion',
        name: 'Motion',
        type: 1,
        model: 'motion',
        rule: {
          classes: [
            { class_id: '0', name: 'motion', color: '#ffcc00', threshold: 0.5, min_pixel: 0, max_pixel: 0 },
          ],
        },
        license_expire: 0,
        perpetual: true,
      },
    ],
  };
}

export const FAKE_ONNX = Buffer.from('not really onnx, the package format does not look inside\n');

/** A valid manifest with an onnx model stored as models/fake.onnx and labels as labels/labels.txt. */
export function onnxManifest(): Manifest {
  const manifest = motionManifest();
  manifest.models = {
    detector: {
      family: 'yolox',
      file: 'models/fake.onnx',
      sha256: createHash('sha256').update(FAKE_ONNX).digest('hex'),
      input: {
        width: 416,
        height: 416,
        channel_order: 'BGR',
        scale: 1,
        mean: [0, 0, 0],
        std: [1, 1, 1],
        letterbox: 'top-left',
        pad_value: 114,
      },
      labels: 'labels/labels.txt',
      score_threshold: 0.3,
      nms_iou: 0.45,
      class_agnostic_nms: false,
    },
  };
  const app = manifest.apps[0];
  if (app) {
    app.model = 'detector';
    app.rule = {
      classes: [{ class_id: '1', name: 'car', color: '#007aff', threshold: 0.5, min_pixel: 0, max_pixel: 0 }],
    };
  }
  return manifest;
}

const json = (manifest: Manifest) => JSON.stringify(manifest, null, 2);

/** Entries of a valid package with an onnx model; hostile writers add to or bend these. */
export function onnxEntries(manifest: Manifest = onnxManifest()): RawEntry[] {
  return [
    { name: 'manifest.json', data: json(manifest), deflate: true },
    { name: 'models/', data: '' },
    { name: 'models/fake.onnx', data: FAKE_ONNX, deflate: true },
    { name: 'labels/labels.txt', data: 'person\ncar\ntruck\n' },
  ];
}

export function writeValidZapk(path: string, manifest: Manifest = motionManifest()): void {
  writeFileSync(path, rawZip([{ name: 'manifest.json', data: json(manifest), deflate: true }]));
}

export function writeValidOnnxZapk(path: string): void {
  writeFileSync(path, rawZip(onnxEntries()));
}

const withEntry = (extra: RawEntry) => rawZip([...onnxEntries(), extra]);
const MiB = 1024 * 1024;

export interface HostileZapk {
  name: string;
  write: (path: string) => void;
  /** What the refusal message must say. */
  reason: RegExp;
}

export const HOSTILE_ZAPKS: readonly HostileZapk[] = [
  {
    name: 'zip-slip entry "../evil.txt"',
    write: (path) => writeFileSync(path, withEntry({ name: '../evil.txt', data: 'owned' })),
    reason: /unsafe entry name "\.\.\/evil\.txt"/,
  },
  {
    name: 'nested zip-slip entry "models/../../evil.txt"',
    write: (path) => writeFileSync(path, withEntry({ name: 'models/../../evil.txt', data: 'owned' })),
    reason: /unsafe entry name "models\/\.\.\/\.\.\/evil\.txt"/,
  },
  {
    name: 'absolute entry "/etc/evil"',
    write: (path) => writeFileSync(path, withEntry({ name: '/etc/evil', data: 'owned' })),
    reason: /unsafe entry name "\/etc\/evil"/,
  },
  {
    name: 'drive-letter entry "C:/evil.txt"',
    write: (path) => writeFileSync(path, withEntry({ name: 'C:/evil.txt', data: 'owned' })),
    reason: /unsafe entry name "C:\/evil\.txt"/,
  },
  {
    name: 'backslash entry "..\\evil.txt"',
    write: (path) => writeFileSync(path, withEntry({ name: '..\\evil.txt', data: 'owned' })),
    reason: /unsafe entry name "\.\.\\\\evil\.txt"/,
  },
  {
    name: 'entry name with a NUL byte',
    write: (path) => writeFileSync(path, withEntry({ name: 'models/evil\0.txt', data: 'owned' })),
    reason: /unsafe entry name "models\/evil\\u0000\.txt"/,
  },
  {
    name: 'symlink entry',
    write: (path) =>
      writeFileSync(path, withEntry({ name: 'models/link', data: '/etc/passwd', mode: 0o120777 })),
    reason: /entry "models\/link" is a symbolic link/,
  },
  {
    name: 'entry declaring 1 GiB uncompressed',
    write: (path) =>
      writeFileSync(
        path,
        withEntry({ name: 'models/huge.bin', data: 'tiny', deflate: true, declaredSize: 1024 * MiB }),
      ),
    reason: /entry "models\/huge\.bin" declares 1024 MiB uncompressed, more than the 512 MiB allowed/,
  },
  {
    name: 'zip bomb: 64 MiB of zeros deflated',
    write: (path) =>
      writeFileSync(
        path,
        withEntry({ name: 'models/zeros.bin', data: Buffer.alloc(64 * MiB), deflate: true }),
      ),
    reason: /entry "models\/zeros\.bin" would expand \d+ times .*possible zip bomb/,
  },
  {
    name: 'entry holding more bytes than it declares',
    write: (path) =>
      writeFileSync(
        path,
        withEntry({ name: 'models/liar.bin', data: Buffer.alloc(4096, 7), deflate: true, declaredSize: 10 }),
      ),
    reason: /entry "models\/liar\.bin" is damaged: too many bytes/,
  },
  {
    name: 'entry whose CRC-32 does not match its data',
    write: (path) =>
      writeFileSync(path, withEntry({ name: 'models/flipped.bin', data: 'some bytes', crc: 1234 })),
    reason: /entry "models\/flipped\.bin" is corrupt: its CRC-32 does not match/,
  },
  {
    name: 'missing manifest.json (package zipped with its folder)',
    write: (path) =>
      writeFileSync(path, rawZip([{ name: 'pkg/manifest.json', data: json(motionManifest()) }])),
    reason: /manifest\.json is missing from the root of the package \(found "pkg\/manifest\.json"/,
  },
  {
    name: 'manifest.json over 1 MiB',
    write: (path) => {
      const padded = `${json(motionManifest())}${' '.repeat(1.1 * MiB)}`;
      writeFileSync(path, rawZip([{ name: 'manifest.json', data: padded }]));
    },
    reason: /manifest\.json is 1\.1 MiB, more than the 1 MiB allowed/,
  },
  {
    name: 'manifest.json that is not JSON',
    write: (path) => writeFileSync(path, rawZip([{ name: 'manifest.json', data: '{ "format": 1, oops' }])),
    reason: /manifest\.json is not valid JSON/,
  },
  {
    name: 'manifest.json violating the schema (app type 7)',
    write: (path) => {
      const manifest = motionManifest();
      const broken = { ...manifest, apps: manifest.apps.map((app) => ({ ...app, type: 7 })) };
      writeFileSync(path, rawZip([{ name: 'manifest.json', data: JSON.stringify(broken) }]));
    },
    reason: /manifest\.json is invalid: manifest\.apps\[0\]\.type: must be one of \[1,2,3\]/,
  },
  {
    name: 'manifest naming a file the archive lacks',
    write: (path) => writeFileSync(path, rawZip(onnxEntries().filter((e) => e.name !== 'models/fake.onnx'))),
    reason:
      /manifest\.json names "models\/fake\.onnx" \(models\.detector\.file\) but the package does not contain it/,
  },
  {
    name: 'model file not matching its sha256',
    write: (path) =>
      writeFileSync(
        path,
        rawZip(onnxEntries().map((e) => (e.name === 'models/fake.onnx' ? { ...e, data: 'tampered' } : e))),
      ),
    reason: /"models\/fake\.onnx" does not match models\.detector\.sha256/,
  },
  {
    name: 'rule with a class id the labels file lacks',
    write: (path) => {
      const manifest = onnxManifest();
      const entry = manifest.apps[0]?.rule.classes?.[0];
      if (entry) entry.class_id = '3'; // labels.txt has 3 lines: ids 0..2
      writeFileSync(path, rawZip(onnxEntries(manifest)));
    },
    reason: /manifest\.apps\[0\]\.rule\.classes\[0\]\.class_id: the model has no class "3"/,
  },
  {
    name: 'not a zip at all',
    write: (path) => writeFileSync(path, 'this is a plain text file, not a package\n'.repeat(20)),
    reason: /the file is not a zip archive/,
  },
  {
    name: 'truncated zip',
    write: (path) => {
      const whole = rawZip(onnxEntries());
      writeFileSync(path, whole.subarray(0, Math.floor(whole.length / 2)));
    },
    reason: /the zip archive is truncated or damaged/,
  },
  {
    name: 'duplicate entry names (two manifest.json)',
    write: (path) =>
      writeFileSync(
        path,
        rawZip([
          { name: 'manifest.json', data: json(motionManifest()) },
          { name: 'manifest.json', data: json({ ...motionManifest(), zapk_id: 'impostor' }) },
        ]),
      ),
    reason: /the archive holds "manifest\.json" twice/,
  },
  {
    name: 'more than 256 entries',
    write: (path) => {
      const files = Array.from({ length: 256 }, (_, i) => ({ name: `extra/${i}.txt`, data: String(i) }));
      writeFileSync(path, rawZip([{ name: 'manifest.json', data: json(motionManifest()) }, ...files]));
    },
    reason: /the archive has 257 entries, more than the 256 allowed/,
  },
];

/** Well-formed packages whose model the engine refuses once it has loaded and run it at install. */
export const MODEL_MISMATCH_ZAPKS: readonly HostileZapk[] = [
  {
    name: 'a model file that is not ONNX (the format checks pass; loading it fails)',
    write: writeValidOnnxZapk,
    reason: /manifest\.models\.detector: the model .*(protobuf|parsing|Load model)/i,
  },
  {
    name: 'the fixture model with one label too few',
    write: (path) => {
      const model = readFileSync(join(FIXTURES, 'models', 'yolox_nano.onnx'));
      const labels = readFileSync(join(FIXTURES, 'models', 'coco-labels.txt'), 'utf8')
        .trim()
        .split('\n');
      const manifest = onnxManifest();
      const detector = manifest.models.detector;
      if (detector) detector.sha256 = createHash('sha256').update(model).digest('hex');
      const entries = onnxEntries(manifest).map((entry) => {
        if (entry.name === 'models/fake.onnx') return { ...entry, data: model };
        if (entry.name === 'labels/labels.txt') return { ...entry, data: labels.slice(0, -1).join('\n') };
        return entry;
      });
      writeFileSync(path, rawZip(entries));
    },
    reason: /manifest\.models\.detector: the model scores 80 classes, but the package lists 79 labels for it/,
  },
];
