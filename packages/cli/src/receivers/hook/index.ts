export {
  createHookService,
  DEFAULT_HOOK_OPTIONS,
  HIT_ANSWERS,
  HOOK_METHODS,
  RETRY_AFTER_FORMATS,
  type ConnectionControl,
  type HitAnswer,
  type HookCounts,
  type HookHit,
  type HookRoute,
  type HookService,
  type HookServiceOptions,
  type RetryAfterFormat,
} from './hook-service.js';
export {
  setUpHookHits,
  insertHit,
  listHitsPage,
  countHits,
  clearHits,
  purgeHits,
  HOOK_HITS_TABLE,
} from './hook-hits-table.js';
export {
  startHookServer,
  nodeListener,
  type HookServer,
  type HookServerOptions,
} from './hook-server.js';
export {
  parseHookScript,
  formatStep,
  nextScriptAction,
  SCRIPT_START,
  HOOK_SCRIPT_GRAMMAR,
  type HookScript,
  type HookStep,
  type ScriptAction,
  type ScriptCursor,
} from './hook-script.js';
export { formatHit, type FormatHitOptions } from './format-hit.js';
