/**
 * Session and UI state (where the operator is lives in the address, routes.ts). In web mode the token lives in memory and sessionStorage (gone with the tab; a new tab gets it from an open one, session-share.ts);
 * in desktop mode there is no token at all in the renderer. The language and theme choices are kept
 * in localStorage.
 */
import { create } from 'zustand';
import { isLanguage, type Language, pickLanguage, type Translate, translate } from './i18n';
import type { Transport } from './transport';

export type Mode = 'ipc' | 'http';
export type Theme = 'system' | 'light' | 'dark';
export const THEMES: readonly Theme[] = ['system', 'light', 'dark'];

export interface StoredSession {
  token: string;
  username: string;
  expiresAt: number;
  /** Signed in with the first start's random password: the console asks to replace it. */
  initialPassword?: boolean;
}

/** Why the sign-in screen shows: the token expired, the password changed, or a moved session was refused. */
export type SignOutReason = 'expired' | 'passwordChanged' | 'followed';

export interface SessionState {
  mode: Mode;
  session: StoredSession | null;
  /** Shown on the sign-in screen, e.g. after the token expired or the password changed. */
  notice: SignOutReason | null;
  language: Language;
  theme: Theme;
  signIn(token: string, expiresInSeconds: number, username: string, initialPassword?: boolean): void;
  signOut(reason?: SignOutReason): void;
  /** Takes a session another tab of this console handed over (session-share.ts); announces nothing. */
  adopt(session: StoredSession): void;
  /** Ends this tab's session because another tab signed out; announces nothing. */
  endShared(reason?: SignOutReason): void;
  setLanguage(language: Language): void;
  setTheme(theme: Theme): void;
}

const SESSION_KEY = 'vc.session';
const LANGUAGE_KEY = 'vc.language';
const THEME_KEY = 'vc.theme';

function storage(kind: 'sessionStorage' | 'localStorage'): Storage | null {
  try {
    return typeof window === 'undefined' ? null : window[kind];
  } catch {
    return null;
  }
}

function loadSession(): StoredSession | null {
  try {
    const raw = storage('sessionStorage')?.getItem(SESSION_KEY);
    if (!raw) return null;
    const parsed = JSON.parse(raw) as Partial<StoredSession>;
    if (typeof parsed.token !== 'string' || typeof parsed.username !== 'string') return null;
    return validSession(parsed);
  } catch {
    return null;
  }
}

/** A well-formed session that has not expired, or null (from storage or from another tab). */
export function validSession(value: unknown): StoredSession | null {
  if (typeof value !== 'object' || value === null) return null;
  const parsed = value as Partial<StoredSession>;
  if (typeof parsed.token !== 'string' || typeof parsed.username !== 'string') return null;
  if (typeof parsed.expiresAt !== 'number' || parsed.expiresAt <= Date.now()) return null;
  return {
    token: parsed.token,
    username: parsed.username,
    expiresAt: parsed.expiresAt,
    ...(parsed.initialPassword === true && { initialPassword: true }),
  };
}

/** What the other tabs hear of this tab's sign-in and sign-out (session-share.ts wires it). */
export const sessionEvents: {
  signedIn: (session: StoredSession) => void;
  signedOut: (reason?: SignOutReason) => void;
} = { signedIn: () => {}, signedOut: () => {} };

function initialLanguage(): Language {
  const saved = storage('localStorage')?.getItem(LANGUAGE_KEY);
  if (isLanguage(saved)) return saved;
  return pickLanguage(typeof navigator === 'undefined' ? [] : navigator.languages);
}

function initialTheme(): Theme {
  const saved = storage('localStorage')?.getItem(THEME_KEY);
  return THEMES.find((theme) => theme === saved) ?? 'system';
}

const keep = (session: StoredSession | null) => {
  if (session) storage('sessionStorage')?.setItem(SESSION_KEY, JSON.stringify(session));
  else storage('sessionStorage')?.removeItem(SESSION_KEY);
};

export const useSession = create<SessionState>()((set) => ({
  mode: 'http',
  session: loadSession(),
  notice: null,
  language: initialLanguage(),
  theme: initialTheme(),
  signIn(token, expiresInSeconds, username, initialPassword) {
    const session: StoredSession = {
      token,
      username,
      expiresAt: Date.now() + expiresInSeconds * 1000,
      ...(initialPassword && { initialPassword: true }),
    };
    keep(session);
    set({ session, notice: null });
    sessionEvents.signedIn(session);
  },
  signOut(reason) {
    keep(null);
    set({ session: null, notice: reason ?? null });
    sessionEvents.signedOut(reason);
  },
  adopt(session) {
    keep(session);
    set({ session, notice: null });
  },
  endShared(reason) {
    keep(null);
    set({ session: null, notice: reason ?? null });
  },
  setLanguage(language) {
    storage('localStorage')?.setItem(LANGUAGE_KEY, language);
    set({ language });
  },
  setTheme(theme) {
    storage('localStorage')?.setItem(THEME_KEY, theme);
    set({ theme });
  },
}));

/**
 * Sign out from the header: the engine revokes the token first (so a copy of it stops answering), then
 * local state goes; an engine that cannot be reached does not keep the operator signed in.
 */
export async function signOutEverywhere(transport: Transport): Promise<void> {
  try {
    await transport.request('POST', '/api/auth/logout');
  } finally {
    useSession.getState().signOut();
  }
}

/** The current token for the http transport (null when signed out or expired). */
export function currentToken(): string | null {
  const { session } = useSession.getState();
  return session && session.expiresAt > Date.now() ? session.token : null;
}

/** `t(key, params)` bound to the current language; re-renders when the language changes. */
export function useT(): Translate {
  const language = useSession((state) => state.language);
  return (key, params) => translate(language, key, params);
}
