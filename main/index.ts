/**
 * Electron main process: a thin shell that starts the analysis engine as a process of its own.
 *
 * - the engine runs in a utility process (engine/cli.ts, the bundle `npm run engine` runs), supervised
 *   by ./engine-supervisor: restarted with backoff when it dies, its state pushed to the console
 *   (./engine-ipc), its event feed relayed to the window (./events); main's thread never runs the engine;
 * - one instance per user (a second launch focuses the first window);
 * - the engine listens on 127.0.0.1 with an ephemeral port unless VC_PORT / the settings file fix
 *   one (./settings; the console's settings screen edits it, also LAN exposure, the data folder and
 *   the media folders file sources may come from);
 * - the console is served from app://console (built renderer) with a strict CSP, sandboxed, with
 *   context isolation; it talks to the engine only through the validated IPC of ./ipc; media it loads
 *   from the engine directly (HLS) gets the token added here, so the page never holds it;
 * - no navigation away, no new windows, no webviews, no permissions, no remote content;
 * - quitting asks the engine to stop (every task's ffmpeg with it), then SIGTERM, then SIGKILL.
 *
 * Policy lives in ./security, ./ipc and ./settings, which are unit-tested without Electron.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  app,
  BrowserWindow,
  dialog,
  nativeTheme,
  protocol,
  type Session,
  session,
  type WebContents,
} from 'electron';
import { buildCsp, engineSource, securityHeaders } from '../engine/contract/csp';
import { type EngineState, NATS_SERVER_ENV } from '../engine/contract/engine-process';
import { engineArgs } from './engine-args';
import { registerEngineStateIpc } from './engine-ipc';
import { describeExit, EngineSupervisor, type ForkEngine } from './engine-supervisor';
import { TokenSource } from './engine-token';
import { forkUtility } from './engine-utility';
import { forwardEngineEvents } from './events';
import { registerIpc, type SettingsStore } from './ipc';
import { bundledNatsServer } from './nats-server';
import {
  APP_ORIGIN,
  APP_SCHEME,
  contentTypeFor,
  isAllowedNavigation,
  isAllowedRequest,
  isEngineExport,
  isEngineMedia,
  originOf,
  resolveAppAsset,
  withEngineAuthorization,
} from './security';
import {
  applyPatch,
  type DesktopDefaults,
  type DesktopSettings,
  parseSavedSettings,
  resolveSettings,
  SETTINGS_FILE,
  serializeSettings,
  settingsView,
} from './settings';

const here = import.meta.dirname;
const rendererDir = join(here, '../renderer');
const preloadPath = join(here, '../preload/index.cjs');
const engineEntry = join(here, 'engine.js');

// The Vite dev server (electron-vite dev) is honoured only when unpackaged: an installed app never
// loads a URL taken from the environment.
const devServerUrl = app.isPackaged ? undefined : process.env.ELECTRON_RENDERER_URL;
const devOrigin = devServerUrl ? originOf(devServerUrl) : null;
const appOrigin = devOrigin ?? APP_ORIGIN;
const startUrl = devServerUrl && devOrigin ? devServerUrl : `${APP_ORIGIN}/index.html`;

// Must happen before "ready": app:// becomes a standard, secure origin ('self' in the CSP, fetch, and
// corsEnabled for the CORS-mode loads of ES module scripts; no Access-Control header is ever sent, so
// other origins still cannot read it).
protocol.registerSchemesAsPrivileged([
  {
    scheme: APP_SCHEME,
    privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true, codeCache: true },
  },
]);
app.enableSandbox();

let engine: EngineSupervisor | null = null;
/** The engine's loopback URL and origin, once it listens; they follow a restart on another port. */
let engineUrl: string | null = null;
let engineOrigin: string | null = null;
let mainWindow: BrowserWindow | null = null;
let disposeIpc: (() => void) | null = null;
let lifecycle: 'running' | 'stopping' | 'stopped' = 'running';

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The OS's Videos folder, one of the default media folders; null where the OS names none. */
function videosFolder(): string | null {
  try {
    return app.getPath('videos');
  } catch {
    return null;
  }
}

/** The settings file beside (never inside) the data folder it names; the settings screen edits it. */
function settingsStore(
  file: string,
  running: () => DesktopSettings & { url: string },
  defaults: DesktopDefaults,
): SettingsStore {
  const load = async () => parseSavedSettings(await readText(file)).saved;
  const view = async () => settingsView(await load(), running(), defaults, process.env);
  return {
    view,
    async save(patch) {
      const next = applyPatch(await load(), patch);
      if ('error' in next) throw new Error(next.error);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, serializeSettings(next));
      return view();
    },
  };
}

/** The console's CSP for the engine's current URL. */
function currentCsp(): string {
  return buildCsp({ engineUrl: engineUrl ?? undefined, dev: devOrigin !== null });
}

/**
 * Session-wide policy: deny permissions, cancel remote requests, put the CSP on every document, and
 * authorise the page's own requests to the engine (HLS media) with main's token. Each request reads
 * the engine's origin as it is now (a restarted engine may listen on another port).
 */
function hardenSession(ses: Session, tokens: TokenSource): void {
  ses.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);

  const fixedOrigins = [APP_ORIGIN];
  if (devOrigin) fixedOrigins.push(devOrigin, devOrigin.replace(/^http/, 'ws'));
  ses.webRequest.onBeforeRequest((details, callback) => {
    const allowedOrigins = engineOrigin ? [...fixedOrigins, engineOrigin] : fixedOrigins;
    const allowed = isAllowedRequest(details.url, allowedOrigins);
    if (!allowed) console.warn(`blocked request to ${details.url}`);
    callback({ cancel: !allowed });
  });

  ses.webRequest.onBeforeSendHeaders((details, callback) => {
    const origin = engineOrigin;
    if (!origin || !isEngineMedia(details, origin))
      return callback({ requestHeaders: details.requestHeaders });
    tokens.get().then(
      (token) =>
        callback({
          requestHeaders: withEngineAuthorization(details, details.requestHeaders, origin, () => token),
        }),
      // No engine to ask (restarting): the request goes without a token and is answered 401.
      () => callback({ requestHeaders: details.requestHeaders }),
    );
  });

  // Header events fire for http(s) documents (the dev server); app:// pages get the same headers from
  // the protocol handler below, and index.html carries a meta CSP as a third layer.
  ses.webRequest.onHeadersReceived((details, callback) => {
    // The token was revoked (a password change): the next media request gets a fresh one.
    if (details.statusCode === 401 && originOf(details.url) === engineOrigin) tokens.invalidate();
    if (details.resourceType !== 'mainFrame' && details.resourceType !== 'subFrame') return callback({});
    const headers = securityHeaders(currentCsp());
    const responseHeaders: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(details.responseHeaders ?? {})) {
      if (!Object.keys(headers).some((own) => own.toLowerCase() === name.toLowerCase())) {
        responseHeaders[name] = value;
      }
    }
    callback({ responseHeaders: { ...responseHeaders, ...headers } });
  });
}

/** Serves the built console from out/renderer at app://console/, read-only, with the security headers. */
function serveConsole(): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const headers = securityHeaders(currentCsp());
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return new Response(null, { status: 405, headers });
    }
    const file = resolveAppAsset(rendererDir, request.url, APP_ORIGIN);
    if (file) {
      try {
        const data = await readFile(file);
        return new Response(new Uint8Array(data), {
          status: 200,
          headers: { ...headers, 'Content-Type': contentTypeFor(file) },
        });
      } catch {
        // Missing file: 404 below.
      }
    }
    return new Response('Not found', { status: 404, headers: { ...headers, 'Content-Type': 'text/plain' } });
  });
}

/** Per-webContents policy: no navigation off the app, no popups, no webviews. */
function hardenContents(contents: WebContents): void {
  const guard = (event: { url: string; preventDefault(): void }) => {
    // The page cannot download a file of another origin itself; main does, with its token (hardenSession).
    if (engineOrigin && isEngineExport(event.url, engineOrigin)) {
      event.preventDefault();
      contents.downloadURL(event.url);
    } else if (!isAllowedNavigation(event.url, appOrigin)) {
      console.warn(`blocked navigation to ${event.url}`);
      event.preventDefault();
    }
  };
  contents.on('will-navigate', guard);
  contents.on('will-frame-navigate', guard);
  contents.on('will-redirect', guard);
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

function createWindow(): void {
  const window = new BrowserWindow({
    width: 1280,
    height: 820,
    minWidth: 800,
    minHeight: 560,
    show: false,
    title: 'Vision Console',
    backgroundColor: nativeTheme.shouldUseDarkColors ? '#15171c' : '#ffffff',
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
    },
  });
  mainWindow = window;
  window.once('ready-to-show', () => window.show());
  window.on('closed', () => {
    if (mainWindow === window) mainWindow = null;
  });
  window.loadURL(startUrl).catch((error: unknown) => {
    console.error(`cannot load the console: ${error instanceof Error ? error.message : String(error)}`);
  });
}

function focusWindow(): void {
  if (!mainWindow) return;
  if (mainWindow.isMinimized()) mainWindow.restore();
  mainWindow.show();
  mainWindow.focus();
}

/** Follows the engine: its URL after a (re)start, tokens of the engine that was, the operator told of a failure. */
function followEngine(state: EngineState, tokens: TokenSource): void {
  // A first start that fails is answered by start() itself.
  if (state.state === 'failed' && engineUrl !== null) {
    dialog.showErrorBox(
      'Vision Console',
      `The analysis engine stopped and was not restarted.\n\n${describeExit(state.last_exit)}`,
    );
    return;
  }
  if (state.state !== 'running') return;
  // On 0.0.0.0 the engine reports that address; the window reaches it over loopback.
  const url = `http://127.0.0.1:${new URL(state.url).port}`;
  const moved = engineUrl !== null && engineUrl !== url;
  engineUrl = url;
  engineOrigin = engineSource(url);
  tokens.invalidate();
  // The page's CSP and the engine URL it holds came with the document: a new port needs a new one.
  if (moved && mainWindow && !mainWindow.isDestroyed()) mainWindow.webContents.reload();
}

async function start(): Promise<void> {
  const userData = app.getPath('userData');
  const settingsFile = join(userData, SETTINGS_FILE);
  const defaults: DesktopDefaults = { dataDir: join(userData, 'data'), videosDir: videosFolder() };
  const { saved, warnings: fileWarnings } = parseSavedSettings(await readText(settingsFile));
  const { settings, warnings } = resolveSettings(process.env, saved, defaults);
  for (const warning of [...fileWarnings, ...warnings]) console.warn(warning);

  // The NATS server the build ships, for the engine to report (an operator's own VC_NATS_SERVER wins).
  const natsServer = bundledNatsServer({
    isPackaged: app.isPackaged,
    resourcesPath: process.resourcesPath,
    appPath: app.getAppPath(),
    platform: process.platform,
    arch: process.arch,
  });
  const engineEnv = { ...process.env };
  if (natsServer && !engineEnv[NATS_SERVER_ENV]) engineEnv[NATS_SERVER_ENV] = natsServer;
  const fork: ForkEngine = ({ port }) =>
    forkUtility(
      engineEntry,
      engineArgs({
        settings,
        port,
        appOrigin,
        // Exposed on the LAN, the engine also serves the console as a web page there.
        consoleDir: saved.lan ? rendererDir : null,
        // electron-builder copies assets/builtin into resources/ (extraResources); in development it is the repo's.
        builtinDir: app.isPackaged
          ? join(process.resourcesPath, 'assets', 'builtin')
          : join(app.getAppPath(), 'assets', 'builtin'),
      }),
      engineEnv,
    );
  const supervisor = new EngineSupervisor({ fork });
  engine = supervisor;
  const tokens = new TokenSource(supervisor);
  const stopFollowing = supervisor.onState((state) => followEngine(state, tokens));
  try {
    await supervisor.start();
  } catch (error) {
    stopFollowing();
    if (lifecycle !== 'running') return; // Quit was requested while the engine was starting.
    const message = error instanceof Error ? error.message : String(error);
    dialog.showErrorBox('Vision Console', `The analysis engine could not start.\n\n${message}`);
    app.exit(1);
    return;
  }
  if (lifecycle !== 'running') return;

  hardenSession(session.defaultSession, tokens);
  serveConsole();
  const handle = {
    get url() {
      return engineUrl ?? '';
    },
    issueToken: () => supervisor.issueToken(),
    resetPassword: (password: string) => supervisor.resetPassword(password),
  };
  const stopIpc = registerIpc({
    appOrigin,
    engine: handle,
    tokens,
    version: app.getVersion(),
    settings: settingsStore(
      settingsFile,
      () => ({ ...settings, port: Number(new URL(handle.url).port), url: handle.url }),
      defaults,
    ),
    relaunch: () => {
      app.relaunch();
      app.quit();
    },
  });
  const stopState = registerEngineStateIpc({ appOrigin, engine: supervisor, window: () => mainWindow });
  const stopFeed = forwardEngineEvents(supervisor, () => mainWindow);
  disposeIpc = () => {
    stopFeed();
    stopState();
    stopIpc();
    stopFollowing();
  };
  createWindow();
}

async function stopEngine(): Promise<void> {
  disposeIpc?.();
  disposeIpc = null;
  const running = engine;
  engine = null;
  if (!running) return;
  try {
    await running.stop();
  } catch (error) {
    console.error(`stopping the engine failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

if (!app.requestSingleInstanceLock()) {
  // Another instance owns the data folder and the engine: it gets focused (second-instance), we leave.
  app.quit();
} else {
  app.on('second-instance', focusWindow);
  app.on('web-contents-created', (_event, contents) => hardenContents(contents));

  app.on('before-quit', (event) => {
    if (lifecycle === 'stopped') return;
    event.preventDefault();
    if (lifecycle === 'stopping') return;
    lifecycle = 'stopping';
    void stopEngine().finally(() => {
      lifecycle = 'stopped';
      app.quit();
    });
  });

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  app.on('activate', () => {
    if (!mainWindow && engine) createWindow();
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => app.quit());

  app
    .whenReady()
    .then(start)
    .catch(async (error: unknown) => {
      console.error(error);
      await stopEngine();
      app.exit(1);
    });
}
