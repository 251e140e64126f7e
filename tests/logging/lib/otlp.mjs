// otlp.mjs - an OTLP/HTTP trace receiver that checks what the otel sink sends
// with the ecosystem's own code.
//
//   const rx = await startOtlp();
//   rx.base                      http://127.0.0.1:<port> (OTEL_EXPORTER_OTLP_ENDPOINT)
//   rx.posts                     [{contentType, headers, body (Buffer), spans, error, status}]
//   rx.spans()                   every span received, normalised (below), in order
//   await rx.waitSpans(pred, n, ms)  true when n spans matching pred arrived within ms
//   await rx.stop()
//
// POST /v1/traces only. application/x-protobuf is decoded with protobufjs
// from the message definitions of opentelemetry-proto (below, field for field
// from opentelemetry/proto/{common,resource,trace}/v1/*.proto and
// collector/trace/v1/trace_service.proto), after a strict walk of the bytes:
// a field number the definition does not have, or a wire type that is not the
// field's, is rejected (protobufjs itself would skip it silently).
// application/json is OTLP/JSON: every object checked for unknown members,
// ids as hex of the right length, 64-bit integers as decimal strings, enums as
// integers. Anything else (another path, method or content type, bytes that
// do not decode) is answered 400/404/405/415 and kept with its error.
//
// A normalised span: {traceId, spanId, parentSpanId ('' when none), name,
// kind, flags, start, end (BigInt ns), attributes {key: value}, events
// [{name, time, attributes}], status {code, message}, resource {key: value},
// scope {name, version}}. Values: string, boolean, Number for int64 within
// 2^53 and doubles (BigInt beyond), arrays and objects for array/kvlist.
//
// toReadableSpans(spans) rebuilds the SDK's ReadableSpan objects so the tests
// can serialise the same spans with @opentelemetry/otlp-transformer's own
// ProtobufTraceSerializer / JsonTraceSerializer and compare.
import http from 'node:http';
import { once } from 'node:events';
import protobuf from 'protobufjs';

const PROTO = `
syntax = "proto3";
package opentelemetry.proto;

// common/v1/common.proto
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
message EntityRef {
  string schema_url = 1;
  string type = 2;
  repeated string id_keys = 3;
  repeated string description_keys = 4;
}

// resource/v1/resource.proto
message Resource {
  repeated KeyValue attributes = 1;
  uint32 dropped_attributes_count = 2;
  repeated EntityRef entity_refs = 3;
}

// trace/v1/trace.proto
message ResourceSpans {
  Resource resource = 1;
  repeated ScopeSpans scope_spans = 2;
  string schema_url = 3;
}
message ScopeSpans {
  InstrumentationScope scope = 1;
  repeated Span spans = 2;
  string schema_url = 3;
}
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  fixed32 flags = 16;
  string name = 5;
  enum SpanKind {
    SPAN_KIND_UNSPECIFIED = 0;
    SPAN_KIND_INTERNAL = 1;
    SPAN_KIND_SERVER = 2;
    SPAN_KIND_CLIENT = 3;
    SPAN_KIND_PRODUCER = 4;
    SPAN_KIND_CONSUMER = 5;
  }
  SpanKind kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  message Event {
    fixed64 time_unix_nano = 1;
    string name = 2;
    repeated KeyValue attributes = 3;
    uint32 dropped_attributes_count = 4;
  }
  repeated Event events = 11;
  uint32 dropped_events_count = 12;
  message Link {
    bytes trace_id = 1;
    bytes span_id = 2;
    string trace_state = 3;
    repeated KeyValue attributes = 4;
    uint32 dropped_attributes_count = 5;
    fixed32 flags = 6;
  }
  repeated Link links = 13;
  uint32 dropped_links_count = 14;
  Status status = 15;
}
message Status {
  reserved 1;
  string message = 2;
  enum StatusCode {
    STATUS_CODE_UNSET = 0;
    STATUS_CODE_OK = 1;
    STATUS_CODE_ERROR = 2;
  }
  StatusCode code = 3;
}

// collector/trace/v1/trace_service.proto
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;

const root = protobuf.parse(PROTO, { keepCase: true }).root;
export const ExportTraceServiceRequest = root.lookupType('opentelemetry.proto.ExportTraceServiceRequest');

// The wire type protobuf gives a field of this type.
function wireType(field) {
  if (field.resolvedType instanceof protobuf.Type) return 2;
  switch (field.type) {
    case 'string': case 'bytes': return 2;
    case 'fixed64': case 'sfixed64': case 'double': return 1;
    case 'fixed32': case 'sfixed32': case 'float': return 5;
    default: return 0; // varints and enums
  }
}

// Walk the bytes of a message of type t: every field known, with its wire type; submessages too.
export function strictCheck(t, buf, path = t.name) {
  t.resolveAll();
  const r = protobuf.Reader.create(buf);
  while (r.pos < r.len) {
    const tag = r.uint32();
    const id = tag >>> 3, wt = tag & 7;
    const f = t.fieldsById[id];
    if (!f) throw new Error(`${path}: unknown field ${id} (wire type ${wt})`);
    const want = wireType(f);
    if (wt !== want) throw new Error(`${path}.${f.name}: wire type ${wt}, expected ${want}`);
    if (wt === 2 && f.resolvedType instanceof protobuf.Type) {
      strictCheck(f.resolvedType, r.bytes(), `${path}.${f.name}`);
    } else if (wt === 2 && f.type === 'string') {
      const b = r.bytes();
      const s = Buffer.from(b).toString('utf8');
      if (!Buffer.from(s, 'utf8').equals(Buffer.from(b))) throw new Error(`${path}.${f.name}: not UTF-8`);
    } else {
      r.skipType(wt);
    }
  }
}

const hex = (b) => Buffer.from(b ?? []).toString('hex');
const big = (v) => (v == null ? 0n : typeof v === 'bigint' ? v : BigInt(v.toString()));
const num = (v) => { const b = big(v); return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b; };

function anyValue(v) {
  if (v == null) return undefined;
  if ('string_value' in v) return v.string_value;
  if ('bool_value' in v) return v.bool_value;
  if ('int_value' in v) return num(v.int_value);
  if ('double_value' in v) return v.double_value;
  if ('array_value' in v) return (v.array_value.values ?? []).map(anyValue);
  if ('kvlist_value' in v) return kvs(v.kvlist_value.values);
  if ('bytes_value' in v) return Buffer.from(v.bytes_value);
  return undefined;
}
function kvs(list) {
  const o = {};
  for (const kv of list ?? []) {
    if (Object.hasOwn(o, kv.key)) throw new Error(`attribute ${kv.key} twice`);
    o[kv.key] = anyValue(kv.value);
  }
  return o;
}

// protobufjs object (keepCase, longs as String) -> normalised spans
function fromProto(req) {
  const out = [];
  for (const rs of req.resource_spans ?? []) {
    const resource = kvs(rs.resource?.attributes);
    for (const ss of rs.scope_spans ?? []) {
      const scope = { name: ss.scope?.name ?? '', version: ss.scope?.version ?? '' };
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: hex(s.trace_id), spanId: hex(s.span_id), parentSpanId: hex(s.parent_span_id),
          name: s.name ?? '', kind: s.kind ?? 0, flags: s.flags ?? 0,
          start: big(s.start_time_unix_nano), end: big(s.end_time_unix_nano),
          attributes: kvs(s.attributes),
          events: (s.events ?? []).map((e) => ({ name: e.name ?? '', time: big(e.time_unix_nano), attributes: kvs(e.attributes) })),
          links: (s.links ?? []).length,
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
          resource, scope,
        });
      }
    }
  }
  return out;
}

export function decodeProto(buf) {
  strictCheck(ExportTraceServiceRequest, buf);
  const msg = ExportTraceServiceRequest.decode(buf);
  const obj = ExportTraceServiceRequest.toObject(msg, { longs: String, bytes: Buffer, oneofs: false, defaults: false, keepCase: true });
  return fromProto(obj);
}

// ---- OTLP/JSON ----------------------------------------------------------------
function only(o, keys, path) {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new Error(`${path}: not an object`);
  for (const k of Object.keys(o)) if (!keys.includes(k)) throw new Error(`${path}: unknown member ${k}`);
}
const U64 = /^[0-9]+$/;
const I64 = /^-?[0-9]+$/;
function jAny(v, path) {
  only(v, ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'], path);
  const k = Object.keys(v);
  if (k.length !== 1) throw new Error(`${path}: ${k.length} members in an AnyValue`);
  const x = v[k[0]];
  switch (k[0]) {
    case 'stringValue': if (typeof x !== 'string') throw new Error(`${path}: stringValue`); return x;
    case 'boolValue': if (typeof x !== 'boolean') throw new Error(`${path}: boolValue`); return x;
    case 'intValue':
      if (!(typeof x === 'string' && I64.test(x)) && !Number.isInteger(x)) throw new Error(`${path}: intValue ${x}`);
      return num(x);
    case 'doubleValue':
      if (typeof x !== 'number' && !['NaN', 'Infinity', '-Infinity'].includes(x)) throw new Error(`${path}: doubleValue`);
      return Number(x);
    case 'arrayValue': only(x, ['values'], path); return (x.values ?? []).map((e, i) => jAny(e, `${path}[${i}]`));
    case 'kvlistValue': only(x, ['values'], path); return jKvs(x.values, path);
    default: return Buffer.from(x, 'base64');
  }
}
function jKvs(list, path) {
  if (list === undefined) return {};
  if (!Array.isArray(list)) throw new Error(`${path}: attributes not an array`);
  const o = {};
  list.forEach((kv, i) => {
    only(kv, ['key', 'value'], `${path}[${i}]`);
    if (typeof kv.key !== 'string') throw new Error(`${path}[${i}].key`);
    if (Object.hasOwn(o, kv.key)) throw new Error(`attribute ${kv.key} twice`);
    o[kv.key] = kv.value === undefined ? undefined : jAny(kv.value, `${path}.${kv.key}`);
  });
  return o;
}
function jHex(v, n, path, optional) {
  if (v === undefined || v === '') { if (optional) return ''; throw new Error(`${path}: missing`); }
  if (typeof v !== 'string' || !new RegExp(`^[0-9a-f]{${n}}$`).test(v)) throw new Error(`${path}: not ${n} lowercase hex digits: ${v}`);
  return v;
}
function jU64(v, path) {
  if (v === undefined) return 0n;
  if (!(typeof v === 'string' && U64.test(v)) && !Number.isInteger(v)) throw new Error(`${path}: not a uint64: ${v}`);
  return BigInt(v);
}
function jInt(v, path) {
  if (v === undefined) return 0;
  if (!Number.isInteger(v)) throw new Error(`${path}: an enum/int as ${typeof v}`);
  return v;
}
export function decodeJson(text) {
  const j = JSON.parse(text);
  only(j, ['resourceSpans'], 'request');
  const out = [];
  (j.resourceSpans ?? []).forEach((rs, a) => {
    only(rs, ['resource', 'scopeSpans', 'schemaUrl'], `resourceSpans[${a}]`);
    if (rs.resource) only(rs.resource, ['attributes', 'droppedAttributesCount', 'entityRefs'], 'resource');
    const resource = jKvs(rs.resource?.attributes, 'resource.attributes');
    (rs.scopeSpans ?? []).forEach((ss, b) => {
      only(ss, ['scope', 'spans', 'schemaUrl'], `scopeSpans[${b}]`);
      if (ss.scope) only(ss.scope, ['name', 'version', 'attributes', 'droppedAttributesCount'], 'scope');
      const scope = { name: ss.scope?.name ?? '', version: ss.scope?.version ?? '' };
      (ss.spans ?? []).forEach((s, c) => {
        const p = `spans[${c}]`;
        only(s, ['traceId', 'spanId', 'traceState', 'parentSpanId', 'flags', 'name', 'kind', 'startTimeUnixNano',
          'endTimeUnixNano', 'attributes', 'droppedAttributesCount', 'events', 'droppedEventsCount', 'links',
          'droppedLinksCount', 'status'], p);
        if (s.status) only(s.status, ['message', 'code'], `${p}.status`);
        out.push({
          traceId: jHex(s.traceId, 32, `${p}.traceId`), spanId: jHex(s.spanId, 16, `${p}.spanId`),
          parentSpanId: jHex(s.parentSpanId, 16, `${p}.parentSpanId`, true),
          name: s.name ?? '', kind: jInt(s.kind, `${p}.kind`), flags: jInt(s.flags, `${p}.flags`),
          start: jU64(s.startTimeUnixNano, `${p}.startTimeUnixNano`), end: jU64(s.endTimeUnixNano, `${p}.endTimeUnixNano`),
          attributes: jKvs(s.attributes, `${p}.attributes`),
          events: (s.events ?? []).map((e, i) => {
            only(e, ['timeUnixNano', 'name', 'attributes', 'droppedAttributesCount'], `${p}.events[${i}]`);
            return { name: e.name ?? '', time: jU64(e.timeUnixNano, `${p}.events[${i}].timeUnixNano`), attributes: jKvs(e.attributes, `${p}.events[${i}]`) };
          }),
          links: (s.links ?? []).length,
          status: { code: jInt(s.status?.code, `${p}.status.code`), message: s.status?.message ?? '' },
          resource, scope,
        });
      });
    });
  });
  return out;
}

// ---- the SDK's ReadableSpan, for otlp-transformer's serializers ------------------
const hr = (ns) => [Number(ns / 1000000000n), Number(ns % 1000000000n)];
export function toReadableSpans(spans) {
  const resources = new Map(), scopes = new Map();
  return spans.map((s) => {
    const rk = JSON.stringify(s.resource), sk = JSON.stringify(s.scope);
    if (!resources.has(rk)) resources.set(rk, { attributes: s.resource, schemaUrl: undefined });
    if (!scopes.has(sk)) scopes.set(sk, { name: s.scope.name, version: s.scope.version || undefined });
    const traceFlags = s.flags & 0xff;
    return {
      name: s.name,
      kind: s.kind - 1, // the API's SpanKind starts at INTERNAL = 0
      spanContext: () => ({ traceId: s.traceId, spanId: s.spanId, traceFlags, isRemote: false }),
      parentSpanContext: s.parentSpanId
        ? { traceId: s.traceId, spanId: s.parentSpanId, traceFlags, isRemote: (s.flags & 0x200) !== 0 }
        : undefined,
      startTime: hr(s.start), endTime: hr(s.end), duration: hr(s.end - s.start), ended: true,
      status: s.status.message ? { code: s.status.code, message: s.status.message } : { code: s.status.code },
      attributes: s.attributes, links: [],
      events: s.events.map((e) => ({ name: e.name, time: hr(e.time), attributes: e.attributes, droppedAttributesCount: 0 })),
      resource: resources.get(rk), instrumentationScope: scopes.get(sk),
      droppedAttributesCount: 0, droppedEventsCount: 0, droppedLinksCount: 0,
    };
  });
}

// ---- the server ---------------------------------------------------------------------
export async function startOtlp() {
  const posts = [];
  const waiters = new Set();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      const post = { method: req.method, url: req.url, contentType, headers: req.headers, body, spans: [], error: null, status: 200 };
      const answer = (status, error) => {
        post.status = status;
        post.error = error;
        posts.push(post);
        for (const w of waiters) w();
        if (status !== 200) {
          res.writeHead(status, { 'content-type': 'text/plain' });
          res.end(error);
          return;
        }
        if (contentType === 'application/json') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{}');
        } else {
          res.writeHead(200, { 'content-type': 'application/x-protobuf' });
          res.end(Buffer.alloc(0)); // an empty ExportTraceServiceResponse
        }
      };
      if (req.url !== '/v1/traces') return answer(404, `no route ${req.url}`);
      if (req.method !== 'POST') return answer(405, `method ${req.method}`);
      try {
        if (contentType === 'application/x-protobuf') post.spans = decodeProto(body);
        else if (contentType === 'application/json') post.spans = decodeJson(body.toString('utf8'));
        else return answer(415, `content type ${contentType}`);
      } catch (e) {
        return answer(400, String(e.message ?? e));
      }
      answer(200, null);
    });
  });
  server.keepAliveTimeout = 60000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  const spans = () => posts.flatMap((p) => p.spans);
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    posts,
    spans,
    async waitSpans(pred, n, ms) {
      const end = Date.now() + ms;
      while (spans().filter(pred).length < n) {
        const left = end - Date.now();
        if (left <= 0) return false;
        await new Promise((r) => { const t = setTimeout(r, Math.min(left, 200)); waiters.add(() => { clearTimeout(t); r(); }); });
        waiters.clear();
      }
      return true;
    },
    async stop() {
      server.closeAllConnections?.();
      await new Promise((r) => server.close(r));
    },
  };
}
