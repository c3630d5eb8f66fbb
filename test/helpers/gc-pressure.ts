/**
 * Preloaded (--import) into an engine process started with --expose-gc: forces a full collection every
 * 20 ms, so anything the engine relies on that only a weak reference keeps alive (a timer behind an
 * AbortSignal) is collected within a test instead of some day in production.
 */
const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('gc-pressure needs node --expose-gc');
setInterval(collect, 20).unref();

export {};
