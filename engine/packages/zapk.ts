// Over 400 lines on purpose: reading a hostile archive is one chain of checks (entries, sizes, names, manifest, files) best read in order.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { type PassThrough, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import yazl from 'yazl';
import {
  checkManifestShape,
  isSafeRelativePath,
  labelsOf,
  type Manifest,
  type ModelSpec,
  manifestProblems,
} from './manifest';

/**
 * The .zapk package format: a zip with manifest.json at its root plus the model and labels files the
 * manifest names. Archives come from users, so every read assumes a hostile file: names, sizes, types
 * and compression ratios are checked from the central directory before any byte is inflated.
 */

/** A package that cannot be accepted; the message is one line for an operator (API code 40003). */
export class ZapkError extends Error {
  override name = 'ZapkError';
}

export interface ZapkLimits {
  /** Most entries (files and folders) in one archive. */
  maxEntries: number;
  /** Largest declared uncompressed size of one entry. */
  maxEntryBytes: number;
  /** Largest sum of declared uncompressed sizes. */
  maxTotalBytes: number;
  /** Highest uncompressed/compressed ratio of an entry over 1 MiB (zip-bomb guard). */
  maxRatio: number;
}

const MiB = 1024 * 1024;
export const DEFAULT_LIMITS: Readonly<ZapkLimits> = {
  maxEntries: 256,
  maxEntryBytes: 512 * MiB,
  maxTotalBytes: 1024 * MiB,
  maxRatio: 200,
};
export const MAX_MANIFEST_BYTES = MiB;
const MAX_LABELS_BYTES = MiB;
const RATIO_MIN_BYTES = MiB;
export const MANIFEST_FILE = 'manifest.json';
/** The largest .zapk accepted, as uploaded (the API's body limit) or as a cluster's site stores it. */
export const MAX_ZAPK_BYTES = 1024 * MiB;

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

function formatBytes(n: number): string {
  return n >= MiB ? `${Number((n / MiB).toFixed(1))} MiB` : `${n} bytes`;
}

// ---------------------------------------------------------------------------------------------------
// Manifest and content checks shared by archives, unpacked folders and the builder.

/** A file the manifest names, by its path inside the package. */
interface NamedFile {
  path: string;
  field: string;
  kind: 'model' | 'labels';
}

function namedFiles(manifest: Manifest): NamedFile[] {
  const files: NamedFile[] = [];
  for (const [id, model] of Object.entries(manifest.models)) {
    if (model.file !== undefined) files.push({ path: model.file, field: `models.${id}.file`, kind: 'model' });
    if (typeof model.labels === 'string') {
      files.push({ path: model.labels, field: `models.${id}.labels`, kind: 'labels' });
    }
  }
  return files;
}

function missingFile(file: NamedFile): ZapkError {
  return new ZapkError(
    `manifest.json names "${file.path}" (${file.field}) but the package does not contain it`,
  );
}

function assertNoProblems(problems: string[]): void {
  if (problems.length === 0) return;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  throw new ZapkError(`manifest.json is invalid: ${problems[0]}${more}`);
}

/** JSON and schema only: the builder still has to rewrite the file paths before the semantic checks. */
function parseManifestShape(bytes: Buffer): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ZapkError(`manifest.json is not valid JSON: ${(error as Error).message}`);
  }
  const checked = checkManifestShape(value);
  if (!checked.ok) throw new ZapkError(`manifest.json is invalid: ${checked.error}`);
  return checked.value;
}

/** Schema plus every check that needs no file content, so broken packages fail before any inflating. */
function parseManifest(bytes: Buffer): Manifest {
  const manifest = parseManifestShape(bytes);
  assertNoProblems(manifestProblems(manifest, null));
  return manifest;
}

/** What was read of the named files: sha256 of model files, text of labels files. */
interface Content {
  digests: Map<string, string>;
  texts: Map<string, Buffer>;
}

/** Digests against the manifest, then the label-dependent checks (class ids of every rule). */
function checkContent(manifest: Manifest, content: Content): void {
  for (const [id, model] of Object.entries(manifest.models)) {
    if (model.file === undefined || model.sha256 === undefined) continue;
    const actual = content.digests.get(model.file);
    if (actual !== model.sha256) {
      throw new ZapkError(
        `"${model.file}" does not match models.${id}.sha256 in manifest.json (file ${actual}, manifest ${model.sha256})`,
      );
    }
  }
  const labelsByModel = new Map<string, string[]>();
  for (const id of Object.keys(manifest.models)) {
    labelsByModel.set(
      id,
      labelsOf(manifest, id, (path) => content.texts.get(path) ?? ''),
    );
  }
  assertNoProblems(manifestProblems(manifest, labelsByModel));
}

// ---------------------------------------------------------------------------------------------------
// Reading archives.

function unsafeName(name: string): ZapkError {
  return new ZapkError(
    `unsafe entry name ${JSON.stringify(name)}: entries must be plain relative paths ` +
      '(no "..", absolute paths, drive letters, backslashes or colons)',
  );
}

/** Turns yauzl's wording into an operator's: which entry, and why it is refused. */
function zipError(error: unknown): ZapkError {
  if (error instanceof ZapkError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const unsafe = /^(?:absolute path|invalid relative path|invalid characters in fileName): (.*)$/s.exec(
    message,
  );
  return unsafe ? unsafeName(unsafe[1] ?? '') : new ZapkError(`the archive is damaged: ${message}`);
}

async function openZip(zipPath: string): Promise<ZipFile> {
  try {
    return await yauzl.openPromise(zipPath, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: true,
      validateEntrySizes: true,
      strictFileNames: true,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== undefined) throw error; // cannot open the file at all
    if (!/end of central directory record signature not found/i.test((error as Error).message)) {
      throw zipError(error);
    }
    // A zip starts with a local file header; with that but no directory at the end, the upload was cut.
    const handle = await open(zipPath, 'r');
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0).finally(() => handle.close());
    throw new ZapkError(
      head.equals(Buffer.from('PK\x03\x04', 'latin1'))
        ? 'the zip archive is truncated or damaged: its central directory is missing'
        : 'the file is not a zip archive',
    );
  }
}

function checkEntry(entry: Entry, limits: ZapkLimits): void {
  const name = JSON.stringify(entry.fileName);
  const type = (entry.externalFileAttributes >>> 16) & S_IFMT;
  if (type === S_IFLNK) {
    throw new ZapkError(`entry ${name} is a symbolic link; packages may not contain links`);
  }
  if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) {
    throw new ZapkError(`entry ${name} is a special file; packages may hold only files and folders`);
  }
  if (entry.isEncrypted()) throw new ZapkError(`entry ${name} is encrypted; packages may not be encrypted`);
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    throw new ZapkError(
      `entry ${name} uses compression method ${entry.compressionMethod}; only store and deflate`,
    );
  }
  if (entry.uncompressedSize > limits.maxEntryBytes) {
    throw new ZapkError(
      `entry ${name} declares ${formatBytes(entry.uncompressedSize)} uncompressed, ` +
        `more than the ${formatBytes(limits.maxEntryBytes)} allowed per entry`,
    );
  }
  const ratio = entry.uncompressedSize / Math.max(entry.compressedSize, 1);
  if (entry.uncompressedSize > RATIO_MIN_BYTES && ratio > limits.maxRatio) {
    throw new ZapkError(
      `entry ${name} would expand ${Math.round(ratio)} times (${formatBytes(entry.compressedSize)} to ` +
        `${formatBytes(entry.uncompressedSize)}), above the ratio of ${limits.maxRatio} allowed: possible zip bomb`,
    );
  }
}

/** Reads the central directory and refuses the archive on the first hostile entry. */
async function listEntries(zip: ZipFile, limits: ZapkLimits): Promise<Entry[]> {
  if (zip.entryCount > limits.maxEntries) {
    throw new ZapkError(
      `the archive has ${zip.entryCount} entries, more than the ${limits.maxEntries} allowed`,
    );
  }
  const entries: Entry[] = [];
  // Keys are lower case: on Windows and macOS "A.txt" and "a.txt" would overwrite each other.
  const seen = new Set<string>();
  let total = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      const path = entry.fileName.replace(/\/$/, '');
      // yauzl already refuses "..", absolute and backslash names; this adds NUL, colons, empty segments.
      if (!isSafeRelativePath(path)) throw unsafeName(entry.fileName);
      const key = path.toLowerCase();
      if (seen.has(key)) throw new ZapkError(`the archive holds ${JSON.stringify(entry.fileName)} twice`);
      seen.add(key);
      checkEntry(entry, limits);
      total += entry.uncompressedSize;
      if (total > limits.maxTotalBytes) {
        throw new ZapkError(
          `the archive declares more than the ${formatBytes(limits.maxTotalBytes)} allowed in total`,
        );
      }
      entries.push(entry);
    }
  } catch (error) {
    throw zipError(error);
  }
  assertNoFileParents(entries);
  return entries;
}

/** "a" as a file and "a/b" as another entry cannot both be extracted. */
function assertNoFileParents(entries: Entry[]): void {
  const files = new Set(entries.filter((e) => !isDirectory(e)).map((e) => e.fileName.toLowerCase()));
  for (const entry of entries) {
    const parts = entry.fileName.toLowerCase().split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      if (files.has(parent)) {
        throw new ZapkError(
          `entry ${JSON.stringify(entry.fileName)} lies under "${parent}", which is a file`,
        );
      }
    }
  }
}

function isDirectory(entry: Entry): boolean {
  return entry.fileName.endsWith('/');
}

/** Inflated bytes of one entry; yauzl's stream errors become ZapkErrors naming the entry. */
async function* entryChunks(zip: ZipFile, entry: Entry): AsyncGenerator<Buffer> {
  try {
    const stream = await zip.openReadStreamPromise(entry);
    for await (const chunk of stream) yield chunk as Buffer;
  } catch (error) {
    throw new ZapkError(`entry ${JSON.stringify(entry.fileName)} is damaged: ${(error as Error).message}`);
  }
}

/**
 * Streams one entry to target (or nowhere) while counting real bytes against the declared size and
 * checking the CRC. yauzl's validateEntrySizes checks sizes too; counting here keeps the guarantee ours.
 */
async function drainEntry(
  zip: ZipFile,
  entry: Entry,
  target: string | null,
  keep: boolean,
): Promise<{ sha256: string; data: Buffer }> {
  const name = JSON.stringify(entry.fileName);
  const hash = createHash('sha256');
  const kept: Buffer[] = [];
  async function* meter() {
    let bytes = 0;
    let crc = 0;
    for await (const chunk of entryChunks(zip, entry)) {
      bytes += chunk.length;
      if (bytes > entry.uncompressedSize) {
        throw new ZapkError(`entry ${name} holds more than the ${entry.uncompressedSize} bytes it declares`);
      }
      crc = crc32(chunk, crc);
      hash.update(chunk);
      if (keep) kept.push(chunk);
      yield chunk;
    }
    if (bytes !== entry.uncompressedSize) {
      throw new ZapkError(`entry ${name} holds ${bytes} bytes but declares ${entry.uncompressedSize}`);
    }
    if (crc !== entry.crc32) throw new ZapkError(`entry ${name} is corrupt: its CRC-32 does not match`);
  }
  // 'wx' never follows or replaces anything already at target.
  const sink =
    target === null
      ? new Writable({ write: (_chunk, _encoding, done) => done() })
      : createWriteStream(target, { flags: 'wx', mode: 0o644 });
  await pipeline(meter(), sink);
  return { sha256: hash.digest('hex'), data: Buffer.concat(kept) };
}

/** Validates the whole archive; with outDir set, also writes every entry below it. */
async function readZapk(zipPath: string, limits: ZapkLimits, outDir: string | null): Promise<Manifest> {
  const zip = await openZip(zipPath);
  try {
    const entries = await listEntries(zip, limits);
    const manifestEntry = entries.find((e) => e.fileName === MANIFEST_FILE);
    if (!manifestEntry) {
      const nested = entries.find((e) => e.fileName.endsWith(`/${MANIFEST_FILE}`));
      const hint = nested ? ` (found "${nested.fileName}": zip the folder's contents, not the folder)` : '';
      throw new ZapkError(`manifest.json is missing from the root of the package${hint}`);
    }
    if (manifestEntry.uncompressedSize > MAX_MANIFEST_BYTES) {
      throw new ZapkError(
        `manifest.json is ${formatBytes(manifestEntry.uncompressedSize)}, more than the 1 MiB allowed`,
      );
    }
    const manifest = parseManifest((await drainEntry(zip, manifestEntry, null, true)).data);

    const byName = new Map(entries.map((e) => [e.fileName, e]));
    const named = namedFiles(manifest);
    for (const file of named) {
      const entry = byName.get(file.path);
      if (!entry || isDirectory(entry)) throw missingFile(file);
      if (file.kind === 'labels' && entry.uncompressedSize > MAX_LABELS_BYTES) {
        throw new ZapkError(`labels file "${file.path}" is larger than ${formatBytes(MAX_LABELS_BYTES)}`);
      }
    }

    const labelPaths = new Set(named.filter((f) => f.kind === 'labels').map((f) => f.path));
    const content: Content = { digests: new Map(), texts: new Map() };
    for (const entry of entries) {
      const target = outDir === null ? null : insideDir(outDir, entry.fileName);
      if (isDirectory(entry)) {
        if (target !== null) await mkdir(target, { recursive: true });
        continue;
      }
      if (target !== null) await mkdir(dirname(target), { recursive: true });
      const isLabels = labelPaths.has(entry.fileName);
      const { sha256, data } = await drainEntry(zip, entry, target, isLabels);
      content.digests.set(entry.fileName, sha256);
      if (isLabels) content.texts.set(entry.fileName, data);
    }
    checkContent(manifest, content);
    return manifest;
  } finally {
    zip.close();
  }
}

/** The absolute path of a (checked) entry name below dir; a last guard that nothing lands outside it. */
function insideDir(dir: string, name: string): string {
  const target = resolve(dir, name);
  if (!target.startsWith(dir + sep)) {
    throw new ZapkError(`entry ${JSON.stringify(name)} would land outside the package`);
  }
  return target;
}

/** Validates a .zapk without writing anything and returns its manifest. */
export async function inspectZapk(zipPath: string, limits: ZapkLimits = DEFAULT_LIMITS): Promise<Manifest> {
  return readZapk(zipPath, limits, null);
}

/**
 * Validates and extracts a .zapk into destDir, which must not exist yet. Entries go to a temporary
 * folder beside it that is renamed into place only when everything checked out, so destDir either
 * appears complete or not at all.
 */
export async function extractZapk(
  zipPath: string,
  destDir: string,
  limits: ZapkLimits = DEFAULT_LIMITS,
): Promise<Manifest> {
  const dest = resolve(destDir);
  if (await exists(dest)) throw new Error(`cannot extract the package: ${dest} already exists`);
  await mkdir(dirname(dest), { recursive: true });
  const temp = await mkdtemp(join(dirname(dest), `.${basename(dest)}.partial-`));
  try {
    const manifest = await readZapk(zipPath, limits, temp);
    await rename(temp, dest);
    return manifest;
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

// ---------------------------------------------------------------------------------------------------
// Unpacked folders and building.

async function readSmallFile(path: string, limit: number, what: string): Promise<Buffer> {
  const info = await stat(path).catch(() => null);
  if (!info?.isFile()) throw new ZapkError(`${what} not found at ${path}`);
  if (info.size > limit) {
    throw new ZapkError(`${what} is ${formatBytes(info.size)}, more than the ${formatBytes(limit)} allowed`);
  }
  return readFile(path);
}

/** The lower-case hex SHA-256 of a file's content, read as a stream. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** Validates an unpacked package folder (manifest.json plus its files) the same way as an archive. */
export async function loadManifestDir(dir: string): Promise<Manifest> {
  const manifest = parseManifest(
    await readSmallFile(join(dir, MANIFEST_FILE), MAX_MANIFEST_BYTES, MANIFEST_FILE),
  );
  const content: Content = { digests: new Map(), texts: new Map() };
  for (const file of namedFiles(manifest)) {
    const path = join(dir, file.path);
    // lstat: a link could point anywhere, and archives may not hold links either.
    const info = await lstat(path).catch(() => null);
    if (!info?.isFile()) throw missingFile(file);
    if (file.kind === 'model') {
      content.digests.set(file.path, await sha256File(path));
    } else {
      content.texts.set(file.path, await readSmallFile(path, MAX_LABELS_BYTES, `labels file "${file.path}"`));
    }
  }
  checkContent(manifest, content);
  return manifest;
}

/** Archive path (lower-cased key) -> the archive path and the source file stored there. */
type Placement = Map<string, { archivePath: string; source: string }>;

/** Reserves archivePath for source; two different sources may not share one archive name. */
function place(placement: Placement, archivePath: string, source: string): string {
  const key = archivePath.toLowerCase();
  const taken = placement.get(key);
  if (taken && taken.source !== source) {
    throw new ZapkError(`${taken.source} and ${source} would both be stored as "${archivePath}"; rename one`);
  }
  placement.set(key, { archivePath, source });
  return archivePath;
}

async function sourceFile(baseDir: string, relative: string, field: string): Promise<string> {
  const path = resolve(baseDir, relative);
  const info = await stat(path).catch(() => null);
  if (!info?.isFile()) throw new ZapkError(`${field}: "${relative}" is not a file (looked for ${path})`);
  return path;
}

/**
 * Builds a .zapk from a manifest whose file and labels paths are relative to the manifest's folder.
 * Files are stored as models/<name> and labels/<name>, model digests are computed into the written
 * manifest, and the archive appears at outPath only once complete and accepted by inspectZapk, so the
 * builder never hands out a package the engine would refuse (size limits included).
 */
export async function buildZapk(
  manifestPath: string,
  outPath: string,
): Promise<{ manifest: Manifest; bytes: number }> {
  const baseDir = dirname(resolve(manifestPath));
  const source = parseManifestShape(await readSmallFile(manifestPath, MAX_MANIFEST_BYTES, 'manifest'));
  const placement: Placement = new Map();
  const content: Content = { digests: new Map(), texts: new Map() };
  const models: Record<string, ModelSpec> = {};
  for (const [id, model] of Object.entries(source.models)) {
    const spec: ModelSpec = { ...model };
    if (model.file !== undefined) {
      const path = await sourceFile(baseDir, model.file, `models.${id}.file`);
      spec.file = place(placement, `models/${basename(path)}`, path);
      spec.sha256 = await sha256File(path);
      if (model.sha256 !== undefined && model.sha256 !== spec.sha256) {
        throw new ZapkError(
          `models.${id}.sha256: ${model.file} has sha256 ${spec.sha256}, not ${model.sha256}`,
        );
      }
      content.digests.set(spec.file, spec.sha256);
    }
    if (typeof model.labels === 'string') {
      const path = await sourceFile(baseDir, model.labels, `models.${id}.labels`);
      spec.labels = place(placement, `labels/${basename(path)}`, path);
      content.texts.set(
        spec.labels,
        await readSmallFile(path, MAX_LABELS_BYTES, `labels file ${model.labels}`),
      );
    }
    models[id] = spec;
  }
  const manifest: Manifest = { ...source, models };
  checkContent(manifest, content);
  const bytes = await writeZip(resolve(outPath), manifest, [...placement.values()]);
  return { manifest, bytes };
}

async function writeZip(
  outPath: string,
  manifest: Manifest,
  files: { archivePath: string; source: string }[],
): Promise<number> {
  const zip = new yazl.ZipFile();
  const output = zip.outputStream as PassThrough;
  // yazl reports a failing source file on the ZipFile, which would leave the output stream hanging.
  zip.on('error', (error: Error) => output.destroy(error));
  zip.addBuffer(Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`), MANIFEST_FILE);
  for (const file of files) zip.addFile(file.source, file.archivePath);
  zip.end();

  const temp = `${outPath}.${randomBytes(6).toString('hex')}.partial`;
  try {
    await pipeline(output, createWriteStream(temp, { flags: 'wx' }));
    await inspectZapk(temp);
    await rename(temp, outPath);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return (await stat(outPath)).size;
}
