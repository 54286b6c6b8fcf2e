import type { Rule, WorldParams } from '@oncely/cli/sim/index.js';
import { describeMark, duplicateSummary } from './describe-mark.js';
import { h, s } from './dom.js';
import {
  LABEL_WIDTH,
  LANE_HEIGHT,
  TOP,
  TRACK_LEFT,
  BOTTOM,
  timelineGeometry,
} from './timeline-geometry.js';
import {
  relatedMarks,
  storyOf,
  type AttemptPath,
  type Mark,
  type MarkKind,
  type TimelineModel,
} from './timeline-model.js';

/** Lanes of overlapping attempts sit a little apart so their legs stay distinguishable. */
const ATTEMPT_OFFSETS = [-4, 0, 4] as const;

/**
 * One figure per rule: caption, the job labels, a keyboard-navigable SVG track that scrolls on
 * its own beside them, and a detail line. `availableWidth` is the width the figure may take: the
 * ticks widen to fill it, within readable bounds.
 */
export function renderTimeline(
  model: TimelineModel,
  params: WorldParams,
  rule: Rule,
  index: number,
  availableWidth = 0,
): HTMLElement {
  const {
    px,
    trackWidth: width,
    height,
  } = timelineGeometry(model.endTick, model.jobs, availableWidth);
  const x = (tick: number): number => TRACK_LEFT + tick * px + px / 2;
  const y = (path: { job: number; attempt: number }): number =>
    TOP +
    path.job * LANE_HEIGHT +
    LANE_HEIGHT / 2 +
    ATTEMPT_OFFSETS[(path.attempt - 1) % ATTEMPT_OFFSETS.length]!;

  const detailId = `timeline-detail-${index}`;
  const helpId = `timeline-help-${index}`;
  const svg = s('svg', {
    class: 'timeline',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    tabindex: 0,
    role: 'group',
    'aria-label': `${rule.label}: timeline of ${model.jobs} jobs over ${model.endTick} ticks`,
    'aria-describedby': helpId,
    'data-rule': rule.id,
  });
  // The labels repeat what the track's aria-label and the detail line say: hidden from readers.
  const labelColumn = s('svg', {
    class: 'timeline-labels',
    width: LABEL_WIDTH,
    height,
    viewBox: `0 0 ${LABEL_WIDTH} ${height}`,
    'aria-hidden': 'true',
  });

  const dupJobs = new Set(model.duplicates.map((d) => d.path.job));
  const lanes = s('g', { class: 'lanes' });
  for (let job = 0; job < model.jobs; job++) {
    const laneTop = TOP + job * LANE_HEIGHT;
    const cls = `lane${job % 2 ? ' lane-odd' : ''}${dupJobs.has(job) ? ' lane-dup' : ''}`;
    lanes.append(s('rect', { class: cls, x: 0, y: laneTop, width, height: LANE_HEIGHT }));
    labelColumn.append(
      s('rect', { class: cls, x: 0, y: laneTop, width: LABEL_WIDTH, height: LANE_HEIGHT }),
      s(
        'text',
        {
          class: `lane-label${dupJobs.has(job) ? ' lane-label-dup' : ''}`,
          x: LABEL_WIDTH - 6,
          y: laneTop + LANE_HEIGHT / 2 + 4,
          'text-anchor': 'end',
          'data-job': job,
        },
        `job ${job}`,
      ),
    );
  }
  labelColumn.append(
    s(
      'text',
      { class: 'lane-label', x: LABEL_WIDTH - 6, y: TOP - 8, 'text-anchor': 'end' },
      'tick',
    ),
    s('line', {
      class: 'label-rule',
      x1: LABEL_WIDTH - 0.5,
      x2: LABEL_WIDTH - 0.5,
      y1: 0,
      y2: height,
    }),
  );
  svg.append(lanes);

  const gridStep =
    [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000].find((step) => step * px >= 36) ?? 1000;
  const grid = s('g', { class: 'grid', 'aria-hidden': 'true' });
  for (let tick = 0; tick <= model.endTick; tick += gridStep) {
    const gx = TRACK_LEFT + tick * px;
    grid.append(s('line', { x1: gx, x2: gx, y1: TOP - 4, y2: height - BOTTOM }));
    grid.append(s('text', { x: gx, y: TOP - 8, 'text-anchor': 'middle' }, String(tick)));
  }
  const marker = (tick: number, label: string, cls: string): void => {
    if (tick <= 0 || tick > model.endTick) return;
    const mx = TRACK_LEFT + tick * px;
    grid.append(s('line', { class: cls, x1: mx, x2: mx, y1: TOP, y2: height - BOTTOM }));
    grid.append(
      s(
        'text',
        { class: `${cls}-label`, x: mx - 3, y: height - BOTTOM - 3, 'text-anchor': 'end' },
        label,
      ),
    );
  };
  marker(params.horizonTicks, 'horizon', 'horizon-line');
  if (rule.keyed && params.forgetKeysAt !== null)
    marker(params.forgetKeysAt, 'keys forgotten', 'forget-line');
  svg.append(grid);

  const legs = s('g', { class: 'legs', 'aria-hidden': 'true' });
  for (const path of model.paths) drawLegs(legs, path, x, y, px);
  svg.append(legs);

  const marks = s('g', { class: 'marks' });
  const markEls: SVGGElement[] = [];
  for (const mark of model.marks) {
    const el = drawMark(mark, x(mark.tick), y(mark), px);
    markEls.push(el);
    marks.append(el);
  }
  svg.append(marks);
  const overlay = s('g', { class: 'overlay', 'aria-hidden': 'true' });
  svg.append(overlay);

  const detail = h(
    'p',
    { class: 'timeline-detail', id: detailId, 'aria-live': 'polite' },
    'Hover over an event, or focus the timeline and use the arrow keys.',
  );
  const scroller = h('div', { class: 'timeline-scroll' }, svg);
  const box = h('div', { class: 'timeline-box' }, labelColumn, scroller);
  const nextDup = h(
    'button',
    {
      type: 'button',
      class: 'next-duplicate',
      'data-rule': rule.id,
      disabled: model.duplicates.length === 0,
    },
    model.duplicates.length === 0 ? 'No duplicates' : `Next duplicate (${model.duplicates.length})`,
  );

  let selected: Mark | undefined;
  const select = (mark: Mark | undefined, scroll: boolean): void => {
    selected = mark;
    overlay.replaceChildren();
    for (const el of markEls) el.classList.remove('is-selected');
    if (!mark) return;
    markEls[mark.id]!.classList.add('is-selected');
    const story = storyOf(model, mark);
    if (story) {
      for (const related of relatedMarks(model, story)) {
        if (related.id !== mark.id)
          overlay.append(
            s('circle', {
              class: 'ring-related',
              cx: x(related.tick) + markOffset(related.kind, px),
              cy: y(related),
              r: 8,
            }),
          );
      }
    }
    const cx = x(mark.tick) + markOffset(mark.kind, px);
    overlay.append(s('circle', { class: 'ring-selected', cx, cy: y(mark), r: 9 }));
    detail.textContent = describeMark(model, mark, params, rule);
    detail.dataset['kind'] = mark.kind;
    if (
      scroll &&
      (cx < scroller.scrollLeft + 40 || cx > scroller.scrollLeft + scroller.clientWidth - 40)
    ) {
      scroller.scrollLeft = cx - scroller.clientWidth / 2;
    }
  };

  svg.addEventListener('pointerover', (event) => {
    const id = markIdOf(event.target);
    if (id !== undefined) select(model.marks[id], false);
  });
  svg.addEventListener('click', (event) => {
    const id = markIdOf(event.target);
    if (id !== undefined) select(model.marks[id], false);
  });
  svg.addEventListener('focus', () => {
    if (!selected) select(firstMark(model), true);
  });
  svg.addEventListener('keydown', (event) => {
    const next = navigate(model, selected, event.key);
    if (next === null) return;
    event.preventDefault();
    select(next, true);
  });
  let dupIndex = -1;
  nextDup.addEventListener('click', () => {
    if (model.duplicates.length === 0) return;
    dupIndex = (dupIndex + 1) % model.duplicates.length;
    svg.focus({ preventScroll: true });
    select(model.duplicates[dupIndex]!.mark, true);
  });

  const headingId = `timeline-heading-${index}`;
  return h(
    'figure',
    { class: 'timeline-figure', 'data-rule': rule.id, 'aria-labelledby': headingId },
    h(
      'figcaption',
      {},
      h('h3', { id: headingId }, rule.label),
      h(
        'p',
        { class: 'timeline-summary', 'data-duplicates': model.duplicates.length },
        duplicateSummary(model),
      ),
      h(
        'p',
        { class: 'visually-hidden', id: helpId },
        'Arrow keys: left and right step through this job’s events, up and down change job, Home and End jump to the lane’s ends.',
      ),
    ),
    h('div', { class: 'timeline-tools' }, nextDup),
    box,
    detail,
  );
}

/** Where a mark is drawn relative to its tick: a loss sits just after the event it follows. */
function markOffset(kind: MarkKind, px: number): number {
  return kind === 'request-lost' || kind === 'receipt-lost' ? Math.max(4, px * 0.6) : 0;
}

function drawLegs(
  into: SVGGElement,
  path: AttemptPath,
  x: (t: number) => number,
  y: (p: AttemptPath) => number,
  px: number,
): void {
  const py = y(path);
  const from = x(path.sentAt);
  if (path.requestLost) {
    into.append(
      s('line', {
        class: 'leg leg-lost',
        x1: from,
        x2: from + Math.max(4, px * 0.6),
        y1: py,
        y2: py,
      }),
    );
    return;
  }
  if (path.arrivedAt === undefined) return;
  into.append(
    s('line', { class: 'leg leg-request', x1: from, x2: x(path.arrivedAt), y1: py, y2: py }),
  );
  if (path.receiptAt !== undefined)
    into.append(
      s('line', {
        class: 'leg leg-receipt',
        x1: x(path.arrivedAt),
        x2: x(path.receiptAt),
        y1: py,
        y2: py,
      }),
    );
}

/** A mark's shape (shape and colour both differ per kind, so colour is never the only cue). */
export function markShape(kind: MarkKind, cx: number, cy: number): SVGElement {
  switch (kind) {
    case 'send':
      return s('circle', { class: 'm-send', cx, cy, r: 3.2 });
    case 'request-lost':
    case 'receipt-lost':
      return s('path', {
        class: kind === 'request-lost' ? 'm-request-lost' : 'm-receipt-lost',
        d: `M${cx - 3.5} ${cy - 3.5}L${cx + 3.5} ${cy + 3.5}M${cx + 3.5} ${cy - 3.5}L${cx - 3.5} ${cy + 3.5}`,
      });
    case 'effect':
      return s('rect', { class: 'm-effect', x: cx - 4, y: cy - 4, width: 8, height: 8 });
    case 'duplicate': {
      const g = s('g', { class: 'm-duplicate' });
      g.append(s('circle', { class: 'm-duplicate-halo', cx, cy, r: 8 }));
      g.append(
        s('path', {
          class: 'm-duplicate-core',
          d: `M${cx} ${cy - 6}L${cx + 6} ${cy}L${cx} ${cy + 6}L${cx - 6} ${cy}Z`,
        }),
      );
      return g;
    }
    case 'suppressed':
      return s('rect', { class: 'm-suppressed', x: cx - 3.5, y: cy - 3.5, width: 7, height: 7 });
    case 'receipt':
      return s('path', {
        class: 'm-receipt',
        d: `M${cx - 4} ${cy}L${cx + 3} ${cy - 4}L${cx + 3} ${cy + 4}Z`,
      });
  }
}

function drawMark(mark: Mark, cx: number, cy: number, px: number): SVGGElement {
  const mx = cx + markOffset(mark.kind, px);
  const g = s('g', {
    class: `mark mark-${mark.kind}`,
    'data-mark': mark.id,
    'data-kind': mark.kind,
    'data-job': mark.job,
    'data-tick': mark.tick,
  });
  g.append(s('circle', { class: 'hit', cx: mx, cy, r: 6 }));
  g.append(markShape(mark.kind, mx, cy));
  return g;
}

function markIdOf(target: EventTarget | null): number | undefined {
  const el = target instanceof Element ? target.closest('[data-mark]') : null;
  const raw = el?.getAttribute('data-mark');
  return raw == null ? undefined : Number(raw);
}

function firstMark(model: TimelineModel): Mark | undefined {
  return model.marks[0];
}

/** The mark an arrow key moves to, or null when the key is not a navigation key. */
function navigate(
  model: TimelineModel,
  from: Mark | undefined,
  key: string,
): Mark | undefined | null {
  if (!from)
    return ['ArrowRight', 'ArrowLeft', 'ArrowUp', 'ArrowDown', 'Home', 'End'].includes(key)
      ? firstMark(model)
      : null;
  const lane = model.lanes[from.job]!;
  const at = lane.indexOf(from.id);
  const pick = (id: number | undefined): Mark => (id === undefined ? from : model.marks[id]!);
  switch (key) {
    case 'ArrowRight':
      return pick(lane[at + 1]);
    case 'ArrowLeft':
      return pick(lane[at - 1]);
    case 'Home':
      return pick(lane[0]);
    case 'End':
      return pick(lane[lane.length - 1]);
    case 'ArrowDown':
    case 'ArrowUp': {
      const step = key === 'ArrowDown' ? 1 : -1;
      for (let job = from.job + step; job >= 0 && job < model.jobs; job += step) {
        const ids = model.lanes[job]!;
        if (ids.length === 0) continue;
        let best = ids[0]!;
        for (const id of ids)
          if (
            Math.abs(model.marks[id]!.tick - from.tick) <
            Math.abs(model.marks[best]!.tick - from.tick)
          )
            best = id;
        return model.marks[best]!;
      }
      return from;
    }
    case 'Escape':
      return undefined;
    default:
      return null;
  }
}
