// Property-based fuzzing of the four parsers: random bodies, Content-Type, Content-Encoding and
// charset values, and random splits of the body into writes. For every input each parser calls
// `next` exactly once, with a parsed body or a documented http-errors error that fits the BodyError
// type, and never throws, leaves an unhandled rejection, or hangs. FOYER_FUZZ_RUNS raises the
// number of runs for a soak.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { json, raw, text, urlencoded } from '../../src/index.js'
import type { BodyError, BodyErrorType } from '../../src/index.js'
import { splitAt } from '../helpers/body-arbitraries.js'
import { startServer } from '../helpers/server.js'
import type { Middleware, TestServer } from '../helpers/server.js'

const RUNS = Number(process.env.FOYER_FUZZ_RUNS ?? 60)

// Every `type` a parser may pass to `next`: the README's error table.
const DOCUMENTED = new Set<BodyErrorType>([
  'encoding.unsupported', 'entity.parse.failed', 'entity.verify.failed', 'request.aborted',
  'entity.too.large', 'request.size.invalid', 'stream.encoding.set', 'stream.not.readable',
  'parameters.too.many', 'charset.unsupported', 'querystring.parse.rangeError'
])

const problems: string[] = []
const onUncaught = (err: unknown): void => { problems.push(`uncaught: ${String(err)}`) }
const onUnhandled = (err: unknown): void => { problems.push(`unhandled rejection: ${String(err)}`) }

// What the BodyError type says of each optional property.
const OPTIONAL: Record<Exclude<keyof BodyError, keyof Error | 'status' | 'statusCode' | 'expose' | 'type'>, (value: unknown) => boolean> = {
  body: (v) => typeof v === 'string' || Buffer.isBuffer(v),
  charset: (v) => typeof v === 'string',
  encoding: (v) => typeof v === 'string',
  limit: (v) => typeof v === 'number',
  length: (v) => v === null || typeof v === 'number',
  received: (v) => typeof v === 'number',
  expected: (v) => v === null || typeof v === 'number',
  code: (v) => typeof v === 'string',
  errno: (v) => typeof v === 'number'
}

/** The first way `err` does not fit the BodyError type, if any. */
function bodyErrorMisfit (err: unknown): string | undefined {
  if (!(err instanceof Error)) return 'not an Error'
  const e = err as unknown as Record<string, unknown>
  if (typeof e.type !== 'string') return 'type'
  for (const [key, fits] of Object.entries(OPTIONAL)) {
    if (e[key] !== undefined && !fits(e[key])) return key
  }
  return undefined
}

interface Outcome { status: number, payload: { ok?: true, type?: string, calls?: number } }

function fuzzServer (mw: Middleware): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    let calls = 0
    mw(req, res, (err?: unknown) => {
      calls++
      if (calls > 1) { problems.push(`next called ${calls} times for ${req.url ?? ''}`); return }
      if (err === undefined || err === null) {
        res.end(JSON.stringify({ ok: true }))
        return
      }
      const e = err as { status?: unknown, statusCode?: unknown, type?: unknown, expose?: unknown }
      if (typeof e.status !== 'number' || e.status !== e.statusCode || typeof e.expose !== 'boolean') {
        problems.push(`not an http-errors error: ${String(err)}`)
      }
      const misfit = bodyErrorMisfit(err)
      if (misfit !== undefined) problems.push(`not a BodyError (${misfit}): ${String(err)}`)
      if (typeof e.type !== 'string' || !DOCUMENTED.has(e.type as BodyErrorType)) {
        problems.push(`undocumented type ${String(e.type)} (${String(err)})`)
      }
      res.statusCode = typeof e.status === 'number' ? e.status : 500
      res.end(JSON.stringify({ type: e.type }))
    })
  }
}

const mediaTypes = ['application/json', 'application/octet-stream', 'text/plain', 'application/x-www-form-urlencoded', 'text/html', 'application/vnd.api+json']
const charsets = ['utf-8', 'UTF-8', 'utf-16le', 'utf-16be', 'iso-8859-1', 'latin1', 'us-ascii', 'utf-32', '__proto__', 'constructor', 'bogus', '']
const headerText = fc.string({ unit: fc.constantFrom(...' \t!#$%&\'*+-.^_`|~0123456789abcdefgxyzABCZ;=,"/\\()<>@:?[]{}'.split('')), maxLength: 40 })

const contentType = fc.oneof(
  fc.constantFrom(...mediaTypes),
  fc.tuple(fc.constantFrom(...mediaTypes), fc.constantFrom(...charsets)).map(([t, c]) => `${t}; charset=${c}`),
  fc.tuple(fc.constantFrom(...mediaTypes), headerText).map(([t, p]) => `${t};${p}`),
  headerText
)
const encoding = fc.constantFrom('', 'identity', 'gzip', 'x-gzip', 'deflate', 'br', 'GZIP', 'gzip, gzip', 'compress', 'zstd', 'bogus', 'gzip,')

const payload = fc.oneof(
  fc.uint8Array({ maxLength: 600 }).map((a) => Buffer.from(a)),
  fc.json({ maxDepth: 4 }).map((s) => Buffer.from(s)),
  fc.array(fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })), { maxLength: 30 })
    .map((pairs) => Buffer.from(pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'))),
  fc.constantFrom('{"__proto__":{"x":1}}', '{"a":{"constructor":{"prototype":{}}}}', 'a[__proto__][b]=1', '[[[[[[[[[[]]]]]]]]]]', 'a[b][c][d][e][f][g]=1')
    .map((s) => Buffer.from(s))
)

function encode (body: Buffer, enc: string, corrupt: boolean): Buffer {
  const name = enc.toLowerCase()
  let out = body
  if (name === 'gzip' || name === 'x-gzip') out = gzipSync(body)
  else if (name === 'deflate') out = deflateSync(body)
  else if (name === 'br') out = brotliCompressSync(body)
  if (corrupt && out !== body && out.length > 4) out = out.subarray(0, out.length >> 1)
  return out
}

async function send (port: number, headers: Record<string, string>, chunks: Buffer[]): Promise<Outcome> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/', headers, agent: false }, (res) => {
      const parts: Buffer[] = []
      res.on('data', (c: Buffer) => parts.push(c))
      res.on('end', () => {
        const text = Buffer.concat(parts).toString()
        try {
          resolve({ status: res.statusCode ?? 0, payload: JSON.parse(text) as Outcome['payload'] })
        } catch {
          reject(new Error(`not a JSON answer: ${res.statusCode ?? 0} ${text}`))
        }
      })
    })
    // never hang: a request that gets no answer in 5 s fails the property
    req.setTimeout(5000, () => { req.destroy(new Error('no answer within 5 s')) })
    req.on('error', reject)
    for (const chunk of chunks) req.write(chunk)
    req.end()
  })
}

const parsers: Array<[string, Middleware]> = [
  ['json', json({ limit: 2048 }) as Middleware],
  ['raw', raw({ limit: 2048, type: () => true }) as Middleware],
  ['text', text({ limit: 2048, type: '*/*' }) as Middleware],
  ['urlencoded', urlencoded({ limit: 2048, extended: true, depth: 3, parameterLimit: 20 }) as Middleware],
  ['urlencoded simple', urlencoded({ limit: 2048 }) as Middleware]
]

describe('fuzzing the parsers', () => {
  const servers = new Map<string, TestServer>()
  before(async () => {
    process.on('uncaughtException', onUncaught)
    process.on('unhandledRejection', onUnhandled)
    for (const [name, mw] of parsers) servers.set(name, await startServer(fuzzServer(mw)))
  })
  after(async () => {
    process.off('uncaughtException', onUncaught)
    process.off('unhandledRejection', onUnhandled)
    for (const server of servers.values()) await server.close()
  })

  for (const [name] of parsers) {
    it(`${name}: next once, a parsed body or a documented error, for any body, headers and split`, async () => {
      const server = servers.get(name)
      assert.ok(server !== undefined)
      await fc.assert(fc.asyncProperty(
        payload, contentType, encoding, fc.boolean(), fc.boolean(), fc.array(fc.nat(), { maxLength: 6 }),
        async (body, type, enc, corrupt, chunked, cuts) => {
          const wire = encode(body, enc, corrupt)
          const headers: Record<string, string> = { 'content-type': type }
          if (enc !== '') headers['content-encoding'] = enc
          if (!chunked) headers['content-length'] = String(wire.length)
          const outcome = await send(server.port, headers, splitAt(wire, cuts))
          if (outcome.payload.ok === true) {
            assert.equal(outcome.status, 200)
          } else {
            // hostile headers or bodies are the client's fault: never a 5xx
            assert.ok(outcome.status >= 400 && outcome.status < 500, `error status ${outcome.status}`)
            assert.ok(DOCUMENTED.has(outcome.payload.type as BodyErrorType), `documented type, got ${String(outcome.payload.type)}`)
          }
          assert.deepEqual(problems, [])
        }
      ), { numRuns: RUNS })
      assert.equal(({} as Record<string, unknown>).x, undefined, 'Object.prototype is untouched')
    })
  }
})
