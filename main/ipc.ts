// Over 400 lines on purpose: every IPC channel's handler with its checks, one place to audit what the page can ask of main.
/**
 * IPC between the console page and the main process. The renderer reaches the engine only through
 * these handlers: every message is checked (sender frame = the app's own top-level page, payload =
 * the channel's TypeBox schema, path = a plain /api/ path) before main calls the engine with the
 * Bearer token the engine process issued (EngineHandle.issueToken). The token never crosses to the renderer.
 */
import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, extname, isAbsolute } from 'node:path';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  BrowserWindow,
  dialog,
  type IpcMainInvokeEvent,
  type MessageBoxOptions,
  type OpenDialogOptions,
} from 'electron';
import { PasswordReset } from '../engine/contract';
import type { IssuedToken } from '../engine/contract/engine-process';
import type { AppInfo, EngineResponse, SettingsView } from '../preload/api';
import { type Channel, Channels } from '../preload/channels';
import { TokenSource } from './engine-token';
import { handleChecked, IpcRefusedError, refuser } from './ipc-guard';
import { mediaDirProblem, type SettingsPatch, SettingsPatchSchema } from './settings';

/** What the IPC layer needs from the engine process (the supervisor answers for it). */
export interface EngineHandle {
  /** The running engine's URL; it can change when the engine is restarted. */
  readonly url: string;
  /** A token for the local admin; rejects while no engine runs. */
  issueToken(): Promise<IssuedToken>;
  /**
   * Sets the admin's password without the current one, which main never holds (the engine
   * process's own channel); answers as PUT /api/auth/password would. Rejects while no engine runs.
   */
  resetPassword(password: string): Promise<EngineResponse>;
}

/** What main asks the operator before an action a page alone must not be able to take. */
export interface Confirmation {
  title: string;
  message: string;
  detail: string;
  /** The label of the button that goes ahead; the other one cancels, and is the default. */
  action: string;
}

/** The desktop settings file, as main reads and writes it (./settings does the checking). */
export interface SettingsStore {
  view(): Promise<SettingsView>;
  /** Saves a checked patch; rejects with the reason when the patch is refused. */
  save(patch: SettingsPatch): Promise<SettingsView>;
}

export interface IpcOptions {
  /** Origin of the console page (app://console, or the Vite dev server in development). */
  appOrigin: string;
  engine: EngineHandle;
  /** The engine token; shared with the session's header injection for media requests. */
  tokens?: TokenSource;
  settings: SettingsStore;
  /** Quits (stopping the engine) and starts the app again. */
  relaunch: () => void;
  /** Application version for app:info. */
  version: string;
  /** Timeout of one engine call; start-task may legitimately wait 15 s for a first frame. */
  requestTimeoutMs?: number;
  /** Timeout of a package upload (large model files). */
  uploadTimeoutMs?: number;
  now?: () => number;
  /** Where refusals are reported (main's console by default). */
  log?: (message: string) => void;
  /**
   * Asks the operator in a native dialog, outside the page: true to go ahead. A compromised console
   * page could otherwise set a new admin password or expose the engine on the LAN by itself.
   */
  confirm?: (question: Confirmation, event: IpcMainInvokeEvent) => Promise<boolean>;
}

/** The native folder dialog over the asking window: the chosen folder, or null when cancelled. */
async function chooseFolder(
  event: IpcMainInvokeEvent,
  title: string,
  properties: OpenDialogOptions['properties'],
): Promise<string | null> {
  const window = BrowserWindow.fromWebContents(event.sender);
  const options: OpenDialogOptions = { title, properties };
  const result = window ? await dialog.showOpenDialog(window, options) : await dialog.showOpenDialog(options);
  const chosen = result.filePaths[0];
  return result.canceled || chosen === undefined ? null : chosen;
}

/** The native question: a warning whose default button cancels. */
async function askInDialog(question: Confirmation, event: IpcMainInvokeEvent): Promise<boolean> {
  const window = BrowserWindow.fromWebContents(event.sender);
  const options: MessageBoxOptions = {
    type: 'warning',
    title: question.title,
    message: question.message,
    detail: question.detail,
    buttons: ['Cancel', question.action],
    defaultId: 0,
    cancelId: 0,
    noLink: true,
  };
  const { response } = window
    ? await dialog.showMessageBox(window, options)
    : await dialog.showMessageBox(options);
  return response === 1;
}

const RESET_PASSWORD: Confirmation = {
  title: 'Vision Console',
  message: 'Set a new admin password?',
  detail:
    'The console asks to replace the admin password. Everyone signed in as admin elsewhere (the web console, API clients) is signed out.',
  action: 'Set password',
};

const EXPOSE_ON_LAN: Confirmation = {
  title: 'Vision Console',
  message: 'Expose the engine on the local network?',
  detail:
    'After a restart, every computer on the network can reach the engine and its web console (a password still guards them). The engine speaks plain HTTP: use it on a network you trust.',
  action: 'Expose on the network',
};

const resetBody = TypeCompiler.Compile(PasswordReset);

/** JSON bodies the engine accepts (api-decisions.md: up to 1 MiB). */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;
/** Image uploads as base64 JSON (4.8, 4.9): two images of 20 MiB, base64-encoded, and the braces. */
export const MAX_IMAGE_BODY_BYTES = 54 * 1024 * 1024;
/** Packages the engine accepts (E.3). */
export const MAX_ZAPK_BYTES = 1024 * 1024 * 1024;

const IMAGE_UPLOAD_PATH = /^\/api\/task\/[^/]+\/(image|diff_image)$/;

/** The largest JSON body main passes on for a path. */
export function maxBodyBytes(path: string): number {
  return IMAGE_UPLOAD_PATH.test(path) ? MAX_IMAGE_BODY_BYTES : MAX_JSON_BODY_BYTES;
}

/**
 * Paths the renderer may not call through main: token minting stays out of the renderer entirely.
 * The one exception is changing the admin password (PUT /api/auth/password, the settings screen).
 */
const DENIED_PREFIXES = ['/api/auth/'];
const PASSWORD_PATH = '/api/auth/password/';
const ALLOWED_UNDER_DENIED = [{ method: 'PUT', path: PASSWORD_PATH }];

/** A checked API path as the engine's router reads it: decoded, lower case, with a trailing slash. */
const routedPath = (path: string) =>
  `/${path
    .slice(1)
    .split('/')
    .map((segment) => decodeURIComponent(segment))
    .join('/')}/`.toLowerCase();

/** The page's name for one of its calls, so that it can cancel it (Channels.cancelRequest). */
const RequestId = Type.String({ pattern: '^[A-Za-z0-9_-]{8,64}$' });

export const EngineRequestSchema = Type.Object(
  {
    method: Type.Union([
      Type.Literal('GET'),
      Type.Literal('POST'),
      Type.Literal('PUT'),
      Type.Literal('DELETE'),
    ]),
    path: Type.String({ minLength: 5, maxLength: 2048, pattern: '^/api/' }),
    query: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1, maxLength: 128 }),
        Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Boolean()]),
      ),
    ),
    body: Type.Optional(Type.Unknown()),
    request_id: Type.Optional(RequestId),
  },
  { additionalProperties: false },
);
export type EngineRequestPayload = Static<typeof EngineRequestSchema>;

export const CancelRequestSchema = Type.Object({ request_id: RequestId }, { additionalProperties: false });
export type CancelRequestPayload = Static<typeof CancelRequestSchema>;

export const InstallZapkSchema = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 4096 }) },
  { additionalProperties: false },
);
export type InstallZapkPayload = Static<typeof InstallZapkSchema>;

/** The bytes are checked by hand (a Uint8Array is no JSON type); the name must end in .zapk. */
export const InstallZapkDataSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, pattern: '\\.[zZ][aA][pP][kK]$' }),
    data: Type.Unknown(),
  },
  { additionalProperties: false },
);
export type InstallZapkDataPayload = Static<typeof InstallZapkDataSchema>;

/** Channels without arguments: the preload sends null. */
export const NoPayloadSchema = Type.Null();

/** Every channel and its payload schema. */
export const CHANNEL_SCHEMAS: Record<Channel, TSchema> = {
  [Channels.request]: EngineRequestSchema,
  [Channels.cancelRequest]: CancelRequestSchema,
  [Channels.openZapk]: NoPayloadSchema,
  [Channels.installZapk]: InstallZapkSchema,
  [Channels.installZapkData]: InstallZapkDataSchema,
  [Channels.info]: NoPayloadSchema,
  [Channels.getSettings]: NoPayloadSchema,
  [Channels.saveSettings]: SettingsPatchSchema,
  [Channels.chooseDataDir]: NoPayloadSchema,
  [Channels.chooseMediaDir]: NoPayloadSchema,
  [Channels.relaunch]: NoPayloadSchema,
  [Channels.engineState]: NoPayloadSchema,
};

const SEGMENT = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused.
const FORBIDDEN_DECODED = /[/\\\u0000-\u001f\u007f]/;

/**
 * Checks an engine API path from the renderer: /api/ followed by non-empty segments of URL-safe
 * characters; no query or fragment, no "." or ".." (also percent-encoded), no encoded slashes,
 * backslashes or control characters, nothing under /api/auth/ but PUT /api/auth/password. Returns
 * the reason, or null when fine.
 */
export function checkApiPath(path: string, method?: string): string | null {
  if (!path.startsWith('/api/')) return 'path must start with /api/';
  const decodedSegments: string[] = [];
  for (const segment of path.slice(1).split('/')) {
    if (segment === '') return 'path must not contain empty segments';
    if (!SEGMENT.test(segment))
      return 'path contains a character that is not allowed (query goes in "query")';
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return 'path has malformed percent-encoding';
    }
    if (decoded === '.' || decoded === '..') return 'path must not contain "." or ".." segments';
    if (FORBIDDEN_DECODED.test(decoded)) return 'path must not encode "/", "\\" or control characters';
    decodedSegments.push(decoded);
  }
  const decodedPath = `/${decodedSegments.join('/')}/`.toLowerCase();
  const excepted = ALLOWED_UNDER_DENIED.some(
    (allowed) => allowed.method === method && allowed.path === decodedPath,
  );
  if (!excepted && DENIED_PREFIXES.some((prefix) => decodedPath.startsWith(prefix))) {
    return 'path is not available to the console through IPC';
  }
  return null;
}

/**
 * Registers one handler per channel on ipcMain. Unknown channels have no handler, so Electron rejects
 * them. Returns a function that removes the handlers again.
 */
export function registerIpc(options: IpcOptions): () => void {
  const log = options.log ?? ((message: string) => console.warn(message));
  const tokens = options.tokens ?? new TokenSource(options.engine, options.now);
  const requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
  const uploadTimeoutMs = options.uploadTimeoutMs ?? 10 * 60_000;
  /** Paths the user picked in the package dialog; each allows one install. */
  const granted = new Set<string>();
  /** Folders the user picked in the data-folder dialog; each may be saved as data_dir. */
  const grantedDirs = new Set<string>();
  /** Folders the user picked in the media-folder dialog; each may be saved among media_dirs. */
  const grantedMediaDirs = new Set<string>();

  const refuse = refuser(log);
  const confirm = options.confirm ?? askInDialog;
  /**
   * Engine calls the page named, by page and name: a page cancels only its own. As many as the page
   * has calls in flight, each removed as it ends.
   */
  const inFlight = new Map<string, AbortController>();
  const inFlightKey = (event: IpcMainInvokeEvent, requestId: string) => `${event.sender.id}:${requestId}`;

  const engineUrl = (path: string, query?: Record<string, string | number | boolean>): URL => {
    const base = new URL(options.engine.url);
    const url = new URL(path, base);
    // Belt and braces: WHATWG normalisation must not have moved the request anywhere else.
    if (url.origin !== base.origin || url.pathname !== path) {
      throw new IpcRefusedError(`path ${path} does not stay on the engine's /api/`);
    }
    for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, String(value));
    return url;
  };

  /** One engine call with the token; a 401 (token revoked or expired early) is retried once. */
  const callEngine = async (
    method: string,
    url: URL,
    makeBody: () => { body?: BodyInit; contentType?: string },
    timeoutMs: number,
    cancelled?: AbortSignal,
  ): Promise<EngineResponse> => {
    for (let attempt = 0; ; attempt++) {
      const { body, contentType } = makeBody();
      const headers: Record<string, string> = {
        authorization: `Bearer ${await tokens.get()}`,
        accept: 'application/json',
      };
      if (contentType) headers['content-type'] = contentType;
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers,
          body: body ?? null,
          redirect: 'error',
          signal: cancelled
            ? AbortSignal.any([AbortSignal.timeout(timeoutMs), cancelled])
            : AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        throw new Error(`engine unreachable: ${error instanceof Error ? error.message : String(error)}`);
      }
      const text = await response.text();
      if (response.status === 401 && attempt === 0) {
        tokens.invalidate();
        continue;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new Error(`engine answered HTTP ${response.status} with a body that is not JSON`);
      }
      return { status: response.status, body: parsed };
    }
  };

  // The engine's supervision state has its own handler (./engine-ipc).
  const handlers: Record<
    Exclude<Channel, typeof Channels.engineState>,
    (payload: unknown, event: IpcMainInvokeEvent) => Promise<unknown>
  > = {
    [Channels.request]: async (payload, event) => {
      const request = payload as EngineRequestPayload;
      const pathProblem = checkApiPath(request.path, request.method);
      if (pathProblem) return refuse(Channels.request, pathProblem);
      if (request.method === 'PUT' && routedPath(request.path) === PASSWORD_PATH) {
        // Main holds no password to send as the current one: it resets the password through the
        // engine process, once the operator said yes outside the page.
        if (!resetBody.Check(request.body))
          return refuse(Channels.request, 'a password reset takes {"password": "<8 to 256 characters>"}');
        if (!(await confirm(RESET_PASSWORD, event)))
          throw new Error('cancelled: the admin password was not changed');
        const answer = await options.engine.resetPassword(request.body.password);
        // Every admin token was revoked, main's own included.
        if (answer.status === 200) tokens.invalidate();
        return answer;
      }
      const hasBody = request.body !== undefined;
      if (hasBody && (request.method === 'GET' || request.method === 'DELETE')) {
        return refuse(Channels.request, `${request.method} takes no body`);
      }
      let json: string | undefined;
      if (hasBody) {
        try {
          json = JSON.stringify(request.body);
        } catch {
          return refuse(Channels.request, 'body is not JSON-serialisable');
        }
        const limit = maxBodyBytes(request.path);
        if (Buffer.byteLength(json ?? '') > limit) {
          return refuse(Channels.request, `body is larger than ${limit / (1024 * 1024)} MiB`);
        }
      }
      const url = engineUrl(request.path, request.query);
      const makeBody = () => (json === undefined ? {} : { body: json, contentType: 'application/json' });
      if (request.request_id === undefined)
        return callEngine(request.method, url, makeBody, requestTimeoutMs);
      const key = inFlightKey(event, request.request_id);
      if (inFlight.has(key)) return refuse(Channels.request, 'request_id is already in use');
      const cancel = new AbortController();
      inFlight.set(key, cancel);
      try {
        return await callEngine(request.method, url, makeBody, requestTimeoutMs, cancel.signal);
      } finally {
        inFlight.delete(key);
      }
    },

    [Channels.cancelRequest]: async (payload, event) => {
      inFlight.get(inFlightKey(event, (payload as CancelRequestPayload).request_id))?.abort();
      return null;
    },

    [Channels.openZapk]: async (_payload, event) => {
      const window = BrowserWindow.fromWebContents(event.sender);
      const dialogOptions: OpenDialogOptions = {
        title: 'Install application package',
        properties: ['openFile'],
        filters: [{ name: 'Application package (.zapk)', extensions: ['zapk'] }],
      };
      const result = window
        ? await dialog.showOpenDialog(window, dialogOptions)
        : await dialog.showOpenDialog(dialogOptions);
      const chosen = result.filePaths[0];
      if (result.canceled || chosen === undefined) return null;
      if (extname(chosen).toLowerCase() !== '.zapk') return refuse(Channels.openZapk, 'choose a .zapk file');
      granted.add(chosen);
      return chosen;
    },

    [Channels.installZapk]: async (payload) => {
      const { path } = payload as InstallZapkPayload;
      if (!granted.has(path))
        return refuse(Channels.installZapk, 'path was not chosen in the package dialog');
      granted.delete(path);
      let blob: Blob;
      try {
        if (!(await stat(path)).isFile()) return refuse(Channels.installZapk, 'path is not a file');
        blob = await openAsBlob(path);
      } catch (error) {
        if (error instanceof IpcRefusedError) throw error;
        throw new Error(
          `cannot read ${basename(path)}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      const url = engineUrl('/api/zapk');
      return callEngine(
        'POST',
        url,
        () => {
          const form = new FormData();
          form.append('file', blob, basename(path));
          return { body: form };
        },
        uploadTimeoutMs,
      );
    },

    [Channels.installZapkData]: async (payload) => {
      const { name, data } = payload as InstallZapkDataPayload;
      if (!(data instanceof Uint8Array)) return refuse(Channels.installZapkData, 'data must be bytes');
      if (data.byteLength === 0) return refuse(Channels.installZapkData, 'the package is empty');
      if (data.byteLength > MAX_ZAPK_BYTES)
        return refuse(Channels.installZapkData, 'the package is over 1 GiB');
      // IPC hands over a plain ArrayBuffer-backed copy, never a SharedArrayBuffer.
      const blob = new Blob([data as Uint8Array<ArrayBuffer>]);
      return callEngine(
        'POST',
        engineUrl('/api/zapk'),
        () => {
          const form = new FormData();
          form.append('file', blob, basename(name));
          return { body: form };
        },
        uploadTimeoutMs,
      );
    },

    [Channels.info]: async (): Promise<AppInfo> => ({
      version: options.version,
      engineUrl: options.engine.url,
    }),

    [Channels.getSettings]: async () => options.settings.view(),

    [Channels.saveSettings]: async (payload, event) => {
      const patch = payload as SettingsPatch;
      if (patch.data_dir !== undefined && patch.data_dir !== '') {
        if (!isAbsolute(patch.data_dir) || !grantedDirs.has(patch.data_dir)) {
          return refuse(Channels.saveSettings, 'data_dir was not chosen in the folder dialog');
        }
      }
      const current = await options.settings.view();
      if (patch.media_dirs) {
        // The page may reorder and drop listed folders; a new one only comes from the dialog.
        const listed = new Set(current.saved.media_dirs ?? current.defaultMediaDirs);
        if (patch.media_dirs.some((dir) => !listed.has(dir) && !grantedMediaDirs.has(dir)))
          return refuse(Channels.saveSettings, 'a new media folder was not chosen in the folder dialog');
      }
      if (patch.lan === true && !current.saved.lan) {
        if (!(await confirm(EXPOSE_ON_LAN, event)))
          throw new Error('cancelled: the engine stays on this computer only');
      }
      const view = await options.settings.save(patch);
      if (patch.data_dir) grantedDirs.delete(patch.data_dir);
      for (const dir of patch.media_dirs ?? []) grantedMediaDirs.delete(dir);
      return view;
    },

    [Channels.chooseDataDir]: async (_payload, event) => {
      const chosen = await chooseFolder(event, 'Data folder', ['openDirectory', 'createDirectory']);
      if (chosen !== null) grantedDirs.add(chosen);
      return chosen;
    },

    [Channels.chooseMediaDir]: async (_payload, event) => {
      const chosen = await chooseFolder(event, 'Add a media folder', ['openDirectory']);
      if (chosen === null) return null;
      const problem = mediaDirProblem(chosen);
      if (problem !== null) return refuse(Channels.chooseMediaDir, `the folder ${problem}`);
      grantedMediaDirs.add(chosen);
      return chosen;
    },

    [Channels.relaunch]: async () => {
      options.relaunch();
    },
  };

  const removals = (Object.keys(handlers) as Array<keyof typeof handlers>).map((channel) =>
    handleChecked(channel, CHANNEL_SCHEMAS[channel], options.appOrigin, refuse, handlers[channel]),
  );
  return () => {
    for (const remove of removals) remove();
  };
}
