/**
 * The engine's supervision state for the console: asked for on engine:state, pushed on every change.
 * The channel is checked like every other (./ipc handleChecked).
 */
import type { EngineState } from '../engine/contract/engine-process';
import { Channels, PushChannels } from '../preload/channels';
import type { FeedWindow } from './events';
import { CHANNEL_SCHEMAS } from './ipc';
import { handleChecked, refuser } from './ipc-guard';

export interface StateSource {
  readonly state: EngineState;
  onState(listener: (state: EngineState) => void): () => void;
}

/** Registers engine:state and pushes each change to the window; returns the removal. */
export function registerEngineStateIpc(options: {
  appOrigin: string;
  engine: StateSource;
  window: () => FeedWindow | null;
  log?: (message: string) => void;
}): () => void {
  const refuse = refuser(options.log ?? ((message) => console.warn(message)));
  const remove = handleChecked(
    Channels.engineState,
    CHANNEL_SCHEMAS[Channels.engineState],
    options.appOrigin,
    refuse,
    async () => options.engine.state,
  );
  const stopPush = options.engine.onState((state) => {
    const target = options.window();
    if (target && !target.isDestroyed()) target.webContents.send(PushChannels.engineState, state);
  });
  return () => {
    stopPush();
    remove();
  };
}
