import type { Clock } from './clock';

export interface EngineOptions {
  /** Address to bind; loopback unless the operator exposes the API on the LAN. */
  host?: string;
  port?: number;
  dataDir: string;
  /** Password for the admin account created on first start; defaults to VC_ADMIN_PASSWORD. */
  adminPassword?: string;
  /** The built-in package's folder (assets/builtin); the desktop app passes where it is packaged. */
  builtinDir?: string;
  /** Folder with the built console (index.html) served at "/"; omitted = API only. */
  consoleDir?: string;
  clock?: Clock;
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'silent';
}

export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

export interface Engine {
  /** http://HOST:PORT of the running API. */
  readonly url: string;
  readonly port: number;
  /** A token for a local user without a password: how the desktop main process signs the console in. */
  issueToken(username?: string): IssuedToken;
  resetPassword(username: string, password: string): void;
  close(): Promise<void>;
}

export { startEngine } from './engine';
