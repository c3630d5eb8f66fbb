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

/**
 * Requests to one worker-thread entry, each answered by its id. One thread, started with the first
 * request and never keeping the process alive; a thread that dies fails what it held, and the next
 * request starts a new one. `settle` turns a reply into the caller's result, or into the error the
 * caller gets.
 */
export class ThreadCalls<Request extends object, Reply extends { id: number }, Result> {
  private worker?: Worker;
  private readonly pending = new Map<
    number,
    { resolve: (result: Result) => void; reject: (e: Error) => void }
  >();
  private nextId = 1;

  constructor(
    private readonly callerUrl: string,
    private readonly name: string,
    /** Says what stopped, in errors: "the BMP decoder". */
    private readonly what: string,
    private readonly settle: (reply: Reply) => Result | Error,
  ) {}

  call(request: Request): Promise<Result> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...request });
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(this.callerUrl, this.name);
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (!waiting) return;
      const result = this.settle(reply);
      if (result instanceof Error) waiting.reject(result);
      else waiting.resolve(result);
    });
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) => this.fail(worker, new Error(`${this.what} stopped (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private fail(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}
