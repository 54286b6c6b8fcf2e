import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import {
  nextScriptAction,
  parseHookScript,
  SCRIPT_START,
  type ScriptAction,
} from '#cli/receivers/hook/hook-script.js';

/** Plays a script against arrivals at the given instants and lists what each got. */
function play(text: string, instants: readonly number[]): string[] {
  const script = parseHookScript(text);
  let cursor = SCRIPT_START;
  return instants.map((at) => {
    let action: ScriptAction;
    [action, cursor] = nextScriptAction(script, cursor, at);
    return action.kind === 'swallow'
      ? 'swallow'
      : `${action.status}${action.retryAfterSeconds === undefined ? '' : `@${action.retryAfterSeconds}`}`;
  });
}

test('the webhook storm script: three 429s with Retry-After 1, then 200 for ever', () => {
  assert.deepEqual(play('429@1x3,200', [0, 1, 2, 3, 4, 5]), [
    '429@1',
    '429@1',
    '429@1',
    '200',
    '200',
    '200',
  ]);
});

test('503x2,200 and a lone 400 that repeats', () => {
  assert.deepEqual(play('503x2,200', [0, 0, 0]), ['503', '503', '200']);
  assert.deepEqual(play('400', [0, 0, 0]), ['400', '400', '400']);
});

test('swallow then 200', () => {
  assert.deepEqual(play('swallow,200', [0, 0, 0]), ['swallow', '200', '200']);
});

test('throttle answers 429 with the seconds left, rounded up, until the window after the first hit', () => {
  // First hit at 1000: the window ends at 3000.
  assert.deepEqual(play('throttle:2s,201', [1000, 1050, 2100, 2999, 3000, 3001]), [
    '429@2',
    '429@2',
    '429@1',
    '429@1',
    '201',
    '201',
  ]);
  assert.deepEqual(play('throttle:500ms', [0, 499, 500]), ['429@1', '429@1', '200']);
});

test('a script is normalised, and a bad step is named in the error', () => {
  assert.equal(parseHookScript(' 429@1X3 , 200 ').text, '429@1x3,200');
  assert.equal(parseHookScript('throttle:1500ms,swallowx2').text, 'throttle:1500ms,swallowx2');
  for (const bad of ['', '42', '429x0', '700', 'throttle:0s', 'nope', '200,,200']) {
    assert.throws(
      () => parseHookScript(bad),
      (e) => isInvalidOptionError(e) && e.option === 'script',
      bad,
    );
  }
  assert.throws(() => parseHookScript('200,teapot'), /step "teapot" is not understood/);
});
