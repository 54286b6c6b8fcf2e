import { isOncelyError, OncelyError } from '../contract/errors.js';

/**
 * A retry called a step other than the one its request recorded at that place: the handler's
 * steps are not the same on every retry (a name built from the clock or from a result, a branch
 * that changed). Thrown instead of running the step, because running it would be a guess: the
 * recorded work might be redone, or skipped where it is needed. The request stays resumable
 * once the handler calls its steps as it first did; `position` counts from 0.
 */
export class StepMismatchError extends OncelyError {
  readonly position: number;
  readonly recorded: string | undefined;
  readonly called: string;

  constructor(position: number, recorded: string | undefined, called: string, where?: number) {
    super(
      'step_mismatch',
      recorded === undefined
        ? `step "${called}" is called as step ${position + 1}, but this request recorded it as step ${(where ?? 0) + 1}: a request must call its steps in the same order on every retry`
        : `step ${position + 1} of this request was recorded as "${recorded}", and this retry calls "${called}" there: a request must call the same steps in the same order on every retry`,
    );
    this.name = 'StepMismatchError';
    this.position = position;
    this.recorded = recorded;
    this.called = called;
  }
}

export function isStepMismatchError(value: unknown): value is StepMismatchError {
  return isOncelyError(value) && value.code === 'step_mismatch';
}
