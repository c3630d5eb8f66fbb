/** Keyboard review of the sample grid: moving the selection and judging with single keys. */
import type { Verdict } from '../../../engine/contract';

/** The keys that judge the selected sample: R right, W wrong, N clears the verdict. */
const VERDICT_KEYS: Record<string, Verdict> = { r: 'right', w: 'wrong', n: 'none' };

export function verdictOfKey(key: string): Verdict | null {
  return VERDICT_KEYS[key.toLowerCase()] ?? null;
}

/**
 * The index the selection moves to on a key in a grid of `count` cells laid out `columns` wide,
 * or null when the key does not move it. Up and down keep the column; down from a row above a
 * shorter last row lands on the last cell.
 */
export function moveSelection(key: string, index: number, count: number, columns: number): number | null {
  if (count === 0) return null;
  const last = count - 1;
  const width = Math.max(1, Math.floor(columns));
  const current = Math.min(Math.max(index, 0), last);
  switch (key) {
    case 'ArrowLeft':
      return Math.max(0, current - 1);
    case 'ArrowRight':
      return Math.min(last, current + 1);
    case 'ArrowUp':
      return current >= width ? current - width : current;
    case 'ArrowDown':
      return Math.floor(current / width) < Math.floor(last / width)
        ? Math.min(last, current + width)
        : current;
    case 'Home':
      return 0;
    case 'End':
      return last;
    default:
      return null;
  }
}

/** Columns of a CSS grid from its computed grid-template-columns ("180px 180px 180px"). */
export function columnsOf(gridTemplateColumns: string): number {
  const tracks = gridTemplateColumns
    .trim()
    .split(/\s+/)
    .filter((track) => track !== '' && track !== 'none');
  return Math.max(1, tracks.length);
}

/**
 * The sample to select once the list changed (a page came in, a judged sample left a filtered
 * view): the same one while it is listed, else the one now at its former place.
 */
export function keepSelection(
  selectedId: number | null,
  formerIndex: number,
  ids: readonly number[],
): number | null {
  if (ids.length === 0) return null;
  if (selectedId !== null && ids.includes(selectedId)) return selectedId;
  return ids[Math.min(Math.max(formerIndex, 0), ids.length - 1)] ?? null;
}
