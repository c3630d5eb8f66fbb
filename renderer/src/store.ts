/**
 * Session and UI state. In web mode the token lives in memory and sessionStorage (gone with the tab);
 * in desktop mode there is no token at all in the renderer. The language choice is kept in
 * localStorage.
 */
import { create } from 'zustand';
import { isLanguage, type Language, pickLanguage, type Translate, translate } from './i18n';

export type Screen = 'packages' | 'tasks';
export type Mode = 'ipc' | 'http';

interface StoredSession {
  token: string;
  username: string;
  expiresAt: number;
}

export interface SessionState {
  mode: Mode;
  session: StoredSession | null;
  /** Shown on the sign-in screen, e.g. after the token expired. */
  notice: 'expired' | null;
  screen: Screen;
  language: Language;
  signIn(token: string, expiresInSeconds: number, username: string): void;
  signOut(reason?: 'expired'): void;
  setScreen(screen: Screen): void;
  setLanguage(language: Language): void;
}

const SESSION_KEY = 'vc.session';
const LANGUAGE_KEY = 'vc.language';

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
    if (typeof parsed.expiresAt !== 'number' || parsed.expiresAt <= Date.now()) return null;
    return { token: parsed.token, username: parsed.username, expiresAt: parsed.expiresAt };
  } catch {
    return null;
  }
}

function initialLanguage(): Language {
  const saved = storage('localStorage')?.getItem(LANGUAGE_KEY);
  if (isLanguage(saved)) return saved;
  return pickLanguage(typeof navigator === 'undefined' ? [] : navigator.languages);
}

export const useSession = create<SessionState>()((set) => ({
  mode: 'http',
  session: loadSession(),
  notice: null,
  screen: 'packages',
  language: initialLanguage(),
  signIn(token, expiresInSeconds, username) {
    const session = { token, username, expiresAt: Date.now() + expiresInSeconds * 1000 };
    storage('sessionStorage')?.setItem(SESSION_KEY, JSON.stringify(session));
    set({ session, notice: null });
  },
  signOut(reason) {
    storage('sessionStorage')?.removeItem(SESSION_KEY);
    set({ session: null, notice: reason ?? null });
  },
  setScreen(screen) {
    set({ screen });
  },
  setLanguage(language) {
    storage('localStorage')?.setItem(LANGUAGE_KEY, language);
    set({ language });
  },
}));

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
