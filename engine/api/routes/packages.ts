import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Type } from '@sinclair/typebox';
import { ListedPackage } from '../../packages/listing';
import type { PackageStore } from '../../packages/package-store';
import type { PackageRegistry } from '../../packages/registry';
import { MAX_ZAPK_BYTES } from '../../packages/zapk';
import { whenAbandoned } from '../abandoned';
import { Envelope, ok } from '../envelope';
import { ApiError } from '../errors';
import type { RoutePlugin } from '../route-plugin';
import { AppParams, AppUpdateBody, PackageInstalled, ZapkParams } from '../schemas';

const MAX_PACKAGE_BYTES = MAX_ZAPK_BYTES;

export const packageRoutes: RoutePlugin<{
  packages: Pick<PackageRegistry, 'list' | 'restoreBuiltin'>;
  packageStore: PackageStore;
  tmpDir: string;
}> = async (app, { packages, packageStore, tmpDir }) => {
  app.get(
    '/api/zapk',
    {
      schema: {
        tags: ['applications'],
        summary: '4.2 List application packages',
        response: { 200: Envelope(Type.Array(ListedPackage)) },
      },
    },
    async () => ok(packages.list()),
  );

  app.post(
    '/api/zapk',
    {
      config: {
        accepts: ['multipart/form-data'],
        upload: { required: ['file'] },
        refusals: ['INVALID_PACKAGE', 'PACKAGE_IN_USE', 'MODEL_CHECKS_BUSY'],
      },
      bodyLimit: MAX_PACKAGE_BYTES,
      schema: {
        tags: ['applications'],
        summary: 'Extension: install or upgrade a .zapk (multipart, file part "file")',
        consumes: ['multipart/form-data'],
        response: { 200: Envelope(PackageInstalled) },
      },
    },
    async (request, reply) => {
      const file = await request.file({ limits: { fileSize: MAX_PACKAGE_BYTES, files: 1 } });
      if (file?.fieldname !== 'file') {
        throw new ApiError(
          'INVALID_PARAMETER',
          'body.file: a multipart file part named "file" with the .zapk is required',
        );
      }
      await mkdir(tmpDir, { recursive: true });
      const upload = join(tmpDir, `upload-${randomUUID()}.zapk`);
      // A client that goes away before the answer abandons the install: its model checks are
      // cancelled (their processes killed, their places in the check queue given back).
      const abandoned = whenAbandoned(request, reply);
      try {
        await pipeline(file.file, createWriteStream(upload));
        if (file.file.truncated)
          throw new ApiError('BODY_TOO_LARGE', 'the package is larger than the 1 GiB accepted');
        return ok(await packageStore.installZapk(upload, abandoned.signal));
      } catch (error) {
        if (abandoned.signal.aborted) return abandoned.drop('a package install', error);
        throw error;
      } finally {
        abandoned.end();
        await rm(upload, { force: true });
      }
    },
  );

  app.post(
    '/api/zapk/builtin/restore',
    {
      config: { refusals: ['PACKAGE_IN_USE'] },
      schema: {
        tags: ['applications'],
        summary: "Extension: install the engine's bundled built-in package again (409 while a task uses it)",
        response: { 200: Envelope(PackageInstalled) },
      },
    },
    async () => ok(await packages.restoreBuiltin()),
  );

  app.delete(
    '/api/zapk/:zapk_id',
    {
      config: { refusals: ['PACKAGE_NOT_FOUND', 'PACKAGE_IN_USE'] },
      schema: {
        tags: ['applications'],
        summary: 'Extension: uninstall a package (409 while a running task uses it)',
        params: ZapkParams,
        response: { 200: Envelope(Type.Object({ zapk_id: Type.String() })) },
      },
    },
    async (request) => {
      await packageStore.uninstall(request.params.zapk_id);
      return ok({ zapk_id: request.params.zapk_id });
    },
  );

  app.put(
    '/api/zapk/:zapk_id/app/:app_id',
    {
      config: { refusals: ['PACKAGE_NOT_FOUND', 'APP_NOT_FOUND', 'APP_EDIT_CONFLICT'] },
      schema: {
        tags: ['applications'],
        summary: "4.3 Update an application's name and rule",
        params: AppParams,
        body: AppUpdateBody,
        response: { 200: Envelope(Type.Object({ zapk_id: Type.String(), app_id: Type.String() })) },
      },
    },
    async (request) => {
      const { zapk_id, app_id } = request.params;
      await packageStore.updateApp(zapk_id, app_id, request.body);
      return ok({ zapk_id, app_id });
    },
  );
};
