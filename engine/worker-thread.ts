import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts the worker-thread entry `name` that lies beside the calling module (`callerUrl`, its
 * import.meta.url). From the source tree (tsx, vitest) the entry is TypeScript, loaded through tsx's
 * API; a bundled host ships it compiled as `name`.js beside the bundle (electron.vite.config.ts).
 */
export function startWorker(callerUrl: string, name: string): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl));
  // The ESM build of tsx's API: require.resolve would pick its CommonJS twin, which cannot tsImport.
  const tsxDir = dirname(createRequire(callerUrl).resolve('tsx/package.json'));
  const tsxApi = pathToFileURL(join(tsxDir, 'dist', 'esm', 'api', 'index.mjs')).href;
  const entry = new URL(`./${name}.ts`, callerUrl).href;
  const boot = `import(${JSON.stringify(tsxApi)}).then(({ tsImport }) => tsImport(${JSON.stringify(entry)}, ${JSON.stringify(callerUrl)}))`;
  return new Worker(boot, { eval: true });
}
