// The simulator's public surface. Pure and browser-safe: no node:*, no Date.now, no Math.random,
// so the page can bundle this file with esbuild and run a batch in a web worker.
export {
  DEFAULT_WORLD_PARAMS,
  WORLD_PARAM_NAMES,
  resolveWorldParams,
  type WorldParams,
} from './world-params.js';
export {
  RULES,
  RULE_IDS,
  RULE_CHOICES,
  RULE_TIMEOUTS,
  ruleById,
  type Rule,
  type RuleId,
  type RuleChoice,
  type RuleTimeout,
} from './rules.js';
export {
  runWorld,
  drawsFor,
  METRIC_NAMES,
  METRIC_TITLES,
  type MetricName,
  type WorldMetrics,
  type WorldOutcome,
  type RunWorldOptions,
} from './run-world.js';
export { MatchedDraws } from './matched-draws.js';
export { RoundTripEstimator } from './round-trip-estimator.js';
export { TRACE_KINDS, formatTraceJson, type TraceEvent, type TraceKind } from './trace.js';
export {
  BATCH_SETTINGS,
  BATCH_SETTING_IDS,
  batchSettingById,
  type BatchSetting,
  type BatchSettingId,
} from './batch-settings.js';
export { runBatch, DEFAULT_BATCH, type RunBatchOptions, type BatchResult } from './run-batch.js';
export {
  meansTable,
  findRow,
  MeansAccumulator,
  type BatchOutcome,
  type MeansRow,
} from './means-table.js';
export { checkClaims, type ClaimResult, type CheckClaimsOptions } from './claims.js';
export {
  closedForm,
  closedFormCheck,
  DEFAULT_CLOSED_FORM,
  type ClosedFormOptions,
  type ClosedFormResult,
  type PerJob,
} from './closed-form.js';
export {
  PUBLISHED_FIGURES,
  compareWithPublished,
  type PublishedFigure,
  type FigureComparison,
} from './published-figures.js';
export { outcomesToCsv, outcomesToJsonLines, meansToCsv } from './outcome-csv.js';
// The fleet simulator (apps/sim/fleet): many clients, one server.
export { EventQueue } from './fleet/event-queue.js';
export {
  runContention,
  contentionDelayMs,
  CONTENTION_STRATEGIES,
  CONTENTION_LABELS,
  DEFAULT_CONTENTION,
  type ContentionStrategy,
  type ContentionParams,
  type ContentionOutcome,
  type ContentionEvent,
} from './fleet/contention.js';
export {
  runDependency,
  retriesClosedForm,
  DEFAULT_DEPENDENCY,
  type DependencyParams,
  type DependencyOutcome,
} from './fleet/dependency.js';
export {
  runOverload,
  DEFAULT_OVERLOAD,
  RECOVERED_BUCKETS,
  RECOVERED_GOODPUT,
  type OverloadParams,
  type OverloadOutcome,
} from './fleet/overload.js';
export {
  FLEET_STRATEGIES,
  FLEET_LABELS,
  BROOKER_2022,
  ONCELY_FLEET_POLICY,
  clientStrategy,
  type FleetStrategy,
} from './fleet/fleet-strategies.js';
export {
  FLEET_MODELS,
  CONTENTION_CLIENTS,
  DEPENDENCY_FAILURE_RATES,
  DEPENDENCY_CLIENT_COUNTS,
  DEFAULT_FLEET_SEEDS,
  fleetCells,
  runCell,
  mean,
  sd,
  type FleetModel,
  type FleetCell,
  type CellResult,
  type MetricStats,
} from './fleet/fleet-batch.js';
export {
  summarizeFleet,
  fleetCsv,
  strategyLabel,
  type FleetRow,
  type FleetSummary,
} from './fleet/fleet-summary.js';
export { checkFleetClaims } from './fleet/fleet-claims.js';
export { formatFleetTables } from './fleet/fleet-tables.js';
