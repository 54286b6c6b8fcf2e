// An oxlint JS plugin with the one clock rule oxlint's own rules cannot say: `new Date()` and
// `Date()` with no arguments read the clock, while `new Date(ms)` only converts a number. The
// config (.oxlintrc.json) turns it on outside src/time, beside the restricted properties and
// globals that catch Date.now, Math.random and the timers.
const CLOCK_READ = 'read the injected Clock (src/time): only src/time touches the real clock';

/** Whether `node` is `Date(...)` or `new Date(...)` called with no arguments. */
function readsTheClock(node) {
  return (
    node.callee.type === 'Identifier' && node.callee.name === 'Date' && node.arguments.length === 0
  );
}

const noArgumentDate = {
  meta: { type: 'problem', docs: { description: 'new Date() and Date() read the clock' } },
  create(context) {
    const check = (node) => {
      if (!readsTheClock(node)) return;
      const call = node.type === 'NewExpression' ? 'new Date()' : 'Date()';
      context.report({ node, message: `${call} reads the clock: ${CLOCK_READ}` });
    };
    return { NewExpression: check, CallExpression: check };
  },
};

export default {
  meta: { name: 'oncely' },
  rules: { 'no-argument-date': noArgumentDate },
};
