/**
 * What a password must be to be set, wherever it is set (the API, the desktop console's reset, the
 * first start's VC_ADMIN_PASSWORD): long enough, and none of the guesses an attacker tries first.
 * docs/security.md states the same rules.
 */
export const PASSWORD_POLICY = {
  minLength: 8,
  maxLength: 256,
  /** "00000000", "12121212", "abcabcab": too few different characters to be more than a pattern. */
  minDistinctCharacters: 4,
} as const;

/**
 * The first guesses of every password list (lower case), and the words that lists pair with digits
 * or symbols ("password1", "dragon2024!"). Short on purpose: a floor against the obvious, not a
 * strength meter.
 */
const COMMON = new Set([
  ...['password', 'passw0rd', 'p@ssw0rd', 'p@ssword', 'pass', 'pwd', 'secret', 'changeme', 'default'],
  ...['admin', 'administrator', 'root', 'toor', 'guest', 'user', 'login', 'test', 'tester', 'demo'],
  ...['welcome', 'letmein', 'iloveyou', 'trustno1', 'whatever', 'qwerty', 'qwertz', 'azerty', 'qwer'],
  ...['qwertyuiop', 'qwertyui', 'asdfghjkl', 'asdfghjk', 'asdf', 'zxcvbnm', 'zxcvbnm,', 'qazwsx'],
  ...['1qaz2wsx', 'zaq12wsx', '1q2w3e4r', '1q2w3e4r5t', 'q1w2e3r4', 'abc', 'abcd', 'abc123', 'aa'],
  ...['12341234', '123123123', '123321', '123qwe', 'qwe123', '147258369', '159753', '987654321'],
  ...['monkey', 'dragon', 'football', 'baseball', 'soccer', 'hockey', 'sunshine', 'princess', 'master'],
  ...['shadow', 'superman', 'batman', 'starwars', 'pokemon', 'michael', 'jennifer', 'jessica', 'ashley'],
  ...['charlie', 'daniel', 'thomas', 'jordan', 'hunter', 'ranger', 'buster', 'killer', 'freedom'],
  ...['mustang', 'access', 'computer', 'internet', 'samsung', 'pepper', 'summer', 'winter', 'love'],
  ...['lovely', 'hello', 'flower', 'cookie', 'chocolate', 'blink182', 'liverpool', 'chelsea', 'arsenal'],
  ...['vision', 'visionconsole', 'console', 'camera', 'security', 'system', 'engine', 'service'],
]);

/** Digits and symbols people add to a common word to pass a rule. */
const DECORATION = /[\d\W_]+$/u;

/**
 * Why `password` may not be the password of `username`, or null when it may. `current` is the
 * password it replaces, when known.
 */
export function passwordProblem(password: string, username: string, current?: string): string | null {
  const { minLength, maxLength, minDistinctCharacters } = PASSWORD_POLICY;
  const characters = [...password];
  if (characters.length < minLength) return `must have at least ${minLength} characters`;
  if (characters.length > maxLength) return `must have at most ${maxLength} characters`;
  if (new Set(characters).size < minDistinctCharacters)
    return `must have at least ${minDistinctCharacters} different characters`;
  if (isRun(characters)) return 'must not be a run of consecutive characters such as 12345678 or abcdefgh';
  const lower = password.toLowerCase();
  const word = lower.replace(DECORATION, '');
  const name = username.toLowerCase();
  if (name !== '' && (lower === name || word === name || lower === [...name].reverse().join('')))
    return 'must not be the username';
  if (COMMON.has(lower) || COMMON.has(word)) return 'is one of the most common passwords';
  if (current !== undefined && password === current) return 'must differ from the current password';
  return null;
}

/** Each character one after (or one before) the one before it: "12345678", "hgfedcba". */
function isRun(characters: readonly string[]): boolean {
  const codes = characters.map((character) => character.codePointAt(0) as number);
  const step = (codes[1] as number) - (codes[0] as number);
  return (
    (step === 1 || step === -1) &&
    codes.every((code, i) => i === 0 || code - (codes[i - 1] as number) === step)
  );
}
