import { type ReactNode, useEffect, useRef, useState } from 'react';
import { visibleRange } from '../feed/model';
import { useElementSize } from '../hooks/useElementSize';

interface VirtualListProps<T> {
  items: readonly T[];
  rowHeight: number;
  keyOf: (item: T) => string;
  renderRow: (item: T, index: number) => ReactNode;
  label: string;
  /** A row to keep in view (the keyboard's selection). */
  focusIndex?: number;
  /** Called when the rows in view come near the end (to load more). */
  onNearEnd?: () => void;
}

/** Rows from the end at which onNearEnd is called. */
const NEAR_END_ROWS = 10;

/**
 * A list of fixed-height rows that renders only those in view: feeds hold thousands of rows with
 * thumbnails. Rows are list items positioned in one tall list, so the list semantics hold.
 */
export function VirtualList<T>({
  items,
  rowHeight,
  keyOf,
  renderRow,
  label,
  focusIndex,
  onNearEnd,
}: VirtualListProps<T>) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const { height } = useElementSize(ref);
  const { first, last } = visibleRange(scrollTop, height, rowHeight, items.length);

  useEffect(() => {
    const element = ref.current;
    if (!element || focusIndex === undefined || focusIndex < 0) return;
    const top = focusIndex * rowHeight;
    if (top < element.scrollTop) element.scrollTop = top;
    else if (top + rowHeight > element.scrollTop + element.clientHeight)
      element.scrollTop = top + rowHeight - element.clientHeight;
  }, [focusIndex, rowHeight]);

  useEffect(() => {
    if (onNearEnd && items.length > 0 && last >= items.length - NEAR_END_ROWS) onNearEnd();
  }, [last, items.length, onNearEnd]);

  const rows: ReactNode[] = [];
  for (let index = first; index <= last; index++) {
    const item = items[index] as T;
    rows.push(
      <li
        key={keyOf(item)}
        className="virtual-row"
        style={{ top: index * rowHeight, height: rowHeight }}
        aria-setsize={items.length}
        aria-posinset={index + 1}
      >
        {renderRow(item, index)}
      </li>,
    );
  }
  return (
    <div ref={ref} className="virtual-list" onScroll={(event) => setScrollTop(event.currentTarget.scrollTop)}>
      <ul className="virtual-items" aria-label={label} style={{ height: items.length * rowHeight }}>
        {rows}
      </ul>
    </div>
  );
}
