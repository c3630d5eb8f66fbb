import type { InstalledApp } from '../packages/registry';
import { type AppRuleContext, AppRuleState } from '../rules/evaluate';
import { groundMap } from '../rules/ground';
import type { AppAreas, Polygon } from '../tasks/schema';
import { scalePolygon } from '../vision/geometry';
import type { FrameSize } from '../vision/types';

/**
 * The polygon (with its line's direction), zones, masks and calibration marks of an app, all rescaled alike: they are stored in
 * pixels of the frame they were drawn on, and a new source size rescales them.
 */
export function scaleAreas(areas: AppAreas, from: FrameSize | null, to: FrameSize): AppAreas {
  const scale = (polygon: Polygon) => scalePolygon(polygon, from, to);
  return {
    polygon: scale(areas.polygon),
    ...(areas.line_direction && { line_direction: areas.line_direction }),
    ...(areas.zones && { zones: areas.zones.map((zone) => ({ ...zone, polygon: scale(zone.polygon) })) }),
    ...(areas.masks && { masks: areas.masks.map(scale) }),
    ...(areas.calibration && {
      calibration: { ...areas.calibration, image: scale(areas.calibration.image) },
    }),
  };
}

/** The colour a zone is drawn in: the rule's class_area colour, else its first class colour. */
export function zoneColor(app: InstalledApp): string {
  return app.rule.class_area?.color ?? app.rule.classes?.[0]?.color ?? '#00c8ff';
}

/** One application of a running task: its rule state and where its zone lies on the current frame. */
export class AppRuntime {
  readonly state: AppRuleState;
  /** The areas on the current frame. */
  areas: AppAreas;
  color: string;

  constructor(
    public app: InstalledApp,
    private drawn: AppAreas,
    private drawnOn: FrameSize | null,
    frame: FrameSize,
  ) {
    this.areas = scaleAreas(drawn, drawnOn, frame);
    this.color = zoneColor(app);
    this.state = new AppRuleState(this.context());
  }

  get polygon(): Polygon {
    return this.areas.polygon;
  }

  /** A live change (rule edit, new areas, new frame size) keeps counters and interval timers. */
  reconfigure(app: InstalledApp, drawn: AppAreas, drawnOn: FrameSize | null, frame: FrameSize): void {
    this.app = app;
    this.drawn = drawn;
    this.drawnOn = drawnOn;
    this.areas = scaleAreas(drawn, drawnOn, frame);
    this.color = zoneColor(app);
    this.state.setContext(this.context());
  }

  resize(frame: FrameSize): void {
    this.reconfigure(this.app, this.drawn, this.drawnOn, frame);
  }

  private context(): AppRuleContext {
    const { calibration, ...areas } = this.areas;
    const ground = groundMap(calibration, this.app.length_reference);
    return {
      appId: this.app.app_id,
      appType: this.app.type,
      rule: this.app.rule,
      ...areas,
      ...(ground && { ground }),
    };
  }
}
