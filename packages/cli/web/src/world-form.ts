import { RULES, type RuleId, type WorldParams } from '@oncely/cli/sim/index.js';
import { h } from './dom.js';
import {
  PARAM_CONTROLS,
  allowedText,
  formatValue,
  readParams,
  type ParamControl,
  type ReadResult,
} from './page-params.js';

/**
 * The world form, built from PARAM_CONTROLS so the controls, the URL and the CLI flags share one
 * list. Every control has a visible label; a "no limit" parameter is a radio pair plus a number.
 */
export function buildWorldForm(
  basic: HTMLElement,
  advanced: HTMLElement,
  rules: HTMLElement,
): void {
  for (const control of PARAM_CONTROLS)
    (control.advanced ? advanced : basic).append(controlField(control));
  for (const rule of RULES) {
    const id = `rule-${rule.id}`;
    rules.append(
      h(
        'div',
        { class: 'rule-choice' },
        h('input', {
          type: 'checkbox',
          id,
          name: 'rules',
          value: rule.id,
          checked: true,
          'aria-describedby': `${id}-help`,
        }),
        h('label', { for: id }, rule.label),
        h(
          'p',
          { class: 'help', id: `${id}-help` },
          `${rule.description}${rule.fromSeed ? '' : ' (ours, not in the simulator write-up)'}`,
        ),
      ),
    );
  }
}

function controlField(control: ParamControl): HTMLElement {
  const id = `p-${control.query}`;
  const helpId = `${id}-help`;
  const errorId = `${id}-error`;
  const number = h('input', {
    type: 'number',
    id,
    name: control.query,
    min: control.min,
    max: control.max,
    step: control.kind === 'probability' ? 'any' : control.step,
    inputmode: control.kind === 'probability' ? 'decimal' : 'numeric',
    required: true,
    'aria-describedby': `${helpId} ${errorId}`,
  });
  const help = h('p', { class: 'help', id: helpId }, control.help);
  const error = h('p', { class: 'field-error', id: errorId, hidden: true });
  if (!control.none) {
    return h(
      'div',
      { class: 'field', 'data-param': control.query },
      h('label', { for: id }, control.label),
      number,
      help,
      error,
    );
  }
  // A radio pair: "no limit" or "this many". Typing a number picks "this many".
  const none = h('input', {
    type: 'radio',
    id: `${id}-none`,
    name: `${control.query}-mode`,
    value: 'none',
    checked: true,
  });
  const some = h('input', {
    type: 'radio',
    id: `${id}-some`,
    name: `${control.query}-mode`,
    value: 'some',
  });
  number.setAttribute('aria-label', `${control.label}: ${control.none.someLabel.toLowerCase()}`);
  number.value = String(control.min === 0 ? 40 : 8);
  number.addEventListener('input', () => {
    some.checked = true;
  });
  return h(
    'fieldset',
    { class: 'field field-choice', 'data-param': control.query, 'aria-describedby': helpId },
    h('legend', {}, control.label),
    h('div', { class: 'choice-row' }, none, h('label', { for: none.id }, control.none.noneLabel)),
    h(
      'div',
      { class: 'choice-row' },
      some,
      h('label', { for: some.id }, control.none.someLabel),
      number,
    ),
    help,
    error,
  );
}

/** Puts these values into the form. */
export function writeForm(
  form: HTMLFormElement,
  params: WorldParams,
  rules: readonly RuleId[],
): void {
  for (const control of PARAM_CONTROLS) {
    const value = params[control.param];
    const number = form.querySelector<HTMLInputElement>(`#p-${control.query}`)!;
    if (control.none) {
      form.querySelector<HTMLInputElement>(
        `#p-${control.query}-${value === null ? 'none' : 'some'}`,
      )!.checked = true;
      if (value !== null) number.value = String(value);
    } else {
      number.value = formatValue(control, value);
    }
  }
  for (const box of form.querySelectorAll<HTMLInputElement>('input[name="rules"]'))
    box.checked = rules.includes(box.value as RuleId);
  showProblems(form, []);
}

/** Reads and checks the form: the same checks as a URL's query string. */
export function readForm(form: HTMLFormElement): ReadResult {
  const raw = new Map<string, string>();
  for (const control of PARAM_CONTROLS) {
    const number = form.querySelector<HTMLInputElement>(`#p-${control.query}`)!;
    const useNone =
      control.none && form.querySelector<HTMLInputElement>(`#p-${control.query}-none`)!.checked;
    raw.set(control.query, useNone ? control.none!.word : number.value);
  }
  const checked = [...form.querySelectorAll<HTMLInputElement>('input[name="rules"]:checked')].map(
    (box) => box.value,
  );
  const result = readParams(raw, checked.length === 0 ? '' : checked.join(','));
  showProblems(form, result.problems);
  return result;
}

/** Marks refused fields (aria-invalid + a message beside each) and clears the others. */
export function showProblems(form: HTMLFormElement, problems: ReadResult['problems']): void {
  for (const control of PARAM_CONTROLS) {
    const problem = problems.find((p) => p.query === control.query);
    const input = form.querySelector<HTMLInputElement>(`#p-${control.query}`)!;
    const error = form.querySelector<HTMLElement>(`#p-${control.query}-error`)!;
    input.toggleAttribute('aria-invalid', problem !== undefined);
    if (problem) input.setAttribute('aria-invalid', 'true');
    error.hidden = problem === undefined;
    error.textContent = problem ? `Expected ${allowedText(control)}.` : '';
  }
  const rulesError = form.querySelector<HTMLElement>('#rules-error');
  const rulesProblem = problems.find((p) => p.query === 'rules');
  if (rulesError) {
    rulesError.hidden = rulesProblem === undefined;
    rulesError.textContent = rulesProblem ? 'Pick at least one rule.' : '';
  }
}
