import type { VisionConsoleApi } from '../../preload/api';

declare global {
  interface Window {
    /** Present only inside the desktop app (exposed by the preload); absent in a browser. */
    visionConsole?: VisionConsoleApi;
  }
}
