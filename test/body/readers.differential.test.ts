// Differential property tests of the Promise readers against their middlewares: the same random
// request (options, Content-Type, charset, Content-Encoding with corrupt data too, Content-Length
// or chunked, the split of the body into writes) goes through `x(options)` over node:http, through
// `readX(req, options)` in a plain node:http handler, and, built as a WHATWG `Request` from the
// same headers and bytes (in one Uint8Array or as a stream of the same chunks), through
// `readX(request, options)`. The reader must resolve with what the middleware puts in `req.body`
// (`undefined` where the middleware skips the request and leaves `req.body` undefined), or reject
// with the error the middleware passes to `next`: same name, message, status, statusCode, expose,
// type, own keys and SPEC 7 properties. Only the README's documented differences are normalised,
// each where it is. FOYER_FUZZ_RUNS raises the number of runs for a soak.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { IncomingMessage, ServerResponse } from 'node:http'
import fc from 'fast-check'
import { json, raw, readJson, readRaw, readText, readUrlencoded, text, urlencoded } from '../../src/body/index.js'
import type { BodyRequest } from '../../src/body/index.js'
import {
  CHARSETS, FORM_CHARSETS, FORM_TYPES, JSON_CHARSETS, JSON_TYPES, RAW_TYPES, TEXT_CHARSETS, TEXT_TYPES,
  commonPayload, foyerRequest, formPayload, given, jsonOptions, jsonPayload, sizesOf, rawOptions, request,
  textOptions, textPayload, toBytes, urlencodedOptions, wireOf
} from '../helpers/body-arbitraries.js'
import type { Common, Payload, Request as RandomRequest, Wire } from '../helpers/body-arbitraries.js'
import { assertSameOutcome, describeError, describeValue, receivedAside, send, startBodyServer, within } from '../helpers/body-server.js'
import type { BodyServer, Outcome } from '../helpers/body-server.js'
import { request as httpRequest, startServer } from '../helpers/server.js'
import type { TestServer } from '../helpers/server.js'

const RUNS = Number(process.env.FOYER_FUZZ_RUNS ?? 800)

/** What a reader is called as: the Node.js request or the Fetch Request, and the options. */
type Read = (req: BodyRequest, options: Record<string, unknown>) => Promise<unknown>

// The readers, each in a plain node:http handler at its own path, answering with the outcome
const readers = new Map<string, (req: IncomingMessage) => Promise<unknown>>()
let readerId = 0
let readerServer: TestServer
let middlewareServer: BodyServer

before(async () => {
  middlewareServer = await startBodyServer()
  readerServer = await startServer((req, res) => {
    const read = readers.get(req.url ?? '/')
    if (read === undefined) { res.statusCode = 404; res.end(); return }
    read(req).then(
      (value) => { answer({ body: describeValue(value) }) },
      (err: unknown) => { answer({ error: describeError(err) }) }
    )
    function answer (outcome: Outcome): void {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify(outcome))
    }
  })
})

after(async () => {
  await readerServer.close()
  await middlewareServer.close()
})

/** The middleware's outcome over HTTP: the error passed to `next`, or `req.body`. */
async function throughMiddleware (mw: unknown, wire: Wire): Promise<Outcome> {
  const seen = await within(send(middlewareServer, middlewareServer.mount(mw), foyerRequest(wire)), 'middleware')
  // the error or the body, whichever `next` saw, as the reader's handler answers it
  return JSON.parse(JSON.stringify({ error: seen.error, body: seen.body })) as Outcome
}

/** The reader's outcome in a node:http handler, for the same request. */
async function throughNodeReader (read: Read, options: Record<string, unknown>, wire: Wire): Promise<Outcome> {
  const path = `/r${++readerId}`
  readers.set(path, async (req) => await read(req, options))
  try {
    const reply = await within(httpRequest(readerServer.port, { method: 'POST', ...foyerRequest(wire), path }), 'reader')
    assert.equal(reply.status, 200, `the reader's handler answers 200, got ${reply.status}: ${reply.body}`)
    return JSON.parse(reply.body) as Outcome
  } finally {
    readers.delete(path)
  }
}

type FetchBodyKind = 'bytes' | 'stream'

/** A Fetch Request with the request's headers and bytes: one Uint8Array, or a stream of its chunks. */
function fetchRequest (wire: Wire, kind: FetchBodyKind): globalThis.Request {
  const sent = foyerRequest(wire)
  const headers = Object.fromEntries(Object.entries(sent.headers ?? {}).map(([k, v]) => [k, String(v)]))
  if (wire.framing === 'none') return new globalThis.Request('http://x/', { method: 'POST', headers })
  const chunks = wire.chunks
  const body = kind === 'bytes'
    ? new Uint8Array(Buffer.concat(chunks))
    : new ReadableStream<Uint8Array>({
      start (controller) {
        for (const chunk of chunks) controller.enqueue(new Uint8Array(chunk))
        controller.close()
      }
    })
  return new globalThis.Request('http://x/', { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
}

/** The reader's outcome on a Fetch Request, described as the servers describe theirs. */
async function throughFetchReader (read: Read, options: Record<string, unknown>, request: globalThis.Request): Promise<Outcome> {
  let outcome: Outcome
  try {
    outcome = { body: describeValue(await within(read(request, options), 'fetch reader')) }
  } catch (err) {
    outcome = { error: describeError(err) }
  }
  // as it would come over the wire: undefined properties dropped, -0 as 0
  return JSON.parse(JSON.stringify(outcome)) as Outcome
}

/** Whether one outcome is a 413 and the other the decompressor's 400 (zlib's or brotli's, with its `errno`). */
function oversizeAgainstCorrupt (a: Outcome, b: Outcome): boolean {
  const corrupt = (o: Outcome): boolean => o.error?.type === 'entity.parse.failed' && o.error.keys.includes('errno')
  const oversize = (o: Outcome): boolean => o.error?.type === 'entity.too.large'
  return (oversize(a) && corrupt(b)) || (corrupt(a) && oversize(b))
}

/**
 * `ours` with the decompressor's `code`, `errno` and message taken from `theirs` when both are
 * brotli's error for the same damaged body: brotli names the check that failed, and which one it
 * reaches can depend on where the compressed bytes were cut (ERR__ERROR_FORMAT_BLOCK_LENGTH_1 or
 * _2 for one body), and a socket's pieces are not a ReadableStream's.
 */
function brotliCheckAside (ours: Outcome, theirs: Outcome, encoding: string): Outcome {
  const named = (o: Outcome): boolean => typeof o.error?.props['code'] === 'string' && o.error.keys.includes('errno')
  if (encoding !== 'br' || ours.error === undefined || theirs.error === undefined || !named(ours) || !named(theirs)) return ours
  const props: Record<string, unknown> = { ...ours.error.props, code: theirs.error.props['code'] }
  if ('errno' in theirs.error.props) props['errno'] = theirs.error.props['errno']
  return { ...ours, error: { ...ours.error, message: theirs.error.message, props } }
}

/** One call of `verify`: what it was given. */
interface VerifyCall { req: unknown, res: unknown, buf: unknown, encoding: unknown }

/** The options with `verify` (when given) wrapped to record its calls, in the same key order. */
function watched (options: Record<string, unknown>, calls: VerifyCall[]): Record<string, unknown> {
  const verify = options['verify']
  if (typeof verify !== 'function') return options
  return {
    ...options,
    verify (req: unknown, res: unknown, buf: unknown, encoding: unknown): void {
      calls.push({ req, res, buf, encoding })
      ;(verify as (...args: unknown[]) => void)(req, res, buf, encoding)
    }
  }
}

/**
 * `verify` ran as often in all three, with the same bytes and encoding: as `(req, res, ...)` for
 * the middleware, `(req, undefined, ...)` for the reader on a node:http request, and
 * `(request, undefined, ...)` for the reader on a Fetch Request (README: there is no response).
 */
function assertVerifyCalls (middleware: VerifyCall[], node: VerifyCall[], fetched: VerifyCall[] | undefined, request: globalThis.Request): void {
  assert.equal(node.length, middleware.length, 'verify runs as often for the reader on a node:http request')
  if (fetched !== undefined) assert.equal(fetched.length, middleware.length, 'verify runs as often for the reader on a Fetch Request')
  for (const [i, call] of middleware.entries()) {
    assert.ok(call.req instanceof IncomingMessage && call.res instanceof ServerResponse, 'the middleware\'s verify gets req and res')
    assert.ok(Buffer.isBuffer(call.buf), 'verify gets a Buffer')
    const others: Array<[VerifyCall | undefined, string]> = [[node[i], 'node:http'], [fetched?.[i], 'Fetch']]
    for (const [other, what] of others) {
      if (other === undefined) continue
      if (what === 'Fetch') assert.equal(other.req, request, 'the Fetch reader\'s verify gets the Request')
      else assert.ok(other.req instanceof IncomingMessage, 'the reader\'s verify gets the node:http request')
      assert.equal(other.res, undefined, `the ${what} reader's verify gets no response`)
      assert.deepEqual(other.buf, call.buf, `the ${what} reader's verify gets the same bytes`)
      assert.equal(other.encoding, call.encoding, `the ${what} reader's verify gets the same encoding`)
    }
  }
}

/** The middleware and the reader for one parser. */
interface Parser { make: (options: Record<string, unknown>) => unknown, read: Read }

const JSON_PARSER: Parser = { make: json, read: readJson as Read }
const RAW_PARSER: Parser = { make: raw, read: readRaw as Read }
const TEXT_PARSER: Parser = { make: text, read: readText as Read }
const URLENCODED_PARSER: Parser = { make: urlencoded, read: readUrlencoded as Read }

const fetchBodyKind = fc.constantFrom<FetchBodyKind>('bytes', 'stream')

/** Runs one random request through the middleware, the Node.js reader and the Fetch reader. */
async function check (parser: Parser, options: Common, req: RandomRequest, payload: Payload, kind: FetchBodyKind): Promise<void> {
  const opts = given(options)
  const defaultCharset = typeof opts['defaultCharset'] === 'string' ? opts['defaultCharset'] : undefined
  const bytes = toBytes(payload, req.type, defaultCharset, req.useDeclared)
  const wire = wireOf(req, bytes)
  const size = sizesOf(options.limit, wire, req.harm, bytes)
  // A request without a body or of another type: the middleware leaves `req.body` undefined
  // (described as { undefined: true }) and the reader resolves undefined, described alike
  const calls: Record<'middleware' | 'node' | 'fetched', VerifyCall[]> = { middleware: [], node: [], fetched: [] }
  const middleware = await throughMiddleware(parser.make(watched(opts, calls.middleware)), wire)
  const node = await throughNodeReader(parser.read, watched(opts, calls.node), wire)
  assertSameOutcome(receivedAside(node, middleware, size, true), middleware, 'the reader on a node:http request and the middleware')
  const request = fetchRequest(wire, kind)
  const fetched = await throughFetchReader(parser.read, watched(opts, calls.fetched), request)
  // an inflated body reaches the limit in the pieces zlib gives out, which depend on when the
  // compressed bytes arrive: from a socket or from a ReadableStream, they are not the same pieces
  const inflated = !['', 'identity'].includes((req.encoding ?? '').toLowerCase())
  // Damaged compressed data over the limit earns two errors, the 413 and the decompressor's 400,
  // and which one comes first depends on when the decompressor learns that the body has ended:
  // right after the last chunk of a ReadableStream that closes with it, later from a socket. The
  // middleware meets the same race on the network; either error is the request's
  if (inflated && req.harm !== 'none' && oversizeAgainstCorrupt(fetched, middleware)) {
    assertVerifyCalls(calls.middleware, calls.node, undefined, request)
    return
  }
  const compared = req.harm === 'none' ? fetched : brotliCheckAside(fetched, middleware, (req.encoding ?? '').toLowerCase())
  assertSameOutcome(receivedAside(compared, middleware, size, kind === 'stream' && !inflated), middleware, 'the reader on a Fetch Request and the middleware')
  assertVerifyCalls(calls.middleware, calls.node, calls.fetched, request)
}

describe('the readers and their middlewares, request for request', () => {
  it('readJson gives json()\'s body or error, on a node:http request and on a Fetch Request', async () => {
    await fc.assert(fc.asyncProperty(jsonOptions, request(JSON_TYPES, JSON_CHARSETS), jsonPayload, fetchBodyKind, async (options, req, payload, kind) => {
      await check(JSON_PARSER, options, req, payload, kind)
    }), { numRuns: RUNS, includeErrorInReport: true })
  })

  it('readRaw gives raw()\'s bytes or error, on a node:http request and on a Fetch Request', async () => {
    await fc.assert(fc.asyncProperty(rawOptions, request(RAW_TYPES, CHARSETS), commonPayload, fetchBodyKind, async (options, req, payload, kind) => {
      await check(RAW_PARSER, options, req, payload, kind)
    }), { numRuns: RUNS, includeErrorInReport: true })
  })

  it('readText gives text()\'s string or error, on a node:http request and on a Fetch Request', async () => {
    await fc.assert(fc.asyncProperty(textOptions, request(TEXT_TYPES, TEXT_CHARSETS), textPayload, fetchBodyKind, async (options, req, payload, kind) => {
      await check(TEXT_PARSER, options, req, payload, kind)
    }), { numRuns: RUNS, includeErrorInReport: true })
  })

  it('readUrlencoded gives urlencoded()\'s object or error, on a node:http request and on a Fetch Request', async () => {
    await fc.assert(fc.asyncProperty(urlencodedOptions, request(FORM_TYPES, FORM_CHARSETS), formPayload, fetchBodyKind, async (options, req, payload, kind) => {
      await check(URLENCODED_PARSER, options, req, payload, kind)
    }), { numRuns: RUNS, includeErrorInReport: true })
  })
})
