import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_WORLD_PARAMS, RULE_IDS, type RuleId, type WorldParams } from '#cli/sim/index.js';
import {
  PARAM_CONTROLS,
  cliCommandFor,
  describeParams,
  queryFromState,
  stateFromQuery,
} from '../../packages/cli/web/src/page-params.js';

/** A state the page's controls can hold: every parameter within its control's range. */
const stateArb = fc.record({
  params: fc.record(
    Object.fromEntries(
      PARAM_CONTROLS.map((c) => {
        const value =
          c.kind === 'probability'
            ? fc.constantFrom(0, 0.05, 0.2, 0.4, 0.5, 1)
            : fc.integer({ min: c.min, max: c.max });
        return [c.param, c.none ? fc.option(value, { nil: null }) : value];
      }),
    ) as unknown as { [K in keyof WorldParams]: fc.Arbitrary<WorldParams[K]> },
  ),
  rules: fc.subarray([...RULE_IDS], { minLength: 1 }),
});

test('a URL carries any state the controls can hold, and reads back to it', () => {
  fc.assert(
    fc.property(stateArb, (state) => {
      const read = stateFromQuery(queryFromState(state));
      assert.deepEqual(read.problems, []);
      assert.deepEqual(read.params, { ...state.params });
      assert.deepEqual(read.rules, state.rules);
    }),
  );
});

test('the URL names the seed and only what differs from the default; the CLI line matches it', () => {
  const state = {
    params: { ...DEFAULT_WORLD_PARAMS, seed: 7, retentionTicks: 8, forgetKeysAt: 40 },
    rules: ['retry-oldest', 'retry-key'] as RuleId[],
  };
  assert.equal(
    queryFromState(state),
    '?seed=7&retention=8&forget-at=40&rules=retry-oldest,retry-key',
  );
  assert.equal(
    cliCommandFor(state),
    'npx oncely sim run --seed 7 --retention 8 --forget-at 40 --rules retry-oldest,retry-key',
  );
  assert.equal(queryFromState({ params: DEFAULT_WORLD_PARAMS, rules: RULE_IDS }), '?seed=0');
  assert.equal(describeParams(state.params), 'Seed 7, key retention 8, forget keys 40');
  assert.equal(
    describeParams({ ...DEFAULT_WORLD_PARAMS, retentionTicks: null }),
    'Seed 0, the default channel',
  );
});

test('a link with policy=, the older name of rules=, still selects those rules', () => {
  const read = stateFromQuery('?seed=3&policy=retry-key,send-once');
  assert.deepEqual(read.problems, []);
  assert.deepEqual(read.rules, ['send-once', 'retry-key']);
  assert.equal(queryFromState(read), '?seed=3&rules=send-once,retry-key');
  assert.deepEqual(stateFromQuery('?rules=oncely-key&policy=send-once').rules, ['oncely-key']);
});

test('refused values are named with their range, and the defaults stand in', () => {
  const read = stateFromQuery(
    '?seed=-1&request-loss=1.5&retention=forever&jobs=2.5&rules=retry-key,nope&credits=24',
  );
  assert.deepEqual(
    read.problems.map((p) => p.message),
    [
      'Seed: got “-1”, expected an integer from 0 to 4294967295',
      'Request loss: got “1.5”, expected a probability from 0 to 1',
      'Key retention: got “forever”, expected an integer from 1 to 10000, or run',
      'Jobs: got “2.5”, expected an integer from 1 to 200',
      'Rules: got “retry-key,nope”, expected rule ids from send-once, retry-oldest, random-retry, retry-key, backoff-key, learned-key, oncely-key, or all',
    ],
  );
  assert.deepEqual(read.params, { ...DEFAULT_WORLD_PARAMS, credits: 24 });
  assert.deepEqual(read.rules, RULE_IDS);
  assert.deepEqual(
    stateFromQuery('?retention=run&forget-at=never&max-attempts=none').params,
    DEFAULT_WORLD_PARAMS,
  );
});
