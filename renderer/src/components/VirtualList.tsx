import { type ReactNode, useRef, useState } from 'react';
import { visibleRange } from '../feed/model';
import { useElementSize } from '../hooks/useElementSize';

interface VirtualListProps<T> {
  items: readonly T[];
  rowHeight: number;
  keyOf: (item: T) => string;
  renderRow: (item: T, index: number) => ReactNode;
  label: string;
}

/**
 * A list of fixed-height rows that renders only those in view: the event feed holds thousands of
 * rows with thumbnails. Rows are list items positioned in one tall list, so the list semantics hold.
 */
export function VirtualList<T>({ items, rowHeight, keyOf, renderRow, label }: VirtualListProps<T>) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const { height } = useElementSize(ref);
  const { first, last } = visibleRange(scrollTop, height, rowHeight, items.length);
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
