/**
 * The IPC channels between the console page and the main process: the only ones that exist.
 * The preload exposes exactly these, and main registers a validated handler for each.
 */
export const Channels = {
  /** {method, path, query?, body?, request_id?} -> {status, body}: an engine API call made by main with its token. */
  request: 'engine:request',
  /**
   * {request_id} -> null: main aborts its engine call for that request (the page stopped waiting), so
   * the engine sees the client go and drops the work (a source being opened, a task being started).
   */
  cancelRequest: 'engine:cancelRequest',
  /** null -> chosen .zapk path or null: main's open-file dialog; the path is granted for one install. */
  openZapk: 'dialog:openZapk',
  /** {path} -> {status, body}: main uploads a granted .zapk to POST /api/zapk. */
  installZapk: 'engine:installZapk',
  /** {name, data} -> {status, body}: main uploads dropped .zapk bytes to POST /api/zapk. */
  installZapkData: 'engine:installZapkData',
  /** null -> {version, engineUrl}. */
  info: 'app:info',
  /** null -> the settings view (saved and running). */
  getSettings: 'settings:get',
  /** {port?, lan?, data_dir?, media_dirs?} -> the settings view; applies at the next start. */
  saveSettings: 'settings:save',
  /** null -> chosen folder or null: main's folder dialog; the folder is granted for settings:save. */
  chooseDataDir: 'dialog:chooseDataDir',
  /** null -> chosen folder or null: main's folder dialog; granted as a media folder for settings:save. */
  chooseMediaDir: 'dialog:chooseMediaDir',
  /** null -> nothing: quits (stopping the engine) and starts again. */
  relaunch: 'app:relaunch',
  /** null -> the engine process's supervision state (starting, running, restarting, failed). */
  engineState: 'engine:state',
} as const;

export type Channel = (typeof Channels)[keyof typeof Channels];

/** Messages main pushes to the console page; the page never sends on them. */
export const PushChannels = {
  /** Every stored result event (a callback body), as the web console's SSE feed carries it. */
  event: 'engine:event',
  /** Every change of an event's delivery state (a delivery record), as SSE `delivery` carries it. */
  delivery: 'engine:delivery',
  /** Every change of the engine process's supervision state. */
  engineState: 'engine:stateChanged',
} as const;
