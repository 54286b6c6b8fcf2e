import type { RuleId } from '@oncely/cli/sim/index.js';

/**
 * One colour per rule, for the chart. Each has at least 4.5:1 contrast on white (WCAG 1.4.11 asks
 * 3:1 of graphics), so no bar fades into the background; the legend and the table name them too.
 */
export const RULE_COLORS: { readonly [id in RuleId]: string } = {
  'send-once': '#6b7280',
  'retry-oldest': '#c2410c',
  'random-retry': '#a16207',
  'retry-key': '#1d4ed8',
  'backoff-key': '#7c3aed',
  'learned-key': '#047857',
  'oncely-key': '#be123c',
};
