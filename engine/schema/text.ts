import { type StringOptions, Type } from '@sinclair/typebox';

/**
 * Characters no name shown to operators may hold: C0 and C1 controls and DEL (a NUL cuts a name
 * short in C code and logs, a newline forges a log line), and the bidirectional controls (marks,
 * embeddings, overrides, isolates) that reorder what is shown: with U+202E, "gate‮gpj.exe" reads
 * "gateexe.jpg".
 */
const UNSAFE = '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';

/** Text without those characters (blank allowed). */
export const SAFE_TEXT_PATTERN = `^[^${UNSAFE}]*$`;
/** A name: without those characters, and not blank. */
export const NAME_PATTERN = `^[^${UNSAFE}]*[^${UNSAFE}\\s][^${UNSAFE}]*$`;

/** What a refused pattern means, for the error message (schema/ajv.ts). */
export const TEXT_PATTERN_MESSAGES: Readonly<Record<string, string>> = {
  [SAFE_TEXT_PATTERN]: 'must not contain control or bidirectional-override characters',
  [NAME_PATTERN]: 'must not be blank or contain control or bidirectional-override characters',
};

const unsafe = new RegExp(`[${UNSAFE}]`, 'u');

/** Whether text holds a character no name may hold (for names read from files, not JSON). */
export const hasUnsafeCharacter = (text: string): boolean => unsafe.test(text);

/** A name operators see: not blank, no control or bidirectional-override character. */
export const Name = (options: StringOptions = {}) => Type.String({ ...options, pattern: NAME_PATTERN });

/** Free text operators see (may be blank): no control or bidirectional-override character. */
export const SafeText = (options: StringOptions = {}) =>
  Type.String({ ...options, pattern: SAFE_TEXT_PATTERN });
