// lib/s3.mjs - an S3-compatible receiver for the s3 / s3_v2 sinks: s3rver (an
// S3 server from npm: buckets, PUT/GET/ListObjects, S3's XML errors, access
// key and clock-skew checks) with SigV4 verification in front of it, done by
// AWS's own signer (@smithy/signature-v4, the AWS SDK for JavaScript v3's).
//
// s3rver 3.x checks the shape of a V4 Authorization header and the access key
// but not the signature ("V4 signatures have incomplete support"), so every
// request that carries one is re-signed here with the secret of its access key
// and refused like S3 does when they differ:
//
//   check                                   refusal (S3's code)
//   --------------------------------------  ----------------------------------
//   access key unknown                      403 InvalidAccessKeyId (s3rver)
//   credential scope region / service       400 AuthorizationHeaderMalformed
//   host, x-amz-date, x-amz-content-sha256  403 AccessDenied
//     not all signed
//   SHA-256 of the body != the header       400 XAmzContentSHA256Mismatch
//   Content-MD5 != MD5 of the body          400 BadDigest
//   signature != AWS's signer's             403 SignatureDoesNotMatch
//
// Every PUT is kept in `puts` (method, raw url, headers, body, status) for the
// tests; objects are read back through the S3 API (ListObjectsV2 and GET).
//
//   const s3 = await startS3({ accessKeyId, secretAccessKey, region, bucket });
//   s3.endpoint  -> "http://127.0.0.1:PORT"   (s3_endpoint_url, path-style)
//   await s3.list(prefix) -> [key...];  await s3.get(key) -> { headers, body }
//   await s3.close();
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';

import S3rver from 's3rver';
import AWSAccount from 's3rver/lib/models/account.js';
import { SignatureV4 } from '@smithy/signature-v4';

// The hash the signer asks for (a Checksum constructor), from node:crypto.
class Sha256 {
  constructor(secret) {
    this.h = secret ? createHmac('sha256', typeof secret === 'string' ? secret : Buffer.from(secret))
      : createHash('sha256');
  }
  update(d) {
    this.h.update(typeof d === 'string' ? d : Buffer.from(d));
  }
  async digest() {
    return new Uint8Array(this.h.digest());
  }
  reset() {}
}

const AUTH_RE =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

function s3error(ctx, status, code, message) {
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks);
}

// x-amz-date "YYYYMMDDTHHMMSSZ" -> Date
function amzDate(s) {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s || '');
  return m ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])) : null;
}

function verifier({ keys, region, puts }) {
  return async (ctx, next) => {
    const auth = ctx.get('authorization');
    if (ctx.method !== 'PUT' && !auth) return next(); // the tests' own anonymous reads
    const rawUrl = ctx.req.url;
    const body = await readBody(ctx.req);
    ctx.req = Readable.from([body]); // s3rver's putObject reads the body from ctx.req
    const rec = { method: ctx.method, url: rawUrl, headers: { ...ctx.request.headers }, body, status: 0, code: null };
    puts.push(rec);
    const refuse = (status, code, message) => {
      rec.status = status;
      rec.code = code;
      s3error(ctx, status, code, message);
    };
    const m = AUTH_RE.exec(auth);
    if (!m) return refuse(403, 'AccessDenied', 'a SigV4 Authorization header is required');
    const [, ak, day, scopeRegion, service, signedList, signature] = m;
    const secret = keys.get(ak);
    if (secret === undefined) {
      // s3rver's own refusal (InvalidAccessKeyId), thrown as an S3Error
      try {
        await next();
        rec.status = ctx.status;
      } catch (e) {
        rec.status = e.status || 500;
        rec.code = e.code || null;
        throw e;
      }
      return;
    }
    if (scopeRegion !== region || service !== 's3')
      return refuse(400, 'AuthorizationHeaderMalformed', `the region '${scopeRegion}' is wrong; expecting '${region}'`);
    const signed = signedList.split(';');
    for (const h of ['host', 'x-amz-date', 'x-amz-content-sha256'])
      if (!signed.includes(h)) return refuse(403, 'AccessDenied', `${h} must be signed`);
    const date = amzDate(ctx.get('x-amz-date'));
    if (!date || ctx.get('x-amz-date').slice(0, 8) !== day)
      return refuse(403, 'AccessDenied', 'x-amz-date does not match the credential scope');
    const sha = createHash('sha256').update(body).digest('hex');
    if (ctx.get('x-amz-content-sha256') !== sha)
      return refuse(400, 'XAmzContentSHA256Mismatch', 'the provided x-amz-content-sha256 does not match');
    const md5 = ctx.get('content-md5');
    if (md5 && md5 !== createHash('md5').update(body).digest('base64'))
      return refuse(400, 'BadDigest', 'the Content-MD5 you specified did not match what we received');

    // Re-sign the request as received with AWS's signer.
    const q = rawUrl.indexOf('?');
    const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const query = {};
    if (q >= 0)
      for (const [k, v] of new URLSearchParams(rawUrl.slice(q + 1))) query[k] = v;
    const headers = {};
    for (const h of signed) headers[h] = ctx.request.headers[h] ?? '';
    const signer = new SignatureV4({
      credentials: { accessKeyId: ak, secretAccessKey: secret },
      region,
      service: 's3',
      sha256: Sha256,
      uriEscapePath: false, // S3: the path is signed as sent
      applyChecksum: true,
    });
    const host = ctx.request.headers.host || '';
    const out = await signer.sign(
      { method: ctx.method, protocol: 'http:', hostname: host.replace(/:\d+$/, ''), path, query, headers },
      // the headers the client listed, cache-control too (which the SDK itself
      // never signs, but botocore does and S3 accepts)
      { signingDate: date, signableHeaders: new Set(signed) },
    );
    const want = /Signature=([0-9a-f]{64})/.exec(out.headers.authorization)?.[1];
    const wantList = /SignedHeaders=([^,]+)/.exec(out.headers.authorization)?.[1];
    if (want !== signature || wantList !== signedList)
      return refuse(403, 'SignatureDoesNotMatch',
        'The request signature we calculated does not match the signature you provided.');
    try {
      await next();
      rec.status = ctx.status;
    } catch (e) {
      rec.status = e.status || 500;
      rec.code = e.code || null;
      throw e;
    }
  };
}

export async function startS3({
  accessKeyId = 'S3RVER',
  secretAccessKey = 'S3RVER',
  region = 'us-east-1',
  bucket = 'logs',
} = {}) {
  const dir = mkdtempSync(join(tmpdir(), 's3rver-'));
  if (accessKeyId !== 'S3RVER') AWSAccount.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
  const keys = new Map([[accessKeyId, secretAccessKey]]);
  const puts = [];
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket }],
    allowMismatchedSignatures: false,
  });
  server.middleware.unshift(verifier({ keys, region, puts }));
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const unxml = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'").replace(/&amp;/g, '&');
  return {
    endpoint,
    port,
    bucket,
    region,
    puts,
    // keys under prefix, through ListObjectsV2
    async list(prefix = '') {
      const r = await fetch(`${endpoint}/${bucket}?list-type=2&max-keys=1000&prefix=${encodeURIComponent(prefix)}`);
      if (r.status !== 200) throw new Error(`ListObjectsV2: ${r.status} ${await r.text()}`);
      const xml = await r.text();
      return [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((x) => unxml(x[1])).sort();
    },
    async get(key) {
      const enc = key.split('/').map(encodeURIComponent).join('/');
      const r = await fetch(`${endpoint}/${bucket}/${enc}`);
      if (r.status !== 200) throw new Error(`GetObject ${key}: ${r.status}`);
      return { headers: Object.fromEntries(r.headers), body: await r.text() };
    },
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
