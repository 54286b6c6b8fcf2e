import { endpointIdSchema as endpointId } from './endpoint-id.js';

/** JSON Schemas (2020-12, as OpenAPI 3.1 takes them) of the outbox API's bodies. */
const iso = { type: 'string', format: 'date-time' } as const;
const nullableIso = { type: ['string', 'null'], format: 'date-time' } as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const breaker = {
  type: 'object',
  additionalProperties: false,
  properties: {
    failureRatio: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    windowMs: { type: 'number', exclusiveMinimum: 0 },
    minRequests: { type: 'integer', minimum: 1 },
    coolDownMs: { type: 'number', exclusiveMinimum: 0 },
  },
};

const settings = {
  url: { type: 'string', format: 'uri' },
  ratePerSecond: { type: ['number', 'null'], exclusiveMinimum: 0 },
  breaker: ref('Breaker'),
  autoDisableAfterMs: { type: 'number', exclusiveMinimum: 0 },
  eventTypes: {
    type: ['array', 'null'],
    items: { type: 'string' },
    description: 'the event types it gets (`order.created`, `order.*`, `*`); null: every type',
  },
  channels: {
    type: ['array', 'null'],
    items: { type: 'string' },
    description: 'only messages tagged with one of these; null: every message',
  },
};

const intentStates = ['pending', 'delivered', 'refused', 'gave_up', 'unknown', 'cancelled'];

export const OPENAPI_SCHEMAS = {
  Problem: {
    type: 'object',
    description: 'RFC 9457 problem details',
    required: ['type', 'title', 'status', 'detail'],
    properties: {
      type: { type: 'string' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      code: { type: 'string' },
    },
  },
  Breaker: breaker,
  EndpointCreate: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'url'],
    properties: {
      id: endpointId,
      ...settings,
      secret: {
        type: 'string',
        pattern: '^whs(ec|k)_',
        description: 'default: a fresh one, answered once',
      },
    },
  },
  EndpointPatch: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: settings,
  },
  Endpoint: {
    type: 'object',
    required: ['id', 'url', 'state', 'ratePerSecond', 'breaker', 'health', 'secrets'],
    properties: {
      id: endpointId,
      url: { type: 'string' },
      state: { enum: ['active', 'paused', 'disabled'] },
      stateReason: { type: ['string', 'null'] },
      ratePerSecond: { type: ['number', 'null'] },
      breaker,
      autoDisableAfterMs: { type: 'number' },
      eventTypes: { type: ['array', 'null'], items: { type: 'string' } },
      channels: { type: ['array', 'null'], items: { type: 'string' } },
      health: {
        type: 'object',
        properties: {
          breaker: { enum: ['closed', 'open', 'half_open'] },
          slowed: { type: 'boolean' },
          deferredUntil: nullableIso,
          failingSince: nullableIso,
        },
      },
      secrets: {
        type: 'array',
        description: 'never the secrets themselves: when each stops signing',
        items: { type: 'object', properties: { expiresAt: nullableIso } },
      },
      createdAt: iso,
      updatedAt: iso,
    },
  },
  EndpointAnswer: {
    type: 'object',
    required: ['endpoint'],
    properties: {
      endpoint: ref('Endpoint'),
      secret: { type: 'string', description: 'a new or generated signing secret' },
    },
  },
  Reason: {
    type: 'object',
    additionalProperties: false,
    properties: { reason: { type: 'string', minLength: 1 } },
  },
  Rotation: {
    type: 'object',
    additionalProperties: false,
    properties: {
      secret: { type: 'string', pattern: '^whs(ec|k)_' },
      overlapMs: { type: 'number', minimum: 0, default: 86_400_000 },
    },
  },
  Retry: {
    type: 'object',
    additionalProperties: false,
    properties: { maxAttempts: { type: 'integer', minimum: 1 } },
  },
  Publish: {
    type: 'object',
    additionalProperties: false,
    description: 'one message to an endpoint or a URL; `payload` is sent as application/json',
    oneOf: [{ required: ['endpoint'] }, { required: ['url'] }],
    properties: {
      key: {
        type: 'string',
        description:
          'its key and webhook-id; default: derived from the caller and the Idempotency-Key',
      },
      endpoint: endpointId,
      url: { type: 'string', format: 'uri' },
      method: { type: 'string', default: 'POST' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      payload: { description: 'any JSON value' },
      body: { type: 'string' },
      maxAttempts: { type: 'integer', minimum: 1 },
      deadline: iso,
      attemptTimeoutMs: { type: 'number', exclusiveMinimum: 0 },
      orderingKey: { type: 'string' },
    },
  },
  PublishRequest: {
    description:
      'one message to an endpoint or a URL (Publish), or a message by event type for every subscribed endpoint (PublishEvent)',
    oneOf: [ref('Publish'), ref('PublishEvent')],
  },
  PublishEvent: {
    type: 'object',
    additionalProperties: false,
    required: ['eventType'],
    description:
      'fanned out to every endpoint subscribed to its type (and channels): one intent each, keyed `<id>:<endpoint>`, sent as the Standard Webhooks payload {type, timestamp, data}',
    properties: {
      eventType: { type: 'string', description: '`order.created`' },
      payload: { description: 'the event data, any JSON value' },
      id: {
        type: 'string',
        description:
          'the message id, without ":"; default: derived from the caller and the Idempotency-Key',
      },
      channels: { type: 'array', items: { type: 'string' } },
      deadline: iso,
    },
  },
  EventPublished: {
    type: 'object',
    required: ['id', 'eventType', 'endpoints', 'created'],
    properties: {
      id: { type: 'string' },
      eventType: { type: 'string' },
      endpoints: {
        type: 'array',
        items: { type: 'string' },
        description: 'the endpoints it went to',
      },
      created: { type: 'integer', description: 'intents this call recorded' },
    },
  },
  Message: {
    type: 'object',
    required: ['key', 'target', 'state', 'attempts'],
    properties: {
      key: { type: 'string' },
      method: { type: 'string' },
      target: { type: 'string' },
      endpoint: { type: ['string', 'null'], description: 'the endpoint it goes to, if any' },
      state: { enum: intentStates },
      attempts: { type: 'integer' },
      maxAttempts: { type: 'integer' },
      sawUnknown: { type: 'boolean' },
      createdAt: iso,
      nextAttemptAt: nullableIso,
      finishedAt: nullableIso,
      stopReason: { type: ['string', 'null'] },
      status: { type: ['integer', 'null'] },
      detail: { type: ['string', 'null'] },
    },
  },
  Attempt: {
    type: 'object',
    properties: {
      attempt: { type: 'integer' },
      worker: { type: 'string' },
      startedAt: iso,
      endedAt: nullableIso,
      durationMs: {
        type: ['number', 'null'],
        description: 'how long the request took, send to answer or failure',
      },
      outcome: { enum: ['ok', 'retry', 'fail', 'unknown', null] },
      status: { type: ['integer', 'null'] },
      detail: { type: ['string', 'null'], description: 'the error, when no response came' },
      delayMs: { type: ['number', 'null'] },
      response: { oneOf: [ref('AttemptResponse'), { type: 'null' }] },
    },
  },
  AttemptResponse: {
    type: 'object',
    description:
      "what the journal keeps of an attempt's response: its headers and the first 4 KiB of its body",
    required: ['headers', 'body', 'bodyBase64', 'bodyBytes', 'truncated'],
    properties: {
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      body: { type: ['string', 'null'], description: 'the kept bytes as text; null unless UTF-8' },
      bodyBase64: { type: 'string', contentEncoding: 'base64' },
      bodyBytes: { type: 'integer', minimum: 0, maximum: 4096 },
      truncated: {
        type: 'boolean',
        description: 'the body was longer than 4 KiB, or a header was left out or shortened',
      },
    },
  },
  MessageDetail: {
    allOf: [
      ref('Message'),
      {
        type: 'object',
        properties: {
          headers: { type: 'object', additionalProperties: { type: 'string' } },
          payload: { type: ['string', 'null'], description: 'the first 4 KiB' },
          payloadBytes: { type: 'integer' },
          receipt: { type: ['string', 'null'] },
          attemptList: { type: 'array', items: ref('Attempt') },
        },
      },
    ],
  },
  ReplayRequest: {
    type: 'object',
    additionalProperties: false,
    properties: {
      key: { type: 'string' },
      state: {
        oneOf: [{ enum: intentStates }, { type: 'array', items: { enum: intentStates } }],
      },
      target: { type: 'string' },
      targetPrefix: { type: 'string' },
      endpoint: endpointId,
      since: { type: 'string', description: 'an ISO instant or a date' },
      all: { type: 'boolean' },
      dryRun: { type: 'boolean' },
      maxAttempts: { type: 'integer', minimum: 1 },
    },
  },
  ReplayResult: {
    type: 'object',
    properties: {
      dryRun: { type: 'boolean' },
      selected: { type: 'array', items: ref('Message') },
      reopened: { type: 'array', items: { type: 'string' } },
      skipped: { type: 'array', items: { type: 'string' } },
    },
  },
} as const;
