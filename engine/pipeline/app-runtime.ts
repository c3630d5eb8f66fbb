import type { InstalledApp } from '../packages/registry';
import { type AppRuleContext, AppRuleState } from '../rules/evaluate';
import type { Polygon } from '../tasks/schema';

export interface FrameSize {
  width: number;
  height: number;
}

/** Polygons are stored in pixels of the frame they were drawn on; a new source size rescales them. */
export function scalePolygon(polygon: Polygon, from: FrameSize | null, to: FrameSize): Polygon {
  if (!from || (from.width === to.width && from.height === to.height)) return polygon;
  const sx = to.width / from.width;
  const sy = to.height / from.height;
  return polygon.map(([x = 0, y = 0]) => [x * sx, y * sy]);
}

/** The colour a zone is drawn in: the rule's class_area colour, else its first class colour. */
export function zoneColor(app: InstalledApp): string {
  return app.rule.class_area?.color ?? app.rule.classes?.[0]?.color ?? '#00c8ff';
}

/** One application of a running task: its rule state and where its zone lies on the current frame. */
export class AppRuntime {
  readonly state: AppRuleState;
  polygon: Polygon;
  color: string;

  constructor(
    public app: InstalledApp,
    private drawnPolygon: Polygon,
    private drawnOn: FrameSize | null,
    frame: FrameSize,
  ) {
    this.polygon = scalePolygon(drawnPolygon, drawnOn, frame);
    this.color = zoneColor(app);
    this.state = new AppRuleState(this.context());
  }

  /** A live change (rule edit, new polygon, new frame size) keeps counters and interval timers. */
  reconfigure(app: InstalledApp, drawnPolygon: Polygon, drawnOn: FrameSize | null, frame: FrameSize): void {
    this.app = app;
    this.drawnPolygon = drawnPolygon;
    this.drawnOn = drawnOn;
    this.polygon = scalePolygon(drawnPolygon, drawnOn, frame);
    this.color = zoneColor(app);
    this.state.setContext(this.context());
  }

  resize(frame: FrameSize): void {
    this.reconfigure(this.app, this.drawnPolygon, this.drawnOn, frame);
  }

  private context(): AppRuleContext {
    return {
      appId: this.app.app_id,
      appType: this.app.type,
      rule: this.app.rule,
      polygon: this.polygon,
    };
  }
}
