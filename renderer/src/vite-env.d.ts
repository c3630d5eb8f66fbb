/// <reference types="vite/client" />

/** hls.js's light build has the full build's API (minus features the console does not use). */
declare module 'hls.js/light' {
  export * from 'hls.js';
  export { default } from 'hls.js';
}
