import 'konva/lib/shapes/Label';
import 'konva/lib/shapes/Line';
import 'konva/lib/shapes/Text';
import { Label, Line, Tag, Text } from 'react-konva/lib/ReactKonvaCore';
import { rgba } from '../colors';
import type { Shape, SourcePoint } from '../geometry/editor';
import { toDisplay, type View } from '../geometry/viewport';

const TAG_FONT = 13;
const TAG_PADDING = 3;

interface AreaFigureProps {
  shape: Shape;
  color: string;
  active: boolean;
  measure: string | undefined;
  flat: (points: readonly SourcePoint[]) => number[];
  view: View;
}

/**
 * A zone dashed in its app's colour with its name at its top left, a mask shaded dark with a dashed
 * grey border (as the OSD draws them), the calibration's numbered marks, the measure segment.
 */
export function AreaFigure({ shape, color, active, measure, flat, view }: AreaFigureProps) {
  const role = shape.area?.role;
  const points = flat(shape.points);
  const opacity = active ? 1 : 0.75;
  const topLeft = toDisplay(
    {
      x: Math.min(...shape.points.map((p) => p[0])),
      y: Math.min(...shape.points.map((p) => p[1])),
    },
    view,
  );
  if (role === 'zone' || role === 'mask') {
    const zone = role === 'zone';
    return (
      <>
        <Line
          points={points}
          closed={shape.closed}
          fill={shape.closed ? (zone ? rgba(color, 0.08) : 'rgba(0, 0, 0, 0.45)') : undefined}
          stroke={zone ? color : '#a0a0a0'}
          strokeWidth={2}
          dash={[10, 6]}
          opacity={opacity}
          listening={false}
        />
        {zone && (
          // Inside the top-left corner: the AI video's own tag (the OSD's) sits just above it.
          <Label x={topLeft.x + 2} y={topLeft.y + 2} opacity={active ? 0.95 : 0.8} listening={false}>
            <Tag fill={color} />
            <Text
              text={shape.area?.name ?? ''}
              fontSize={TAG_FONT}
              fontStyle="bold"
              padding={TAG_PADDING}
              fill="#111111"
            />
          </Label>
        )}
      </>
    );
  }
  if (role === 'calibration') {
    return (
      <>
        <Line
          points={points}
          closed={shape.closed}
          stroke="#00c8ff"
          strokeWidth={1.5}
          dash={[4, 4]}
          opacity={opacity}
          listening={false}
        />
        {shape.points.map(([x, y], index) => {
          const at = toDisplay({ x, y }, view);
          return (
            <Text
              // biome-ignore lint/suspicious/noArrayIndexKey: a mark is its index.
              key={index}
              x={at.x + 9}
              y={at.y - 18}
              text={String(index + 1)}
              fontSize={14}
              fontStyle="bold"
              fill="#00c8ff"
              shadowColor="#000000"
              shadowBlur={3}
              listening={false}
            />
          );
        })}
      </>
    );
  }
  const [a, b] = shape.points;
  const middle = a && b ? toDisplay({ x: (a[0] + b[0]) / 2, y: (a[1] + b[1]) / 2 }, view) : null;
  return (
    <>
      <Line
        points={points}
        stroke="#ffffff"
        strokeWidth={2}
        shadowColor="#000000"
        shadowBlur={3}
        listening={false}
      />
      {middle && measure && (
        <Text
          x={middle.x + 8}
          y={middle.y + 8}
          text={measure}
          fontSize={14}
          fontStyle="bold"
          fill="#ffffff"
          shadowColor="#000000"
          shadowBlur={4}
          listening={false}
        />
      )}
    </>
  );
}
