// langfuse.mjs - a Langfuse ingestion receiver that checks events as Langfuse's server does.
//
// POST /api/public/ingestion, Basic auth (public:secret) checked against the
// key pairs given; the body is {batch: [...], metadata} and every event is
// validated with zod schemas transcribed from Langfuse's own server-side
// ingestion types:
//   langfuse/langfuse packages/shared/src/server/ingestion/types.ts
//     (commit 0391b9a26333d7774363bb15a44b169435c7ee51): idSchema, Usage /
//     MixedUsage / usage, stringDateTime, CostDetails, UsageDetails (the
//     OpenAI completion and response shapes or a raw record), environment,
//     TraceBody, OptionalObservationBody, CreateSpanBody, CreateGenerationBody
//     (with its promptName/promptVersion refinement), the event envelope and
//     the discriminated union on "type";
//   packages/shared/src/utils/zod.ts (commit 01a52a17f32979e3cce4aefe27a30793d00f5a70): jsonSchema;
//   web/src/pages/api/public/ingestion.ts: the batch shape, 207 {successes, errors}.
// Like Langfuse it answers 207 with a success (201) or an error (400, "Invalid
// request data" and the zod issues) per event, 401 for wrong keys, 400 for a
// body that is not a batch. It can be told to fail: fail(status, n) answers
// the next n requests with status; rejectNext(n) refuses the next n events in
// a 207 (status 400).
import http from 'node:http';
import { once } from 'node:events';
import { z } from 'zod/v4';

// ---- packages/shared/src/utils/zod.ts -----------------------------------------
const rootLiteralSchema = z.union([z.string(), z.number(), z.boolean()]);
const nestedLiteralSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const jsonSchemaNullable = z.lazy(() =>
  z.union([z.array(jsonSchemaNullable), z.record(z.string(), jsonSchemaNullable), nestedLiteralSchema]));
const jsonSchema = z.lazy(() =>
  z.union([z.array(jsonSchemaNullable), z.record(z.string(), jsonSchemaNullable), rootLiteralSchema]));

// ---- packages/shared/src/server/ingestion/types.ts --------------------------------
const idSchema = z.string().min(1).max(800)
  .refine((id) => !id.includes('\r'), { message: 'ID cannot contain carriage return characters' });
const ObservationLevel = z.enum(['DEBUG', 'DEFAULT', 'WARNING', 'ERROR']);
const ModelUsageUnit = ['CHARACTERS', 'TOKENS', 'MILLISECONDS', 'SECONDS', 'IMAGES', 'REQUESTS'];
const Usage = z.object({
  input: z.number().int().nullish(),
  output: z.number().int().nullish(),
  total: z.number().int().nullish(),
  unit: z.enum(ModelUsageUnit).nullish(),
  inputCost: z.number().nullish(),
  outputCost: z.number().nullish(),
  totalCost: z.number().nullish(),
});
const MixedUsage = z.object({
  input: z.number().int().nullish(),
  output: z.number().int().nullish(),
  total: z.number().int().nullish(),
  unit: z.enum(ModelUsageUnit).nullish(),
  promptTokens: z.number().int().nullish(),
  completionTokens: z.number().int().nullish(),
  totalTokens: z.number().int().nullish(),
  inputCost: z.number().nullish(),
  outputCost: z.number().nullish(),
  totalCost: z.number().nullish(),
});
const stringDateTime = z.string().datetime({ offset: true }).nullish();
const usage = MixedUsage.nullish()
  .transform((v) => {
    if (!v) return null;
    if ('promptTokens' in v || 'completionTokens' in v || 'totalTokens' in v) {
      return { input: v.promptTokens, output: v.completionTokens, total: v.totalTokens, unit: 'TOKENS' };
    }
    if (Object.keys(v).length === 0) return undefined;
    return v;
  })
  .pipe(Usage.nullish());
const CostDetails = z.record(z.string(), z.number().nonnegative().nullish()).nullish();
const RawUsageDetails = z.record(z.string(), z.number().int().nonnegative().nullish());
const OpenAICompletionUsageSchema = z.object({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
  prompt_tokens_details: z.record(z.string(), z.number().int().nonnegative().nullish()).nullish(),
  completion_tokens_details: z.record(z.string(), z.number().int().nonnegative().nullish()).nullish(),
}).strict();
const OpenAIResponseUsageSchema = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
  input_tokens_details: z.record(z.string(), z.number().int().nonnegative().nullish()).nullish(),
  output_tokens_details: z.record(z.string(), z.number().int().nonnegative().nullish()).nullish(),
}).strict();
const UsageDetails = z.union([OpenAICompletionUsageSchema, OpenAIResponseUsageSchema, RawUsageDetails]).nullish();
const PublicEnvironmentName = z.string().max(40, 'Maximum length is 40 characters')
  .regex(/^(?!langfuse)[a-z0-9-_]+$/).default('default');

const TraceBody = z.object({
  id: idSchema.nullish(),
  timestamp: stringDateTime,
  name: z.string().max(1000).nullish(),
  externalId: z.string().nullish(),
  input: z.any().nullish(),
  output: z.any().nullish(),
  sessionId: z.string().nullish(),
  userId: z.string().nullish(),
  environment: PublicEnvironmentName,
  metadata: jsonSchema.nullish(),
  release: z.string().nullish(),
  version: z.string().nullish(),
  public: z.boolean().nullish(),
  tags: z.array(z.string()).nullish(),
});
const OptionalObservationBody = z.object({
  traceId: idSchema.nullish(),
  environment: PublicEnvironmentName,
  name: z.string().nullish(),
  startTime: stringDateTime,
  metadata: jsonSchema.nullish(),
  input: z.any().nullish(),
  output: z.any().nullish(),
  level: ObservationLevel.nullish(),
  statusMessage: z.string().nullish(),
  parentObservationId: z.string().nullish(),
  version: z.string().nullish(),
});
const CreateEventEvent = OptionalObservationBody.extend({ id: idSchema });
const CreateSpanBody = CreateEventEvent.extend({ endTime: stringDateTime });
const CreateGenerationBody = CreateSpanBody.extend({
  completionStartTime: stringDateTime,
  model: z.string().nullish(),
  modelParameters: z.record(z.string(), z.union([
    z.string(), z.number(), z.boolean(), z.array(z.string()), z.record(z.string(), z.string()),
  ]).nullish()).nullish(),
  usage,
  usageDetails: UsageDetails,
  costDetails: CostDetails,
  promptName: z.string().nullish(),
  promptVersion: z.number().int().nullish(),
}).refine((v) => (!v.promptName && !v.promptVersion) || (v.promptName && v.promptVersion));
const base = z.object({
  id: idSchema,
  timestamp: z.string().datetime({ offset: true }),
  metadata: jsonSchema.nullish(),
});
export const ingestionEvent = z.discriminatedUnion('type', [
  base.extend({ type: z.literal('trace-create'), body: TraceBody }),
  base.extend({ type: z.literal('event-create'), body: CreateEventEvent }),
  base.extend({ type: z.literal('span-create'), body: CreateSpanBody }),
  base.extend({ type: z.literal('generation-create'), body: CreateGenerationBody }),
  base.extend({ type: z.literal('sdk-log'), body: z.object({ log: jsonSchema, id: z.string().nullish() }) }),
]);

// ---- web/src/pages/api/public/ingestion.ts: the batch -------------------------------
const batchType = z.object({ batch: z.array(z.unknown()), metadata: jsonSchema.nullish() });

/** Start a receiver accepting the given {publicKey, secretKey} pairs. Returns
 * {url, port, events, requests, invalid, fail(status, n), rejectNext(n), stop()}:
 * events are the accepted events ({...event, publicKey}), requests every
 * request seen ({status, publicKey, headers, body}), invalid the refused events
 * with their zod issues. */
export async function startLangfuse(keys = [{ publicKey: 'pk-lf-test', secretKey: 'sk-lf-test' }]) {
  const state = { events: [], requests: [], invalid: [], failNext: 0, failStatus: 500, rejectNext: 0 };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const answer = (status, obj, publicKey = null) => {
        state.requests.push({ status, publicKey, headers: req.headers, body: text });
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(obj));
      };
      if (req.method !== 'POST' || req.url !== '/api/public/ingestion') {
        return answer(404, { message: 'not found' });
      }
      const auth = req.headers.authorization || '';
      const m = /^Basic (.+)$/.exec(auth);
      const [pk, ...rest] = m ? Buffer.from(m[1], 'base64').toString('utf8').split(':') : [];
      const sk = rest.join(':');
      const pair = keys.find((k) => k.publicKey === pk && k.secretKey === sk);
      if (!pair) return answer(401, { error: 'UnauthorizedError', message: 'Invalid credentials' });
      if (state.failNext > 0) {
        state.failNext--;
        return answer(state.failStatus, { message: 'told to fail' }, pk);
      }
      if (!/^application\/json/.test(req.headers['content-type'] || '')) {
        return answer(400, { message: 'Invalid request data', errors: ['content-type'] }, pk);
      }
      let body;
      try { body = JSON.parse(text); } catch {
        return answer(400, { message: 'Invalid request data', errors: ['not JSON'] }, pk);
      }
      const parsed = batchType.safeParse(body);
      if (!parsed.success) {
        return answer(400, { message: 'Invalid request data', errors: parsed.error.issues.map((i) => i.message) }, pk);
      }
      const successes = [], errors = [];
      for (const ev of parsed.data.batch) {
        const id = ev && typeof ev.id === 'string' ? ev.id : 'unknown';
        if (state.rejectNext > 0) {
          state.rejectNext--;
          errors.push({ id, status: 400, message: 'Invalid request data', error: 'told to refuse' });
          continue;
        }
        const r = ingestionEvent.safeParse(ev);
        if (r.success) {
          state.events.push({ ...ev, publicKey: pk, batchMetadata: parsed.data.metadata });
          successes.push({ id, status: 201 });
        } else {
          state.invalid.push({ event: ev, issues: r.error.issues });
          errors.push({ id, status: 400, message: 'Invalid request data', error: r.error.issues });
        }
      }
      answer(207, { successes, errors }, pk);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    events: state.events,
    requests: state.requests,
    invalid: state.invalid,
    fail(status, n) { state.failStatus = status; state.failNext = n; },
    rejectNext(n) { state.rejectNext = n; },
    /** The trace and generation events of a trace id. */
    byTrace(traceId) {
      return {
        trace: state.events.find((e) => e.type === 'trace-create' && e.body.id === traceId),
        generation: state.events.find((e) => e.type === 'generation-create' && e.body.traceId === traceId),
      };
    },
    async stop() { server.closeAllConnections?.(); server.close(); },
  };
}
