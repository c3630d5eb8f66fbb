/**
 * What the console and the desktop's main process know of the engine's media folders (the folders
 * file sources may come from, engine/media/media-folders.ts): plain constants, no Node.
 */

/** The folder under the data dir that file sources come from when the operator names none. */
export const DEFAULT_MEDIA_DIR = 'media';

/**
 * The reason a file source is refused, one answer whether the file is outside every media folder or
 * not there at all: the console recognises it to point the operator to the setting.
 */
export const SOURCE_REFUSED_REASON = "no video file at this path in the engine's media folders";
