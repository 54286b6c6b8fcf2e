import { METRIC_NAMES, METRIC_TITLES, ruleById, type WorldOutcome } from '@oncely/cli/sim/index.js';
import { h, s } from './dom.js';
import { MARK_LABELS } from './describe-mark.js';
import { markShape } from './timeline-view.js';
import { MARK_KINDS } from './timeline-model.js';

/**
 * The per-rule table. Each row carries data-rule and each cell data-metric, so a test reads the
 * same numbers a person sees and compares them with `oncely sim run --json`.
 */
export function renderOutcomeTable(
  outcomes: readonly WorldOutcome[],
  caption: string,
): HTMLTableElement {
  return h(
    'table',
    { id: 'outcome-table', class: 'numbers stack-narrow' },
    h('caption', {}, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Rule'),
        ...METRIC_NAMES.map((name) => h('th', { scope: 'col' }, METRIC_TITLES[name])),
      ),
    ),
    h(
      'tbody',
      {},
      ...outcomes.map((outcome) =>
        h(
          'tr',
          { 'data-rule': outcome.rule },
          h('th', { scope: 'row' }, ruleById(outcome.rule)?.label ?? outcome.rule),
          ...METRIC_NAMES.map((name) =>
            h(
              'td',
              {
                'data-metric': name,
                'data-label': METRIC_TITLES[name],
                class: name === 'duplicates' && outcome.metrics[name] > 0 ? 'bad' : undefined,
              },
              String(outcome.metrics[name]),
            ),
          ),
        ),
      ),
    ),
  );
}

/** The legend shared by every timeline: the mark shapes, and the two kinds of leg. */
export function renderLegend(): HTMLElement {
  const icon = (...children: SVGElement[]): SVGSVGElement => {
    const svg = s('svg', {
      width: 26,
      height: 18,
      viewBox: '0 0 26 18',
      'aria-hidden': 'true',
      class: 'legend-icon',
    });
    svg.append(...children);
    return svg;
  };
  const items = MARK_KINDS.map((kind) =>
    h('li', { 'data-kind': kind }, icon(markShape(kind, 13, 9)), MARK_LABELS[kind]),
  );
  items.splice(
    1,
    0,
    h(
      'li',
      {},
      icon(s('line', { class: 'leg leg-request', x1: 2, x2: 24, y1: 9, y2: 9 })),
      'request on its way',
    ),
  );
  items.push(
    h(
      'li',
      {},
      icon(s('line', { class: 'leg leg-receipt', x1: 2, x2: 24, y1: 9, y2: 9 })),
      'receipt on its way',
    ),
  );
  return h('ul', { class: 'legend', 'aria-label': 'Legend' }, ...items);
}
