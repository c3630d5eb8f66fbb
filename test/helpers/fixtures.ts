import { join, resolve } from 'node:path';

/** Where the shared fixtures lie; pure tests import this, never the engine helper, so they load no engine. */
export const SHARED = resolve(import.meta.dirname, '../../../shared');
export const FIXTURES = join(SHARED, 'fixtures');
export const VIDEO = join(FIXTURES, 'media', 'vtest.avi');
export const ADMIN_PASSWORD = 'test-admin-password';
/** The built-in package as the sources carry it (what engine/engine.ts installs from a checkout). */
export const BUILTIN_PACKAGE_DIR = resolve(import.meta.dirname, '../../assets/builtin');
