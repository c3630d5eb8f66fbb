import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** Where the shared fixtures lie; pure tests import this, never the engine helper, so they load no engine. */
export const SHARED = resolve(import.meta.dirname, '../../../shared');
export const FIXTURES = join(SHARED, 'fixtures');
export const VIDEO = join(FIXTURES, 'media', 'vtest.avi');
export const ADMIN_PASSWORD = 'test-admin-password';
/**
 * The media folders of the tests' engines: the shared fixtures, and the system's temporary folder
 * where tests make their own clips. A test of the media-folder rule gives its own.
 */
export const TEST_MEDIA_DIRS: readonly string[] = [FIXTURES, tmpdir()];
/** The built-in package as the sources carry it (what engine/engine.ts installs from a checkout). */
export const BUILTIN_PACKAGE_DIR = resolve(import.meta.dirname, '../../assets/builtin');
