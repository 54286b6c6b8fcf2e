import {
  RULE_IDS,
  drawsFor,
  resolveWorldParams,
  ruleById,
  runWorld,
  type WorldOutcome,
  type WorldParams,
} from '@oncely/cli/sim/index.js';
import { setUpBatchPanel } from './batch-panel.js';
import { setUpCheckoutPanel } from './checkout-panel.js';
import { setUpFleetPanel } from './fleet-panel.js';
import { byId, h } from './dom.js';
import { GUIDE_STEPS, guideParams } from './guide.js';
import { renderLegend, renderOutcomeTable } from './outcome-view.js';
import {
  cliCommandFor,
  describeParams,
  queryFromState,
  stateFromQuery,
  type PageState,
} from './page-params.js';
import { buildTimeline } from './timeline-model.js';
import { renderTimeline } from './timeline-view.js';
import { buildWorldForm, readForm, writeForm } from './world-form.js';

/**
 * The simulator page: the controls, the outcome of one world under each chosen rule (a table and
 * a timeline per rule), the guide, and the batch. Everything is computed here with apps/sim, the
 * code the CLI runs, so the page works from any static host.
 */
performance.mark('oncely:script-start');

/** Above this many trace events a timeline would take seconds to draw and be unreadable anyway. */
const MAX_TIMELINE_EVENTS = 20_000;

const form = byId<HTMLFormElement>('world-form');
buildWorldForm(byId('world-fields'), byId('world-advanced-fields'), byId('rule-fields'));
byId('timeline-legend').replaceWith(renderLegend());

/** Runs the world under each chosen rule and shows the table and the timelines. */
function showOutcome(state: PageState): void {
  const params = resolveWorldParams(state.params);
  const draws = drawsFor(params);
  const outcomes: WorldOutcome[] = state.rules.map((id) => runWorld(params, id, { draws }));
  const query = queryFromState(state);
  byId('outcome-table-holder').replaceChildren(
    renderOutcomeTable(outcomes, describeParams(params)),
  );
  // The command that prints this very table (add --json for the same numbers as JSON).
  byId('outcome-cli').textContent = cliCommandFor(state);
  const link = byId<HTMLAnchorElement>('outcome-link');
  link.href = query;
  link.textContent = `${location.pathname}${query}`;
  const section = byId('outcome');
  section.hidden = false;
  drawn = { outcomes, params, width: -1 };
  drawTimelines();
  section.dataset['query'] = query;
}

/** What the timelines show, and the width they were drawn for: a resize redraws them. */
let drawn: { outcomes: WorldOutcome[]; params: WorldParams; width: number } | undefined;

/** Draws the shown outcome's timelines to the width of their box, measured now (while shown). */
function drawTimelines(): void {
  if (drawn === undefined) return;
  const { outcomes, params } = drawn;
  const timelines = byId('timelines');
  const availableWidth = timelines.clientWidth;
  drawn.width = availableWidth;
  timelines.replaceChildren(
    ...outcomes.map((outcome, i) => {
      const rule = ruleById(outcome.rule)!;
      const events = outcome.trace?.length ?? 0;
      if (events > MAX_TIMELINE_EVENTS) {
        return h(
          'p',
          { class: 'notice', 'data-rule': rule.id },
          `${rule.label}: ${events.toLocaleString('en')} events are too many to draw (at most ${MAX_TIMELINE_EVENTS.toLocaleString('en')}); the table above has its numbers.`,
        );
      }
      return renderTimeline(
        buildTimeline(outcome.trace ?? [], params, rule),
        params,
        rule,
        i,
        availableWidth,
      );
    }),
  );
}

// The ticks widen to fill the box: when the window changes its width, draw them again to fit.
new ResizeObserver(() => {
  if (drawn !== undefined && byId('timelines').clientWidth !== drawn.width) drawTimelines();
}).observe(byId('timelines'));

/**
 * The URL's state into the form; refused values are named, defaults used. The outcome shows only
 * when the URL holds one (a shared link, back and forward): a bare visit waits for Show outcome.
 */
function showFromUrl(): void {
  const state = stateFromQuery(location.search);
  // The form shows the values used; the notice names the refused ones.
  writeForm(form, state.params, state.rules);
  const notice = byId('url-problems');
  notice.hidden = state.problems.length === 0;
  notice.replaceChildren(
    ...(state.problems.length === 0
      ? []
      : [
          h('p', {}, 'This link has values the page cannot use; the defaults stand in for them:'),
          h('ul', {}, ...state.problems.map((p) => h('li', {}, p.message))),
        ]),
  );
  if (location.search === '' || location.search === '?') {
    byId('outcome').hidden = true;
    return;
  }
  showOutcome(state);
}

function submit(state: PageState): void {
  const query = queryFromState(state);
  if (query !== location.search) history.pushState(null, '', query);
  byId('url-problems').hidden = true;
  byId('form-problems').hidden = true;
  showOutcome(state);
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const result = readForm(form);
  const summary = byId('form-problems');
  summary.hidden = result.problems.length === 0;
  summary.replaceChildren(
    ...(result.problems.length === 0
      ? []
      : [h('ul', {}, ...result.problems.map((p) => h('li', {}, p.message)))]),
  );
  if (result.problems.length > 0) {
    summary.focus();
    return;
  }
  submit(result);
});

const guide = byId('guide-steps');
GUIDE_STEPS.forEach((step, i) => {
  const button = h(
    'button',
    { type: 'button', class: 'preset', 'data-setting': step.setting },
    step.button,
  );
  button.addEventListener('click', () => {
    const current = readForm(form);
    const params = guideParams(step, current.params.seed);
    writeForm(form, params, RULE_IDS);
    submit({ params, rules: RULE_IDS });
    byId('outcome').scrollIntoView({ block: 'start' });
  });
  guide.append(
    h(
      'li',
      {},
      h('span', { class: 'step-number', 'aria-hidden': 'true' }, String(i + 1)),
      h('div', {}, button, h('p', {}, step.look)),
    ),
  );
});
byId('guide-reset').addEventListener('click', () => {
  const seed = readForm(form).params.seed;
  const params = resolveWorldParams({ seed });
  writeForm(form, params, RULE_IDS);
  submit({ params, rules: RULE_IDS });
});

window.addEventListener('popstate', showFromUrl);
showFromUrl();
// The browser test reads these: time to the first outcome, and the share of it spent here.
performance.mark('oncely:first-outcome');
performance.measure('oncely:first-outcome-script', 'oncely:script-start', 'oncely:first-outcome');
setUpBatchPanel();
setUpFleetPanel();
setUpCheckoutPanel();
