import { endpointIdSchema } from './endpoint-id.js';
import { OPENAPI_SCHEMAS } from './openapi-schemas.js';

/**
 * The outbox API's OpenAPI 3.1 document, served at GET /openapi.json. Written by hand beside the
 * routes; test/apps/outbox-api validates it against the OpenAPI 3.1 schema and checks that every
 * route answers as it says.
 */
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref('Problem') } },
});
const ok = (description: string, schema: object) => ({ description, ...json(schema) });
const idParam = { $ref: '#/components/parameters/EndpointId' };
const keyParam = { $ref: '#/components/parameters/MessageKey' };
const idempotencyKey = { $ref: '#/components/parameters/IdempotencyKey' };

/** The answers every write may give besides its own: bad input, and the ledger's. */
const writeProblems = {
  '400': problem('no Idempotency-Key, or a body that is not JSON'),
  '401': problem('no bearer token, or an unknown one'),
  '409': problem('the same key still in flight, or a state that forbids the change'),
  '415': problem('a body that is not application/json'),
  '422': problem('a field refused, or the same key with another body'),
};

/** A write: its Idempotency-Key, its body (optional for actions), its answer. */
function write(
  summary: string,
  operationId: string,
  answer: object,
  body?: { schema: string; required: boolean },
  extra: readonly object[] = [],
) {
  return {
    summary,
    operationId,
    parameters: [...extra, idempotencyKey],
    ...(body ? { requestBody: { required: body.required, ...json(ref(body.schema)) } } : {}),
    responses: { ...answer, ...writeProblems, '404': problem('no such endpoint or message') },
  };
}

const endpointAnswer = { '200': ok('the endpoint', ref('EndpointAnswer')) };
const messageAnswer = {
  '200': ok('the message', { type: 'object', properties: { message: ref('Message') } }),
};
const action = (verb: string, id: string, body?: string) => ({
  post: write(verb, id, endpointAnswer, body ? { schema: body, required: false } : undefined, [
    idParam,
  ]),
});

export const OPENAPI_DOCUMENT = {
  openapi: '3.1.0',
  info: {
    title: 'oncely outbox API',
    version: '1',
    description:
      'Publish messages, manage endpoints and replay dead letters on the journal the outbox workers send from. Every write needs its own Idempotency-Key: a retry with it is answered from the stored receipt.',
  },
  security: [{ bearer: [] }],
  paths: {
    '/v1/endpoints': {
      get: {
        summary: 'list endpoints',
        operationId: 'listEndpoints',
        responses: {
          '200': ok('every endpoint', {
            type: 'object',
            properties: { endpoints: { type: 'array', items: ref('Endpoint') } },
          }),
          '401': problem('no bearer token, or an unknown one'),
        },
      },
      post: write(
        'create an endpoint',
        'createEndpoint',
        { '201': ok('created; `secret` when one was generated', ref('EndpointAnswer')) },
        { schema: 'EndpointCreate', required: true },
      ),
    },
    '/v1/endpoints/{id}': {
      parameters: [idParam],
      get: {
        summary: 'one endpoint',
        operationId: 'getEndpoint',
        responses: {
          ...endpointAnswer,
          '401': problem('no bearer token, or an unknown one'),
          '404': problem('no such endpoint'),
        },
      },
      patch: write('edit an endpoint', 'updateEndpoint', endpointAnswer, {
        schema: 'EndpointPatch',
        required: true,
      }),
      delete: write(
        'delete an endpoint; its pending messages are cancelled',
        'deleteEndpoint',
        {
          '200': ok('deleted', {
            type: 'object',
            properties: { deleted: { type: 'string' }, cancelled: { type: 'integer' } },
          }),
        },
        { schema: 'Reason', required: false },
      ),
    },
    '/v1/endpoints/{id}/pause': action('hold its messages', 'pauseEndpoint', 'Reason'),
    '/v1/endpoints/{id}/resume': action('a paused endpoint sends again', 'resumeEndpoint'),
    '/v1/endpoints/{id}/disable': action('stop it until enabled', 'disableEndpoint', 'Reason'),
    '/v1/endpoints/{id}/enable': action('a disabled endpoint sends again', 'enableEndpoint'),
    '/v1/endpoints/{id}/rotate-secret': action('add a signing secret', 'rotateSecret', 'Rotation'),
    '/v1/messages': {
      get: {
        summary: 'list messages, newest first',
        operationId: 'listMessages',
        parameters: ['state', 'endpoint', 'target', 'targetPrefix', 'since', 'after', 'limit'].map(
          (name) => ({ name, in: 'query', required: false, schema: { type: 'string' } }),
        ),
        responses: {
          '200': ok('a page; `next` is the `after` of the next one', {
            type: 'object',
            properties: {
              messages: { type: 'array', items: ref('Message') },
              next: { type: ['string', 'null'] },
            },
          }),
          '400': problem('a bad query parameter'),
          '401': problem('no bearer token, or an unknown one'),
        },
      },
      post: write(
        'publish a message',
        'publishMessage',
        {
          '201': ok('recorded (by event type: intents recorded for subscribed endpoints)', {
            type: 'object',
            properties: { message: { oneOf: [ref('Message'), ref('EventPublished')] } },
          }),
          '200': ok(
            'recorded already with this send (by event type: nothing new recorded, or no endpoint subscribed)',
            {
              type: 'object',
              properties: { message: { oneOf: [ref('Message'), ref('EventPublished')] } },
            },
          ),
        },
        { schema: 'PublishRequest', required: true },
      ),
    },
    '/v1/messages/{key}': {
      parameters: [keyParam],
      get: {
        summary: 'one message with every attempt',
        operationId: 'getMessage',
        responses: {
          '200': ok('the message', {
            type: 'object',
            properties: { message: ref('MessageDetail') },
          }),
          '401': problem('no bearer token, or an unknown one'),
          '404': problem('no such message'),
        },
      },
    },
    '/v1/messages/{key}/attempts': {
      parameters: [keyParam],
      get: {
        summary: "a message's attempts",
        operationId: 'listAttempts',
        responses: {
          '200': ok('its attempts, first to last', {
            type: 'object',
            properties: { attempts: { type: 'array', items: ref('Attempt') } },
          }),
          '401': problem('no bearer token, or an unknown one'),
          '404': problem('no such message'),
        },
      },
    },
    '/v1/messages/{key}/cancel': {
      post: write(
        'cancel a pending message',
        'cancelMessage',
        messageAnswer,
        { schema: 'Reason', required: false },
        [keyParam],
      ),
    },
    '/v1/messages/{key}/replay': {
      post: write(
        'replay a dead message under its key',
        'replayMessage',
        messageAnswer,
        { schema: 'Retry', required: false },
        [keyParam],
      ),
    },
    '/v1/replay': {
      post: write(
        'replay dead messages by filter',
        'replay',
        {
          '200': ok('what was selected and reopened (a `key` answers its message)', {
            oneOf: [
              ref('ReplayResult'),
              { type: 'object', properties: { message: ref('Message') } },
            ],
          }),
        },
        { schema: 'ReplayRequest', required: true },
      ),
    },
  },
  components: {
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'a token of --tokens-file or ONCELY_TOKENS',
      },
    },
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: true,
        description: 'one per write; a retry sends the same one',
        schema: { type: 'string', minLength: 1 },
      },
      EndpointId: {
        name: 'id',
        in: 'path',
        required: true,
        schema: endpointIdSchema,
      },
      MessageKey: { name: 'key', in: 'path', required: true, schema: { type: 'string' } },
    },
    schemas: OPENAPI_SCHEMAS,
  },
} as const;
