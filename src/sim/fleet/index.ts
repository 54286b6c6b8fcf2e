// The fleet simulator: many clients, one server, oncely's policy step among the strategies.
// Pure and browser-safe like the rest of src/sim.
export { EventQueue } from './event-queue.js';
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
} from './contention.js';
export {
  runDependency,
  retriesClosedForm,
  DEFAULT_DEPENDENCY,
  type DependencyParams,
  type DependencyOutcome,
} from './dependency.js';
export {
  runOverload,
  DEFAULT_OVERLOAD,
  RECOVERED_BUCKETS,
  RECOVERED_GOODPUT,
  type OverloadParams,
  type OverloadOutcome,
} from './overload.js';
export {
  FLEET_STRATEGIES,
  FLEET_LABELS,
  BROOKER_2022,
  ONCELY_FLEET_POLICY,
  clientStrategy,
  type FleetStrategy,
} from './fleet-strategies.js';
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
} from './fleet-batch.js';
export {
  summarizeFleet,
  fleetCsv,
  strategyLabel,
  type FleetRow,
  type FleetSummary,
} from './fleet-summary.js';
export { checkFleetClaims } from './fleet-claims.js';
export { formatFleetTables } from './fleet-tables.js';
