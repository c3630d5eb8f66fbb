import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';
import { buildCsp } from './engine/contract/csp';

const root = import.meta.dirname;

/** Native or binary-carrying packages: loaded from node_modules (asar-unpacked), never bundled. */
const NATIVE_EXTERNALS = ['better-sqlite3', 'onnxruntime-node', 'ffmpeg-static'];

/**
 * The dev server injects an inline React refresh preamble and inline styles, which the production
 * meta CSP of index.html forbids: relax it while serving only. Builds keep index.html's policy.
 */
function devCsp(): Plugin {
  return {
    name: 'vision-console:dev-csp',
    apply: 'serve',
    transformIndexHtml(html) {
      return html.replace(
        /(<meta http-equiv="Content-Security-Policy" content=")[^"]*(")/,
        `$1${buildCsp({ meta: true, dev: true })}$2`,
      );
    },
  };
}

export default defineConfig({
  main: {
    build: {
      outDir: resolve(root, 'out/main'),
      // Dependencies stay in node_modules (electron-builder ships production dependencies).
      externalizeDeps: true,
      lib: {
        // The headless engine (npm run engine) is an entry of its own, as are the inference host, the
        // BMP decoder and the change detector, which the engine starts (a process, threads) by file
        // name beside the bundle.
        entry: {
          index: resolve(root, 'main/index.ts'),
          engine: resolve(root, 'engine/cli.ts'),
          'inference-worker': resolve(root, 'engine/inference/worker.ts'),
          'bmp-worker': resolve(root, 'engine/images/bmp-worker.ts'),
          'change-worker': resolve(root, 'engine/change/change-worker.ts'),
        },
        formats: ['es'],
        fileName: (_format, entryName) => `${entryName}.js`,
      },
      rolldownOptions: {
        external: NATIVE_EXTERNALS,
        // Shared chunks sit beside the entries, so import.meta.url-relative paths hold in every file.
        output: { chunkFileNames: '[name]-[hash].js' },
      },
    },
  },
  preload: {
    build: {
      outDir: resolve(root, 'out/preload'),
      // A sandboxed preload must be a single CommonJS file that requires nothing but 'electron'.
      externalizeDeps: false,
      lib: { entry: resolve(root, 'preload/index.ts'), formats: ['cjs'], fileName: () => 'index.cjs' },
    },
  },
  renderer: {
    root: resolve(root, 'renderer'),
    plugins: [react(), devCsp()],
    build: {
      outDir: resolve(root, 'out/renderer'),
      // The headless engine also serves this folder over the network (web mode): ship it small.
      minify: true,
      rolldownOptions: { input: resolve(root, 'renderer/index.html') },
    },
  },
});
