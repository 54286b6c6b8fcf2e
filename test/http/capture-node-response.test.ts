import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CaptureFailure,
  captureNodeResponse,
  type CapturedResponse,
} from '#oncely/http/adapters/capture-node-response.js';
import type { AnswerBytes } from '#oncely/http/receipt-response.js';

const responseOf = (): ServerResponse => new ServerResponse(new IncomingMessage(new Socket()));
const text = (body: Uint8Array): string => Buffer.from(body).toString('utf8');

/** The route's answer; a failure is a test failure. */
async function answered(captured: CapturedResponse): Promise<AnswerBytes> {
  const answer = await captured.done;
  if (answer instanceof CaptureFailure) throw answer.error;
  return answer;
}

describe('captureNodeResponse', () => {
  it('keeps what the route writes and gives the response its own methods back', async () => {
    const res = responseOf();
    res.setHeader('x-before', 'kept');
    const captured = captureNodeResponse(res, ['x-before', 'x-route']);
    res.writeHead(201, { 'x-route': 'r', 'x-not-kept': 'n' });
    res.write('ab');
    res.end(Buffer.from('c'));
    const answer = await answered(captured);
    assert.equal(answer.status, 201);
    assert.equal(text(answer.body), 'abc');
    assert.deepEqual(answer.headers, [
      ['x-before', 'kept'],
      ['x-route', 'r'],
    ]);
    assert.equal(res.headersSent, false, 'nothing reached the socket');
    captured.restore(false);
    // The capturing methods stay, shared by every response of node's class (one hidden class for
    // all of them), and pass each call on once the capture has ended.
    const other = responseOf();
    captureNodeResponse(other, []).restore(false);
    for (const name of ['writeHead', 'flushHeaders', 'write', 'end'] as const)
      assert.equal(res[name], other[name], `${name} is one function for every response`);
    assert.ok(res instanceof ServerResponse);
    assert.deepEqual(res.getHeaderNames(), ['x-before'], "the route's headers are dropped");
    res.writeHead(200);
    res.end('sent');
    assert.equal(res.headersSent, true, 'once restored, its writes reach the response');
    assert.equal(res.writableEnded, true);
  });

  it("keeps the route's headers on the response for its own answer", async () => {
    const res = responseOf();
    res.setHeader('x-before', 'kept');
    const captured = captureNodeResponse(res, []);
    res.setHeader('x-route', ['a', 'b']);
    res.end('x');
    assert.deepEqual((await answered(captured)).headers, [], 'no header is on the allow-list');
    captured.restore(true);
    assert.deepEqual(res.getHeaderNames(), ['x-before', 'x-route']);
    res.end('x');
    assert.equal(res.writableEnded, true, "the route's answer goes out with its headers");
    assert.equal(res.getHeader('x-route')?.toString(), 'a,b');
  });

  it('captures one response twice, each capture its own answer', async () => {
    const res = responseOf();
    const first = captureNodeResponse(res, []);
    res.end('one');
    assert.equal(text((await answered(first)).body), 'one');
    first.restore(false);
    const second = captureNodeResponse(res, []);
    res.statusCode = 202;
    res.end('two');
    const answer = await answered(second);
    assert.equal(answer.status, 202);
    assert.equal(text(answer.body), 'two');
    assert.equal(res.headersSent, false);
  });

  it('captures, then puts back, a method earlier middleware set on the response itself', async () => {
    const res = responseOf();
    const calls: number[] = [];
    const ownWriteHead = function (this: ServerResponse, status: number) {
      calls.push(status);
      return ServerResponse.prototype.writeHead.call(this, status);
    };
    res.writeHead = ownWriteHead as typeof res.writeHead; // as on-headers does
    const captured = captureNodeResponse(res, []);
    res.writeHead(202);
    res.end('x');
    assert.equal((await answered(captured)).status, 202);
    assert.deepEqual(calls, [], "the middleware's writeHead waits for the final answer");
    captured.restore(false);
    assert.equal(res.writeHead, ownWriteHead);
    assert.equal(res.end, ServerResponse.prototype.end);
  });

  it('a failure settles the capture with it, and a later end does not replace it', async () => {
    const res = responseOf();
    const captured = captureNodeResponse(res, []);
    const error = new Error('client went away');
    captured.fail(error);
    res.end('too late');
    const answer = await captured.done;
    assert.ok(answer instanceof CaptureFailure);
    assert.equal(answer.error, error);
    captured.restore(false);
  });

  it('keeps a write made after the answer out of it, until restored', async () => {
    const res = responseOf();
    const captured = captureNodeResponse(res, []);
    const keptEnd = res.end.bind(res);
    res.end('first');
    let called = false;
    keptEnd('late', () => {
      called = true;
    });
    assert.equal(called, true, 'its callback still runs');
    assert.equal(text((await answered(captured)).body), 'first', 'the answer was taken at end');
    assert.equal(res.headersSent, false);
    captured.restore(false);
    keptEnd('after');
    assert.equal(res.writableEnded, true, "a kept method, once restored, is the response's own");
  });
});
