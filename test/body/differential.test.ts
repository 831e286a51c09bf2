// Differential property tests: the same random request goes through foyer's parser and through
// body-parser's, made with the same options, over real node:http servers, and `next` must see the
// same thing from both: the same `req.body` (same values, same key order, Buffers byte for byte)
// or the same error (name, message, status, expose, type, own keys and the SPEC 7 properties).
// Options, Content-Type, charset, Content-Encoding (corrupt data too), Content-Length or chunked,
// and the split of the body into writes are all random. Only the README's deliberate differences
// ("What foyer does differently" -> "The body parser") are normalised, each where it is.
// FOYER_FUZZ_RUNS raises the number of runs for a soak.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import bodyParser from 'body-parser'
import fc from 'fast-check'
import { json, raw, text, urlencoded } from '../../src/body/index.js'
import {
  FORM_CHARSETS, FORM_TYPES, JSON_CHARSETS, JSON_TYPES, CHARSETS, RAW_TYPES, TEXT_CHARSETS, TEXT_TYPES,
  commonPayload, foyerRequest, formPayload, given, jsonOptions, jsonPayload, sizesOf, piecesMatter, rawOptions, request,
  textOptions, textPayload, toBytes, urlencodedOptions, wireOf
} from '../helpers/body-arbitraries.js'
import type { Common, Payload, Request, Sizes, Wire } from '../helpers/body-arbitraries.js'
import { assertListenersLeft, assertSameOutcome, receivedAside, send, startBodyServer, within } from '../helpers/body-server.js'
import type { BodyServer, Outcome, Seen } from '../helpers/body-server.js'
import type { RequestOptions } from '../helpers/server.js'

const RUNS = Number(process.env.FOYER_FUZZ_RUNS ?? 1000)

let server: BodyServer
before(async () => { server = await startBodyServer() })
after(async () => { await server.close() })

// ---------------------------------------------------------------------------------------------
// Requests

/** The request body-parser gets: the same, except that x-gzip is sent as gzip. */
function referenceRequest (wire: Wire): RequestOptions {
  const sent = foyerRequest(wire)
  const encoding = sent.headers?.['content-encoding']
  // x-gzip: foyer reads it as gzip (RFC 9110), body-parser answers 415, so body-parser is sent gzip
  if (typeof encoding === 'string' && encoding.toLowerCase() === 'x-gzip') {
    return { ...sent, headers: { ...sent.headers, 'content-encoding': encoding.slice(2) } }
  }
  return sent
}

// ---------------------------------------------------------------------------------------------
// Comparison

function withoutKey (keys: string[], key: string): string[] {
  return keys.filter((k) => k !== key)
}

/** foyer's outcome with the README's deliberate differences brought back to body-parser's. */
function normalise (ours: Outcome, theirs: Outcome, size: Sizes): Outcome {
  const error = ours.error
  const reference = theirs.error
  if (error === undefined || reference === undefined) return ours
  const props = { ...error.props }
  let keys = error.keys
  let type = error.type
  // Corrupt compressed data: foyer types zlib's error as entity.parse.failed, body-parser leaves `type` unset
  if (reference.type === undefined && reference.status === 400 && type === 'entity.parse.failed' && !reference.keys.includes('type')) {
    type = undefined
    keys = withoutKey(keys, 'type')
  }
  // inflate: false: foyer's error also names the encoding in `charset`
  if (error.message === 'content encoding unsupported' && !('charset' in reference.props)) {
    assert.equal(props['charset'], props['encoding'], 'charset holds the encoding')
    delete props['charset']
    keys = withoutKey(keys, 'charset')
  }
  // x-gzip: body-parser was sent gzip, so its error names that
  if (props['encoding'] === 'x-gzip' && reference.props['encoding'] === 'gzip') props['encoding'] = 'gzip'
  // A SyntaxError's stack: body-parser rewrites it with String#replace, which takes `$'`, `$&`,
  // `$\`` and `$$` in the message (`Unexpected token '$'`) for patterns (`$'` brings in the lines
  // after the first). The rewrite is made on the whole stack, our name and message followed by a
  // line break: the message may hold line breaks of its own (V8 quotes a short body in it, `"$\n"`),
  // and then the stack's first line is only a part of it. `$&` and `$\`` bring in the text the
  // replace matched, which for a body strict refuses is the message of body-parser's own parse of a
  // stand-in (`Unexpected token '#', "###"...`): there only the text before the first `$` is the same.
  let stackHead = error.stackHead
  const message = error.message
  if (typeof stackHead === 'string' && typeof message === 'string' && typeof reference.stackHead === 'string') {
    const stackStart = `${String(error.name)}: ${message}\n`
    const startsWithMessage = stackStart.split('\n', 1)[0] === stackHead
    if (startsWithMessage && stackStart.replace(message, message).split('\n', 1)[0] === reference.stackHead) stackHead = reference.stackHead
    else if (startsWithMessage && /\$[&`]/.test(message) && reference.stackHead.startsWith(stackStart.slice(0, stackStart.indexOf('$')))) stackHead = reference.stackHead
  }
  const normalised: NonNullable<Seen['error']> = { ...error, keys, props, stackHead }
  // the reply is JSON: an unset `type` is absent, not undefined
  if (type === undefined) delete normalised.type
  // Fail fast on oversize: the 413 may come earlier, but it is the same error
  return receivedAside({ ...ours, error: normalised }, theirs, size, true)
}

/** Sends the request through both parsers and asserts that `next` saw the same thing from both. */
async function differential (foyerMw: unknown, referenceMw: unknown, wire: Wire, size: Sizes): Promise<void> {
  const ours = await within(send(server, server.mount(foyerMw), foyerRequest(wire)), 'foyer')
  const theirs = await within(send(server, server.mount(referenceMw), referenceRequest(wire)), 'body-parser')
  const reference: Outcome = { error: theirs.error, body: theirs.body }
  const mine = normalise({ error: ours.error, body: ours.body }, reference, size)
  assertSameOutcome(mine, reference, 'foyer and body-parser')
  // Listeners after a read: foyer may leave its finished 'data', 'end', 'close' and 'aborted' listeners
  assertListenersLeft(ours)
}

/** foyer's middleware and body-parser's, made from the same options. */
type Make = (options: Record<string, unknown>) => [unknown, unknown]

/** Builds both middlewares from one set of options and runs the differential on one request. */
async function check (make: Make, options: Common, req: Request, payload: Payload): Promise<void> {
  const opts = given(options)
  const defaultCharset = typeof opts['defaultCharset'] === 'string' ? opts['defaultCharset'] : undefined
  const bytes = toBytes(payload, req.type, defaultCharset, req.useDeclared)
  const [ours, theirs] = make(opts)
  let wire = wireOf(req, bytes)
  // Multi-byte charsets are decoded from the whole body: body-parser decodes each piece as it
  // arrives, so both are sent the body in one write (and one inflated chunk, at most 16 kB),
  // where body-parser's result is the whole body's
  if (piecesMatter(req.type, defaultCharset)) {
    fc.pre(bytes.length <= 16 * 1024)
    if (wire.chunks.length > 1) wire = { ...wire, chunks: [Buffer.concat(wire.chunks)] }
  }
  await differential(ours, theirs, wire, sizesOf(options.limit, wire, req.harm, bytes))
}

// ---------------------------------------------------------------------------------------------
// The parsers

const makeJson: Make = (options) => [
  // Prototype poisoning: 'ignore' keeps body-parser's behaviour for __proto__ and constructor.prototype keys
  json({ ...options, onProtoPoisoning: 'ignore' }), bodyParser.json(options)
]
const makeRaw: Make = (options) => [raw(options), bodyParser.raw(options)]
const makeText: Make = (options) => [text(options), bodyParser.text(options)]
const makeUrlencoded: Make = (options) => [urlencoded(options), bodyParser.urlencoded(options)]

// ---------------------------------------------------------------------------------------------

describe('foyer and body-parser, request for request', () => {
  it('json: the same body or the same error for any request (strict or not, any limit, charset, encoding)', async () => {
    await fc.assert(fc.asyncProperty(jsonOptions, request(JSON_TYPES, JSON_CHARSETS), jsonPayload, async (options, req, payload) => {
      await check(makeJson, options, req, payload)
    }), { numRuns: RUNS })
  })

  it('json: a body strict refuses whose syntax error quotes `$` patterns or a line break (body-parser rewrites that stack)', async () => {
    // V8 quotes the body in the message (`Unexpected token '$', "$\n" is not valid JSON`): a line
    // break ends the stack's first line inside the message, and `$&` brings body-parser's own
    // stand-in message into its stack. Found by the property above.
    for (const payload of ['$\n', '$\n\n', ' $\r\n', '$`\n', '!$&', '!$&!$&!$&!$&', ' x$`y', '$$&']) {
      for (const framing of ['length', 'chunked'] as const) {
        await check(makeJson, { limit: undefined, inflate: undefined, type: undefined, verify: undefined }, { type: 'application/json;', encoding: 'identity', harm: 'none', at: 0, framing, cuts: [], useDeclared: false }, Buffer.from(payload))
      }
    }
  })

  it('raw: the same bytes or the same error for any request', async () => {
    await fc.assert(fc.asyncProperty(rawOptions, request(RAW_TYPES, CHARSETS), commonPayload, async (options, req, payload) => {
      await check(makeRaw, options, req, payload)
    }), { numRuns: RUNS })
  })

  it('text: the same text or the same error for any request and default charset', async () => {
    await fc.assert(fc.asyncProperty(textOptions, request(TEXT_TYPES, TEXT_CHARSETS), textPayload, async (options, req, payload) => {
      await check(makeText, options, req, payload)
    }), { numRuns: RUNS })
  })

  it('urlencoded: the same object or the same error for any form, extended or not, any parameterLimit and depth', async () => {
    await fc.assert(fc.asyncProperty(urlencodedOptions, request(FORM_TYPES, FORM_CHARSETS), formPayload, async (options, req, payload) => {
      await check(makeUrlencoded, options, req, payload)
    }), { numRuns: RUNS * 2 })
  })

  it('urlencoded: the same object for any form of the parser\'s own type in utf-8 or iso-8859-1', async () => {
    const form = fc.tuple(fc.constantFrom('utf-8', 'iso-8859-1', undefined), formPayload, fc.array(fc.nat(), { maxLength: 4 }), fc.boolean())
    await fc.assert(fc.asyncProperty(urlencodedOptions, form, async (options, [charset, payload, cuts, chunked]) => {
      const req: Request = {
        type: `application/x-www-form-urlencoded${charset === undefined ? '' : `; charset=${charset}`}`,
        encoding: undefined,
        harm: 'none',
        at: 0,
        framing: chunked ? 'chunked' : 'length',
        cuts,
        useDeclared: true
      }
      await check(makeUrlencoded, { ...options, limit: undefined, type: undefined, verify: undefined }, req, payload)
    }), { numRuns: RUNS * 2 })
  })
})
