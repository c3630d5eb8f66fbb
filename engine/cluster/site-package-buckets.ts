import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { KV } from '@nats-io/kv';
import { type ObjectStore, Objm, StorageType } from '@nats-io/obj';
import { type Static, Type } from '@sinclair/typebox';
import { MAX_ZAPK_BYTES } from '../packages/zapk';
import type { ClusterConnection } from './connection';
import { whilePlacing } from './site-store';

/**
 * Where the site keeps its packages (site-packages.ts): each .zapk as an object of a JetStream object
 * store, and a KV record per package naming the object with its version, size and SHA-256; and the
 * reading and writing of those objects, a read refused unless it is exactly what its record says.
 */

/** The KV bucket of the records and the object store of the .zapk files (stream OBJ_vc_packages). */
export const SITE_PACKAGES_BUCKET = 'vc_packages';

/** A package as the site records it (KV bucket vc_packages, key: its zapk_id). */
export const SitePackageRecord = Type.Object({
  zapk_id: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' }),
  version: Type.String({ maxLength: 256 }),
  /** SHA-256 (hex) of the .zapk as stored: a node installs only an object with this digest. */
  digest: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  size: Type.Integer({ minimum: 1, maximum: MAX_ZAPK_BYTES }),
  /** The object's name in the object store. */
  object: Type.String({ minLength: 1, maxLength: 256 }),
  /** The node that stored it (the upload's, or the workstation's that brought it in). */
  uploaded_by: Type.String({ maxLength: 64 }),
  uploaded_at: Type.Integer({ minimum: 0 }),
});
export type SitePackageRecord = Static<typeof SitePackageRecord>;

/** The object a package's .zapk is stored as: one per content, so a new upload never overwrites one being read. */
export const objectName = (zapkId: string, digest: string) => `${zapkId}/${digest}`;

/** A site object that is not what its record says: not installed until the record changes. */
export class ObjectRefused extends Error {}

export interface SitePackageBuckets {
  records: KV;
  objects: ObjectStore;
}

/** Opens (creating on first use) the site's package records and objects with `replicas` copies each. */
export async function openSitePackages(
  conn: ClusterConnection,
  replicas: number,
): Promise<SitePackageBuckets> {
  const records = await whilePlacing(() => conn.kvm.create(SITE_PACKAGES_BUCKET, { replicas, history: 1 }));
  const objects = await whilePlacing(() =>
    new Objm(conn.js).create(SITE_PACKAGES_BUCKET, {
      replicas,
      storage: StorageType.File,
    }),
  );
  return { records, objects };
}

/** Writes the record's object to `file`, refusing one whose size or SHA-256 is not the record's. */
export async function downloadObject(
  objects: ObjectStore,
  record: SitePackageRecord,
  file: string,
): Promise<void> {
  const info = await objects.info(record.object);
  if (!info || info.deleted) throw new Error(`its object ${record.object} is not in the site's store`);
  if (info.size !== record.size)
    throw new ObjectRefused(`its object is ${info.size} bytes, its record says ${record.size}`);
  const result = await objects.get(record.object);
  if (!result) throw new Error(`its object ${record.object} is not in the site's store`);
  const hash = createHash('sha256');
  let bytes = 0;
  // The record's size bounds what is written, whatever the store sends.
  const checked = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > record.size)
        return done(new ObjectRefused(`its object is larger than ${record.size} bytes`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeline(
    Readable.fromWeb(result.data as WebReadableStream<Uint8Array>),
    checked,
    createWriteStream(file, { flags: 'wx' }),
  );
  const failed = await result.error;
  if (failed) throw failed;
  const actual = hash.digest('hex');
  if (actual !== record.digest)
    throw new ObjectRefused(`its object has SHA-256 ${actual}, its record says ${record.digest}`);
}

/** Stores a .zapk file as the named object, streamed in the store's chunks. */
export async function uploadObject(objects: ObjectStore, name: string, file: string): Promise<void> {
  const data = Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>;
  await objects.put({ name }, data);
}
