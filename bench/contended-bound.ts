import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { LIVE_WARMUP_S, LiveDecoders } from './live-decoders';
import { MODEL, WARM_SESSION } from './video';

/**
 * The bound's work done all at once with nothing of the engine: N live cameras decoded to nothing
 * (live-decoders.ts) beside single-thread onnxruntime sessions, one per core, paced to
 * N x rate inferences a second. On a machine of few cores the decoders and the sessions share its
 * caches and memory bandwidth, so this costs more than the sum of each measured alone (the bound):
 * it is what the engine's CPU compares with to tell its own overhead from that contention.
 */

const PACED_SESSION = `${WARM_SESSION}
  (async () => {
    const { session, input } = await warmSession();
    parentPort.postMessage('ready');
    let done = 0;
    let stop = false;
    parentPort.on('message', (message) => {
      if (message === 'count') parentPort.postMessage(done);
      if (message === 'stop') stop = true;
    });
    const interval = 1000 / workerData.perSecond;
    let next = performance.now();
    while (!stop) {
      await session.run({ images: input });
      done++;
      next += interval;
      await new Promise((wake) => setTimeout(wake, Math.max(0, next - performance.now())));
    }
    await session.release();
    parentPort.postMessage('stopped');
  })();`;

export interface ContendedBound {
  /** Cores the decoders and the sessions took together. */
  cores: number;
  /** Inferences a second the sessions kept (N x rate when the machine keeps up). */
  inferencesPerSecond: number;
}

export async function contendedBound(
  file: string,
  cameras: number,
  rate: number,
  windowS: number,
): Promise<ContendedBound> {
  const decoders = await LiveDecoders.start(file, cameras, `contended-${cameras}`);
  const threads = availableParallelism();
  const sessions = Array.from(
    { length: threads },
    () =>
      new Worker(PACED_SESSION, {
        eval: true,
        workerData: { model: MODEL, perSecond: (cameras * rate) / threads },
      }),
  );
  const ask = (worker: Worker, message: string) =>
    new Promise<unknown>((answer) => {
      worker.once('message', answer);
      worker.postMessage(message);
    });
  try {
    await Promise.all(sessions.map((worker) => new Promise((ready) => worker.once('message', ready))));
    await sleep(LIVE_WARMUP_S * 1000);
    const count = async () =>
      (await Promise.all(sessions.map((w) => ask(w, 'count')))).reduce<number>((a, n) => a + Number(n), 0);
    const own = () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1e6;
    };
    const [decodeBefore, ownBefore, countBefore, startedAt] = [
      decoders.cpuSeconds(),
      own(),
      await count(),
      Date.now(),
    ];
    await sleep(windowS * 1000);
    const [decodeAfter, ownAfter, countAfter] = [decoders.cpuSeconds(), own(), await count()];
    const seconds = (Date.now() - startedAt) / 1000;
    return {
      cores: (decodeAfter - decodeBefore + ownAfter - ownBefore) / seconds,
      inferencesPerSecond: (countAfter - countBefore) / seconds,
    };
  } finally {
    await decoders.stop();
    await Promise.all(sessions.map((worker) => ask(worker, 'stop').then(() => worker.terminate())));
  }
}
