/**
 * The checks every IPC channel has before its handler runs: the sender is the console page's own
 * top-level frame, there is one payload, and it matches the channel's TypeBox schema. A refusal is
 * logged and reaches the renderer as the rejected invoke's error.
 */
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type IpcMainInvokeEvent, ipcMain } from 'electron';
import type { Channel } from '../preload/channels';
import { isAllowedNavigation } from './security';

/** A refusal: the message says why, and reaches the renderer as the rejected invoke's error. */
export class IpcRefusedError extends Error {
  override readonly name = 'IpcRefusedError';
}

/** Whether an IPC message comes from the console page itself: its top-level frame, on the app origin. */
export function isTrustedSender(
  frame: { readonly url: string; readonly parent: unknown } | null | undefined,
  appOrigin: string,
): boolean {
  try {
    if (!frame || frame.parent !== null) return false;
    return isAllowedNavigation(frame.url, appOrigin);
  } catch {
    // A destroyed frame throws on access.
    return false;
  }
}

/** A payload check naming the first offending field, e.g. "payload.port: Expected integer". */
function compileCheck(schema: TSchema): (value: unknown) => { ok: true } | { ok: false; error: string } {
  const compiled = TypeCompiler.Compile(schema);
  return (value) => {
    if (compiled.Check(value)) return { ok: true };
    const first = compiled.Errors(value).First();
    const where = `payload${first?.path.replace(/\//g, '.') ?? ''}`;
    return { ok: false, error: `${where}: ${first?.message ?? 'is invalid'}` };
  };
}

/**
 * Registers a channel's handler on ipcMain behind the checks every channel has: the sender is the
 * console page, there is one payload, and it matches the schema. Returns the removal.
 */
export function handleChecked(
  channel: Channel,
  schema: TSchema,
  appOrigin: string,
  refuse: (channel: Channel, reason: string) => never,
  handler: (payload: unknown, event: IpcMainInvokeEvent) => Promise<unknown>,
): () => void {
  const check = compileCheck(schema);
  const checked: Handler = async (event, ...args) => {
    if (!isTrustedSender(event.senderFrame, appOrigin))
      return refuse(channel, 'sender is not the console page');
    if (args.length > 1) return refuse(channel, 'expects a single payload');
    const payload = args.length === 0 ? null : args[0];
    const result = check(payload);
    if (!result.ok) return refuse(channel, `invalid payload: ${result.error}`);
    return handler(payload, event);
  };
  ipcMain.handle(channel, checked);
  return () => ipcMain.removeHandler(channel);
}

/** The refusal of a channel: logged, and thrown to the renderer as the rejected invoke's error. */
export function refuser(log: (message: string) => void): (channel: Channel, reason: string) => never {
  return (channel, reason) => {
    log(`ipc ${channel}: refused: ${reason}`);
    throw new IpcRefusedError(`${channel}: ${reason}`);
  };
}

type Handler = (event: IpcMainInvokeEvent, ...args: unknown[]) => Promise<unknown>;
