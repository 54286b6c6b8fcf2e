/**
 * Where a timeline's parts go, in SVG user units (CSS px at scale 1). The job labels are a column
 * of their own, outside the scrolling track, so they stay in view while the track scrolls.
 */
export const LANE_HEIGHT = 18;
/** Room above the lanes for the tick numbers. */
export const TOP = 22;
export const BOTTOM = 6;
export const LABEL_WIDTH = 52;
/** Room left of tick 0 for a mark's halo, and right of the last tick. */
export const TRACK_LEFT = 8;
export const TRACK_RIGHT = 14;
/** The timeline box's left and right borders together. */
export const BOX_BORDERS = 2;
/** A short world is not stretched past this: its box hugs it instead. */
export const MAX_TICK_PX = 24;

export interface TimelineGeometry {
  /** Width of one tick. */
  readonly px: number;
  /** Width of the track (the lanes right of the labels). */
  readonly trackWidth: number;
  /** Height of both the labels and the track. */
  readonly height: number;
}

/**
 * A tick is as wide as fills `availableWidth` (the width the timeline's box may take), but never
 * narrower than stays readable (up to 12 px, at least 3: a long world scrolls) nor wider than
 * {@link MAX_TICK_PX}. The height is exactly the lanes and their margins.
 */
export function timelineGeometry(
  endTick: number,
  jobs: number,
  availableWidth: number,
): TimelineGeometry {
  const ticks = Math.max(1, endTick);
  const readablePx = Math.max(3, Math.min(12, Math.floor(1400 / ticks)));
  const fitPx = (availableWidth - BOX_BORDERS - LABEL_WIDTH - TRACK_LEFT - TRACK_RIGHT) / ticks;
  const px = Math.max(readablePx, Math.min(MAX_TICK_PX, fitPx));
  return {
    px,
    trackWidth: TRACK_LEFT + ticks * px + TRACK_RIGHT,
    height: TOP + jobs * LANE_HEIGHT + BOTTOM,
  };
}
