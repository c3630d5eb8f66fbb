// Over 400 lines on purpose: one drawing surface (letterbox, zoom, pan, handles, keyboard) whose gestures share state.
/**
 * The drawing surface of the live view and the start wizard: the frame (a video, a snapshot) shown
 * letterboxed, zoomed and panned, with a Konva layer on top where the operator draws one polygon per
 * application. Points are kept in source-frame pixels (../geometry/editor); ../geometry/viewport maps
 * them to the canvas and back, whatever the window's size.
 *
 * Mouse: click adds a point (on the first point: closes; on the letterbox: on the frame's edge), drag moves a vertex, a click on an edge of
 * a closed region inserts one, double-click deletes one, right-click undoes, the wheel zooms, middle
 * button or Space + drag pans, Shift turns snapping off. Keys: see SHORTCUTS.
 */
import type { Static } from '@sinclair/typebox';
import type Konva from 'konva';
import 'konva/lib/shapes/Circle';
import 'konva/lib/shapes/Line';
import 'konva/lib/shapes/Rect';
import 'konva/lib/shapes/Text';
import { Fragment, type KeyboardEvent, type ReactNode, useEffect, useRef, useState } from 'react';
import { Circle, Layer, Line, Rect, Stage, Text } from 'react-konva/lib/ReactKonvaCore';
import type { LengthReference } from '../../../engine/contract';
import { rgba } from '../colors';
import { ownerOf } from '../geometry/areas';
import {
  activeShape,
  addPoint,
  clearShape,
  closeShape,
  deleteVertex,
  type EditorState,
  insertVertex,
  moveVertex,
  nearestEdge,
  redo,
  type SourcePoint,
  setActive,
  setKind,
  snapPoint,
  undo,
} from '../geometry/editor';
import { type LineArrow, lineArrow } from '../geometry/line-arrow';
import {
  fitContain,
  isOnFrame,
  panBy,
  resizeView,
  type Size,
  toDisplay,
  toSourcePixel,
  type View,
  zoomAt,
} from '../geometry/viewport';
import { useElementSize } from '../hooks/useElementSize';
import { AreaFigure } from './AreaFigure';

export interface StageApp {
  app_id: string;
  name: string;
  type: number;
  color: string;
  /** The package's ground scale for the app, when its manifest gives one. */
  lengthReference?: Static<typeof LengthReference>;
}

interface PolygonStageProps {
  source: Size;
  editor: EditorState;
  onChange: (next: EditorState) => void;
  apps: readonly StageApp[];
  /** Apps whose zone has an object inside right now: drawn lit. */
  lit?: ReadonlySet<string>;
  /** Accessible name of the drawing surface. */
  label: string;
  /** Id of the element listing the shortcuts. */
  describedBy?: string;
  /** The frame: laid over exactly the area the source occupies, zoom and pan included. */
  children?: ReactNode;
  /** Text drawn by the active app's measure segment (its ground length). */
  measure?: string;
}

/** Distances in canvas pixels, whatever the zoom. */
const SNAP_PX = 8;
const CLOSE_PX = 10;
const EDGE_PX = 8;
const ZOOM_STEP = 1.2;

function validSize(size: Size): boolean {
  return size.width > 0 && size.height > 0;
}

export function PolygonStage(props: PolygonStageProps) {
  const { source, editor, onChange, apps } = props;
  const containerRef = useRef<HTMLDivElement>(null);
  const size = useElementSize(containerRef);
  const [view, setView] = useState<View>({ scale: 1, offsetX: 0, offsetY: 0 });
  const last = useRef<{ size: Size; source: Size }>({ size: { width: 0, height: 0 }, source });
  const [cursor, setCursor] = useState<SourcePoint | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [preview, setPreview] = useState<{ index: number; point: SourcePoint } | null>(null);
  const [spaceHeld, setSpaceHeld] = useState(false);
  const pan = useRef<{ x: number; y: number; moved: boolean } | null>(null);
  const suppressClick = useRef(false);

  // A new source fits the box; a resized box keeps the zoom and the centre.
  useEffect(() => {
    const previous = last.current;
    last.current = { size, source };
    if (!validSize(size) || !validSize(source)) return;
    const sourceChanged = previous.source.width !== source.width || previous.source.height !== source.height;
    if (sourceChanged || !validSize(previous.size)) setView(fitContain(source, size));
    else if (previous.size.width !== size.width || previous.size.height !== size.height) {
      setView((current) => resizeView(current, source, previous.size, size));
    }
  }, [size, source]);

  const shape = activeShape(editor);
  const activeApp = apps.find((app) => app.app_id === ownerOf(editor, editor.active));
  useEffect(() => {
    // The selection belongs to one shape: switching apps or editing elsewhere clears it.
    if (selected !== null && (!shape || selected >= shape.points.length)) setSelected(null);
  }, [shape, selected]);

  const snapRadius = SNAP_PX / view.scale;
  const snapped = (point: SourcePoint, free: boolean, exclude?: number): SourcePoint =>
    free
      ? point
      : snapPoint(editor, point, {
          radius: snapRadius,
          frame: source,
          ...(exclude !== undefined ? { exclude: { appId: editor.active, index: exclude } } : {}),
        });

  const pointer = (event: Konva.KonvaEventObject<MouseEvent | WheelEvent | PointerEvent>) =>
    event.target.getStage()?.getPointerPosition() ?? null;

  function handleClick(event: Konva.KonvaEventObject<MouseEvent>) {
    if (event.evt.button !== 0) return;
    if (suppressClick.current) {
      suppressClick.current = false;
      return;
    }
    if (event.target.name() !== 'background') return;
    const at = pointer(event);
    // A click on the letterbox beside the frame lands on the frame's nearest edge (toSourcePixel clamps).
    if (!at || !shape) return;
    const raw = toSourcePixel(at, view, source);
    if (!shape.closed) {
      onChange(addPoint(editor, snapped(raw, event.evt.shiftKey), CLOSE_PX / view.scale));
      return;
    }
    if (shape.kind === 'region') {
      const near = nearestEdge(shape.points, raw);
      if (near && near.distance * view.scale <= EDGE_PX) {
        onChange(insertVertex(editor, near.edge, [Math.round(near.point[0]), Math.round(near.point[1])]));
        setSelected(near.edge + 1);
        return;
      }
    }
    setSelected(null);
  }

  function handleMouseDown(event: Konva.KonvaEventObject<MouseEvent>) {
    containerRef.current?.focus({ preventScroll: true });
    if (event.evt.button === 1 || (event.evt.button === 0 && spaceHeld)) {
      event.evt.preventDefault();
      pan.current = { x: event.evt.clientX, y: event.evt.clientY, moved: false };
    }
  }

  function handleMouseMove(event: Konva.KonvaEventObject<MouseEvent>) {
    const drag = pan.current;
    if (drag) {
      const dx = event.evt.clientX - drag.x;
      const dy = event.evt.clientY - drag.y;
      pan.current = { x: event.evt.clientX, y: event.evt.clientY, moved: drag.moved || dx !== 0 || dy !== 0 };
      setView((current) => panBy(current, dx, dy, source, size));
      return;
    }
    const at = pointer(event);
    setCursor(at && isOnFrame(at, view, source) ? toSourcePixel(at, view, source) : null);
  }

  function handleMouseUp() {
    if (pan.current?.moved) suppressClick.current = true;
    pan.current = null;
  }

  function handleWheel(event: Konva.KonvaEventObject<WheelEvent>) {
    event.evt.preventDefault();
    const at = pointer(event);
    if (!at) return;
    setView((current) => zoomAt(current, event.evt.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, at, source, size));
  }

  function handleContextMenu(event: Konva.KonvaEventObject<PointerEvent>) {
    event.evt.preventDefault();
    onChange(undo(editor));
  }

  function dragTo(node: Konva.Node, index: number, free: boolean): SourcePoint {
    const display = node.position();
    const raw = toSourcePixel(display, view, source);
    const point = snapped(raw, free, index);
    node.position(toDisplay({ x: point[0], y: point[1] }, view));
    return point;
  }

  const zoomCentre = (factor: number) =>
    setView((current) => zoomAt(current, factor, { x: size.width / 2, y: size.height / 2 }, source, size));

  function handleKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const mod = event.ctrlKey || event.metaKey;
    const key = event.key;
    let handled = true;
    if (mod && key.toLowerCase() === 'z') onChange(event.shiftKey ? redo(editor) : undo(editor));
    else if (mod && key.toLowerCase() === 'y') onChange(redo(editor));
    else if (key === 'Enter') onChange(closeShape(editor));
    else if (key === 'Escape') {
      if (shape && !shape.closed && shape.points.length > 0) onChange(clearShape(editor));
      else setSelected(null);
    } else if (key === 'Delete' || key === 'Backspace') {
      if (selected !== null) {
        onChange(deleteVertex(editor, selected));
        setSelected(null);
      } else if (shape && !shape.closed) onChange(undo(editor));
    } else if (key === '+' || key === '=') zoomCentre(ZOOM_STEP);
    else if (key === '-' || key === '_') zoomCentre(1 / ZOOM_STEP);
    else if (key === '0') setView(fitContain(source, size));
    else if (key === ' ') setSpaceHeld(true);
    else if (/^[1-9]$/.test(key) && !mod) {
      const app = apps[Number(key) - 1];
      if (app) onChange(setActive(editor, app.app_id));
    } else if (key.toLowerCase() === 'l' && !mod && activeApp?.type === 3 && shape && !shape.area) {
      onChange(setKind(editor, shape.kind === 'line' ? 'region' : 'line'));
    } else if ((key === '[' || key === ']') && shape && shape.points.length > 0) {
      const count = shape.points.length;
      const from = selected ?? (key === ']' ? -1 : 0);
      setSelected((from + (key === ']' ? 1 : -1) + count) % count);
    } else if (key.startsWith('Arrow')) {
      const step = event.shiftKey ? 10 : 1;
      const dx = key === 'ArrowLeft' ? -step : key === 'ArrowRight' ? step : 0;
      const dy = key === 'ArrowUp' ? -step : key === 'ArrowDown' ? step : 0;
      const vertex = selected !== null ? shape?.points[selected] : undefined;
      if (vertex && selected !== null) {
        const x = Math.min(source.width, Math.max(0, vertex[0] + dx));
        const y = Math.min(source.height, Math.max(0, vertex[1] + dy));
        onChange(moveVertex(editor, selected, [x, y]));
      } else if (shape && !shape.closed) {
        // Keyboard drawing: the arrows move a crosshair, A adds a point there.
        const from = cursor ?? [Math.round(source.width / 2), Math.round(source.height / 2)];
        setCursor([
          Math.min(source.width, Math.max(0, from[0] + dx * 5)),
          Math.min(source.height, Math.max(0, from[1] + dy * 5)),
        ]);
      } else setView((current) => panBy(current, -dx * 20, -dy * 20, source, size));
    } else if (key.toLowerCase() === 'a' && !mod && shape && !shape.closed) {
      const at = cursor ?? [Math.round(source.width / 2), Math.round(source.height / 2)];
      onChange(addPoint(editor, at, CLOSE_PX / view.scale));
    } else handled = false;
    if (handled) event.preventDefault();
  }

  const frameRect = {
    left: view.offsetX,
    top: view.offsetY,
    width: source.width * view.scale,
    height: source.height * view.scale,
  };
  const flat = (points: readonly SourcePoint[]) =>
    points.flatMap(([x, y]) => {
      const d = toDisplay({ x, y }, view);
      return [d.x, d.y];
    });

  return (
    <div
      ref={containerRef}
      className={spaceHeld ? 'stage stage-panning' : 'stage'}
      role="application"
      aria-label={props.label}
      aria-describedby={props.describedBy}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the application role takes keyboard focus.
      tabIndex={0}
      onKeyDown={handleKeyDown}
      onKeyUp={(event) => {
        if (event.key === ' ') setSpaceHeld(false);
      }}
      onBlur={() => setSpaceHeld(false)}
    >
      <div className="stage-frame" style={frameRect}>
        {props.children}
      </div>
      {validSize(size) && (
        <Stage
          className="stage-canvas"
          width={size.width}
          height={size.height}
          onClick={handleClick}
          onMouseDown={handleMouseDown}
          onMouseMove={handleMouseMove}
          onMouseUp={handleMouseUp}
          onMouseLeave={() => {
            setCursor(null);
            handleMouseUp();
          }}
          onWheel={handleWheel}
          onContextMenu={handleContextMenu}
        >
          <Layer>
            <Rect name="background" x={0} y={0} width={size.width} height={size.height} />
            {apps.map((app) => {
              const appShape = editor.shapes[app.app_id];
              if (!appShape || appShape.points.length === 0) return null;
              const isActive = app.app_id === editor.active;
              const points =
                isActive && preview
                  ? appShape.points.map((p, i) => (i === preview.index ? preview.point : p))
                  : appShape.points;
              const lit = props.lit?.has(app.app_id) ?? false;
              const region = appShape.kind === 'region';
              const [a, b] = points;
              const arrow =
                appShape.kind === 'line' && appShape.closed && a && b
                  ? lineArrow(
                      toDisplay({ x: a[0], y: a[1] }, view),
                      toDisplay({ x: b[0], y: b[1] }, view),
                      appShape.direction ?? 'both',
                    )
                  : null;
              return (
                <Fragment key={`shape-${app.app_id}`}>
                  <Line
                    points={flat(points)}
                    closed={region && appShape.closed}
                    fill={region && appShape.closed ? rgba(app.color, lit ? 0.22 : 0.07) : undefined}
                    stroke={app.color}
                    strokeWidth={lit ? 4 : appShape.kind === 'line' ? 3 : 2}
                    dash={appShape.closed ? undefined : [8, 6]}
                    shadowColor={app.color}
                    shadowBlur={lit ? 16 : 0}
                    opacity={isActive ? 1 : 0.7}
                    listening={false}
                  />
                  {arrow && <DirectionArrow arrow={arrow} color={app.color} />}
                </Fragment>
              );
            })}
            {apps.map((app) => {
              const appShape = editor.shapes[app.app_id];
              const start = appShape?.points[0];
              if (!appShape || !start) return null;
              const at = toDisplay({ x: start[0], y: start[1] }, view);
              return (
                <Text
                  key={`label-${app.app_id}`}
                  x={at.x + 8}
                  y={at.y - 20}
                  text={app.name}
                  fontSize={13}
                  fontStyle="bold"
                  fill={app.color}
                  shadowColor="#000000"
                  shadowBlur={3}
                  listening={false}
                />
              );
            })}
            {Object.entries(editor.shapes).map(([key, areaShape]) => {
              const area = areaShape.area;
              const app = area && apps.find((candidate) => candidate.app_id === area.app);
              if (!area || !app || areaShape.points.length === 0) return null;
              return (
                <AreaFigure
                  key={`area-${key}`}
                  shape={
                    key === editor.active && preview
                      ? {
                          ...areaShape,
                          points: areaShape.points.map((p, i) => (i === preview.index ? preview.point : p)),
                        }
                      : areaShape
                  }
                  color={app.color}
                  active={key === editor.active}
                  measure={props.measure}
                  flat={flat}
                  view={view}
                />
              );
            })}
            {shape && !shape.closed && cursor && shape.points.length > 0 && (
              <Line
                points={flat([shape.points[shape.points.length - 1] as SourcePoint, cursor])}
                stroke={activeApp?.color ?? '#ffcc00'}
                strokeWidth={1.5}
                dash={[4, 4]}
                listening={false}
              />
            )}
            {shape &&
              (preview
                ? shape.points.map((p, i) => (i === preview.index ? preview.point : p))
                : shape.points
              ).map((point, index) => {
                const at = toDisplay({ x: point[0], y: point[1] }, view);
                const isSelected = index === selected;
                const isFirst = index === 0 && !shape.closed && shape.kind === 'region';
                const numbered = shape.kind === 'marks';
                return (
                  <Circle
                    // biome-ignore lint/suspicious/noArrayIndexKey: a vertex is its index in the shape.
                    key={`vertex-${editor.active}-${index}`}
                    name="vertex"
                    x={at.x}
                    y={at.y}
                    radius={isSelected || isFirst || numbered ? 7 : 5}
                    fill={isSelected ? (activeApp?.color ?? '#ffcc00') : '#ffffff'}
                    stroke={activeApp?.color ?? '#ffcc00'}
                    strokeWidth={2}
                    hitStrokeWidth={12}
                    draggable
                    onMouseDown={(event) => {
                      event.cancelBubble = true;
                      if (event.evt.button === 0) setSelected(index);
                    }}
                    onClick={(event) => {
                      event.cancelBubble = true;
                      // A click on the first point of a region being drawn closes it.
                      if (isFirst && shape.points.length >= 3) onChange(closeShape(editor));
                    }}
                    onDblClick={(event) => {
                      event.cancelBubble = true;
                      onChange(deleteVertex(editor, index));
                      setSelected(null);
                    }}
                    onDragMove={(event) =>
                      setPreview({ index, point: dragTo(event.target, index, event.evt.shiftKey) })
                    }
                    onDragEnd={(event) => {
                      const point = dragTo(event.target, index, event.evt.shiftKey);
                      setPreview(null);
                      onChange(moveVertex(editor, index, point));
                    }}
                  />
                );
              })}
            {shape && !shape.closed && cursor && (
              <Crosshair
                at={toDisplay({ x: cursor[0], y: cursor[1] }, view)}
                color={activeApp?.color ?? '#ffcc00'}
              />
            )}
          </Layer>
        </Stage>
      )}
      {cursor && (
        <div className="stage-readout" aria-hidden="true">
          {cursor[0]}, {cursor[1]} · {Math.round((view.scale / fitContain(source, size).scale) * 100)}%
        </div>
      )}
    </div>
  );
}

/** A counting line's direction: its arrow, and the letters of its sides (A, B). */
function DirectionArrow({ arrow, color }: { arrow: LineArrow; color: string }) {
  return (
    <>
      <Line points={arrow.shaft} stroke={color} strokeWidth={3} listening={false} />
      {arrow.heads.map((head) => (
        <Line key={head.join(',')} points={head} closed fill={color} stroke={color} listening={false} />
      ))}
      {(['A', 'B'] as const).map((side) => {
        const at = side === 'A' ? arrow.sideA : arrow.sideB;
        return (
          <Text
            key={side}
            x={at.x - 5}
            y={at.y - 7}
            text={side}
            fontSize={14}
            fontStyle="bold"
            fill={color}
            shadowColor="#000000"
            shadowBlur={3}
            listening={false}
          />
        );
      })}
    </>
  );
}

/** Where the next point goes while drawing (the mouse, or the keyboard's crosshair). */
function Crosshair({ at, color }: { at: { x: number; y: number }; color: string }) {
  return (
    <>
      <Line points={[at.x - 9, at.y, at.x + 9, at.y]} stroke={color} strokeWidth={1} listening={false} />
      <Line points={[at.x, at.y - 9, at.x, at.y + 9]} stroke={color} strokeWidth={1} listening={false} />
    </>
  );
}
