/**
 * The IPC channels between the console page and the main process: the only ones that exist.
 * The preload exposes exactly these, and main registers a validated handler for each.
 */
export const Channels = {
  /** {method, path, query?, body?} -> {status, body}: an engine API call made by main with its token. */
  request: 'engine:request',
  /** null -> chosen .zapk path or null: main's open-file dialog; the path is granted for one install. */
  openZapk: 'dialog:openZapk',
  /** {path} -> {status, body}: main uploads a granted .zapk to POST /api/zapk. */
  installZapk: 'engine:installZapk',
  /** null -> {version, engineUrl}. */
  info: 'app:info',
} as const;

export type Channel = (typeof Channels)[keyof typeof Channels];

/** Messages main pushes to the console page; the page never sends on them. */
export const PushChannels = {
  /** Every stored result event (a callback body), as the web console's SSE feed carries it. */
  event: 'engine:event',
} as const;
