// Differential property test: random requests, responses, formats and options, each request sent
// to two node:http servers that differ only in their logger (morgan's or foyer's). The two lines
// must be the same, once the values of the clock tokens (:date, :response-time, :total-time) are
// checked for their shape and masked. FOYER_FUZZ_RUNS raises the number of runs for a soak.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import fc from 'fast-check'
import { logger } from '../../src/index.js'
import { LineCollector, maskClock, morgan, settle, waitFor } from '../helpers/logger-lines.js'
import { rawRequest, startServer } from '../helpers/server.js'
import type { Middleware, TestServer } from '../helpers/server.js'

const RUNS = Number(process.env.FOYER_FUZZ_RUNS ?? 200)

// ---- formats -------------------------------------------------------------------------------

// Marks around each clock token of a generated format. No token value can hold them: request
// bytes reach the loggers as Latin-1 and generated user names leave them out.
const OPEN = '\u27e6'
const CLOSE = '\u27e7'

const HEADER_NAMES = ['x-note', 'X-Multi', 'x-res', 'Accept', 'Content-Type', 'Cache-Control', 'Set-Cookie', 'Host', 'Content-Length', 'Connection', 'X-Missing']
const RESPONSE_HEADER_NAMES = ['x-note', 'X-Multi', 'x-res', 'Content-Type', 'Cache-Control', 'Set-Cookie']

/** `name` with the case of each letter picked by the bits of `bits`. */
function mixCase (name: string, bits: number): string {
  return [...name].map((c, i) => ((bits >> (i % 30)) & 1) === 1 ? c.toUpperCase() : c.toLowerCase()).join('')
}

const headerName = (pool: string[]): fc.Arbitrary<string> =>
  fc.tuple(fc.constantFrom(...pool), fc.nat()).map(([name, bits]) => mixCase(name, bits))

interface Piece { text: string, clock?: RegExp }

const NUMBER = (digits: number): RegExp => digits === 0 ? /^(-|\d+)$/ : new RegExp(`^(-|\\d+\\.\\d{${digits}})$`)
const CLF = /^\d{2}\/\w{3}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const WEB = /^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/

const clockToken: fc.Arbitrary<Piece> = fc.oneof(
  fc.constant({ text: ':response-time', clock: NUMBER(3) }),
  fc.integer({ min: 0, max: 3 }).map((d) => ({ text: `:response-time[${d}]`, clock: NUMBER(d) })),
  // :total-time is taken at 'close', one tick after morgan's 'finish' (README): masked as a clock token
  fc.constant({ text: ':total-time', clock: NUMBER(3) }),
  fc.integer({ min: 0, max: 3 }).map((d) => ({ text: `:total-time[${d}]`, clock: NUMBER(d) })),
  fc.constant({ text: ':date', clock: WEB }),
  fc.constantFrom(['clf', CLF], ['iso', ISO], ['web', WEB]).map(([arg, shape]) => ({ text: `:date[${arg as string}]`, clock: shape as RegExp }))
)

// Only tokens morgan knows: morgan throws on an unknown token where foyer keeps it as text (README).
// Every :req and :res has an argument: without one foyer gives '-' (README).
const plainToken: fc.Arbitrary<Piece> = fc.oneof(
  fc.constantFrom(':method', ':url', ':status', ':res[content-length]', ':referrer', ':user-agent',
    ':remote-addr', ':remote-user', ':http-version', ':pid').map((text) => ({ text })),
  headerName(HEADER_NAMES).map((name) => ({ text: `:req[${name}]` })),
  headerName(RESPONSE_HEADER_NAMES.concat('Content-Length')).map((name) => ({ text: `:res[${name}]` }))
)

// Literal text: no ':' (it could start a token) and no line break (it would split the line).
const LITERAL_CHARS = [...' "\'[](){}<>|/-_.,;=!?@#$%^&*+~`\\\tabcXYZ019\u00e9\u4e2d\u{1f600}\u2028']
const literal: fc.Arbitrary<Piece> = fc.string({ unit: fc.constantFrom(...LITERAL_CHARS), minLength: 1, maxLength: 6 }).map((text) => ({ text }))

/** Joins pieces so that literal text never extends the token before it (a name or an argument). */
function join (pieces: Piece[]): string {
  let out = ''
  let afterToken = false
  for (const piece of pieces) {
    const isToken = piece.text.startsWith(':')
    let text = piece.text
    if (isToken && piece.clock !== undefined) text = OPEN + text + CLOSE
    if (!isToken && afterToken && /^[-\w[]/.test(text)) text = ' ' + text
    out += text
    afterToken = isToken && piece.clock === undefined
  }
  return out
}

interface FormatCase { format: string, clocks: RegExp[] }

const randomFormat: fc.Arbitrary<FormatCase> = fc.array(fc.oneof(
  { arbitrary: plainToken, weight: 4 }, { arbitrary: clockToken, weight: 2 }, { arbitrary: literal, weight: 3 }
), { minLength: 1, maxLength: 10 }).map((pieces) => ({
  format: join(pieces),
  clocks: pieces.flatMap((p) => p.clock === undefined ? [] : [p.clock])
}))

// The predefined formats by name. `dev` colours :status unless NO_COLOR was set when the
// modules loaded; both loggers read the same environment.
const namedFormat: fc.Arbitrary<FormatCase> = fc.constantFrom('combined', 'common', 'short', 'tiny', 'dev')
  .map((format) => ({ format, clocks: [] }))

// ---- requests ------------------------------------------------------------------------------

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH', 'PURGE', 'PROPFIND', 'MKCOL', 'M-SEARCH', 'REPORT', 'SEARCH', 'UNLINK']

const PATH_CHARS = [...'abcXYZ019-._~!$&\'()*+,;=:@/[]|^`{}"<>\\']
const percent = fc.integer({ min: 0, max: 255 }).map((b) => '%' + b.toString(16).padStart(2, '0'))
// obs-text, sent as raw bytes (http.request refuses them in a field value); node's parser
// refuses it in the request target, even with insecureHTTPParser
const highByte = fc.integer({ min: 0x80, max: 0xff }).map((b) => String.fromCharCode(b))
const pathText = fc.string({ unit: fc.oneof({ arbitrary: fc.constantFrom(...PATH_CHARS), weight: 6 }, percent), maxLength: 12 })
const url = fc.tuple(pathText, fc.option(pathText, { nil: undefined })).map(([path, query]) => '/' + path + (query === undefined ? '' : '?' + query))

// Field values: visible ASCII, inner spaces and tabs, and obs-text bytes.
const VALUE_CHARS = [...'abcXYZ019 \t"\\\'()<>@,;:/[]?={}!#$%&*+-.^_`|~']
const fieldValue = fc.string({ unit: fc.oneof({ arbitrary: fc.constantFrom(...VALUE_CHARS), weight: 6 }, highByte), maxLength: 12 })
  .map((v) => v.trim())

// User names: quotes, backslashes, control characters and other scripts survive base64.
const USER_CHARS = [...'abcXYZ019-_. "\\\u0000\u0001\u0007\u001b\n\r\t\u007f\u0085\u009b\u2028\u2029\u00e9\u4e2d\u{1f600}']
const authorization = fc.oneof(
  fc.tuple(fc.string({ unit: fc.constantFrom(...USER_CHARS), maxLength: 8 }), fc.string({ maxLength: 4 }))
    .map(([user, pass]) => 'Basic ' + Buffer.from(`${user}:${pass}`, 'utf8').toString('base64')),
  fc.constantFrom('Basic !!!', 'Bearer abc', 'basic dTpw', 'Basic', 'Basic dXNlcg==')
)

const requestHeader = fc.oneof(
  fc.tuple(fc.constantFrom('User-Agent', 'user-agent', 'Referer', 'Referrer', 'referer'), fieldValue),
  fc.tuple(headerName(['Authorization']), authorization),
  fc.tuple(headerName(HEADER_NAMES.filter((n) => !['Host', 'Content-Length', 'Connection'].includes(n))), fieldValue)
)

interface RequestCase { method: string, url: string, version: '1.0' | '1.1', headers: Array<[string, string]> }

const requestCase: fc.Arbitrary<RequestCase> = fc.record({
  method: fc.constantFrom(...METHODS),
  url,
  version: fc.constantFrom('1.0' as const, '1.1' as const),
  // a name may come more than once: node joins, keeps the first, or makes an array
  headers: fc.array(requestHeader, { maxLength: 6 })
})

function requestBytes (r: RequestCase): Buffer {
  let head = `${r.method} ${r.url} HTTP/${r.version}\r\nHost: test\r\n`
  for (const [name, value] of r.headers) head += `${name}: ${value}\r\n`
  head += 'Connection: close\r\n\r\n'
  return Buffer.from(head, 'latin1')
}

// ---- responses -----------------------------------------------------------------------------

type HeaderValue = string | string[]
type HowSent = 'statusCode' | 'writeHead' | 'writeHeadObject' | 'writeHeadArray'

interface ResponseCase {
  // node:http refuses a 1xx as the final status
  status: number
  how: HowSent
  headers: Array<[string, HeaderValue]>
  contentLength: boolean
  chunks: string[]
}

const responseHeaderValue = fc.string({ unit: fc.oneof({ arbitrary: fc.constantFrom(...VALUE_CHARS), weight: 6 }, highByte), maxLength: 10 })
const responseCase: fc.Arbitrary<ResponseCase> = fc.record({
  status: fc.oneof(fc.constantFrom(200, 201, 204, 206, 301, 304, 400, 404, 418, 500, 503, 599), fc.integer({ min: 200, max: 599 })),
  how: fc.constantFrom<HowSent>('statusCode', 'writeHead', 'writeHeadObject', 'writeHeadArray'),
  headers: fc.array(fc.tuple(headerName(RESPONSE_HEADER_NAMES), fc.oneof(responseHeaderValue, fc.array(responseHeaderValue, { minLength: 1, maxLength: 3 }))), { maxLength: 4 }),
  contentLength: fc.boolean(),
  chunks: fc.array(fc.string({ unit: 'grapheme', maxLength: 8 }), { maxLength: 3 })
})

function respond (spec: ResponseCase, res: ServerResponse): void {
  const headers: Array<[string, HeaderValue]> = [...spec.headers]
  if (spec.contentLength) headers.push(['Content-Length', String(spec.chunks.reduce((n, c) => n + Buffer.byteLength(c), 0))])
  switch (spec.how) {
    case 'statusCode':
      res.statusCode = spec.status
      for (const [name, value] of headers) res.setHeader(name, value)
      break
    case 'writeHead':
      for (const [name, value] of headers) res.setHeader(name, value)
      res.writeHead(spec.status)
      break
    case 'writeHeadObject': {
      // names differing only in case stay separate keys, as an application may write them
      const object: OutgoingHttpHeaders = {}
      for (const [name, value] of headers) object[name] = value
      res.writeHead(spec.status, object)
      break
    }
    case 'writeHeadArray':
      res.writeHead(spec.status, headers.flatMap(([name, value]) => Array.isArray(value) ? value.flatMap((v) => [name, v]) : [name, value]))
      break
  }
  for (const chunk of spec.chunks) res.write(chunk)
  res.end()
}

// ---- options -------------------------------------------------------------------------------

const SKIPS = {
  none: undefined,
  never: () => false,
  errors: (_req: IncomingMessage, res: ServerResponse) => res.statusCode >= 400,
  head: (req: IncomingMessage) => req.method === 'HEAD',
  note: (req: IncomingMessage) => req.headers['x-note']
}

interface OptionsCase { immediate: boolean, skip: keyof typeof SKIPS }

const optionsCase: fc.Arbitrary<OptionsCase> = fc.record({
  immediate: fc.boolean(),
  skip: fc.constantFrom(...(Object.keys(SKIPS) as Array<keyof typeof SKIPS>))
})

// ---- the two servers -----------------------------------------------------------------------

type Side = 'morgan' | 'foyer'

interface Run {
  loggers: Record<Side, Middleware>
  response: ResponseCase
  reached: Record<Side, boolean>
  closed: Record<Side, boolean>
  problems: string[]
}

let current: Run | undefined
const servers: Partial<Record<Side, TestServer>> = {}

function listener (side: Side): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const run = current
    if (run === undefined) { res.statusCode = 500; res.end(); return }
    run.reached[side] = true
    res.on('close', () => { run.closed[side] = true })
    try {
      run.loggers[side](req, res, (err?: unknown) => {
        if (err !== undefined && err !== null) {
          run.problems.push(`${side} passed an error to next: ${String(err)}`)
          res.statusCode = 500
          res.end()
          return
        }
        respond(run.response, res)
      })
    } catch (err) {
      run.problems.push(`${side} threw: ${String(err)}`)
      if (!res.headersSent) res.statusCode = 500
      res.end()
    }
  }
}

/** Checks each marked clock value against the shape of its token, then masks it. */
function maskMarked (line: string, clocks: RegExp[]): string {
  const values = [...line.matchAll(new RegExp(`${OPEN}([^${CLOSE}]*)${CLOSE}`, 'g'))].map((m) => m[1] ?? '')
  assert.equal(values.length, clocks.length, `clock tokens in ${JSON.stringify(line)}`)
  values.forEach((value, i) => { assert.match(value, clocks[i] as RegExp, `clock token ${i} in ${JSON.stringify(line)}`) })
  return line.replace(new RegExp(`${OPEN}[^${CLOSE}]*${CLOSE}`, 'g'), `${OPEN}${CLOSE}`)
}

/** The predefined formats: dates and the response time in its fixed place. */
function maskNamed (line: string, format: string): string {
  const masked = maskClock(line)
  if (format === 'tiny' || format === 'short') return masked.replace(/ - (-|\d+\.\d{3}) ms$/, ' - <ms> ms')
  // eslint-disable-next-line no-control-regex -- dev's status is wrapped in colour sequences
  if (format === 'dev') return masked.replace(/^([^ ]+ [^ ]+ (?:\x1b\[\d+m)?[-\d]+(?:\x1b\[0m)?) (-|\d+\.\d{3}) ms - ([^ ]*)$/, '$1 <ms> ms - $3')
  return masked
}

interface Case { format: FormatCase, request: RequestCase, response: ResponseCase, options: OptionsCase }

async function linesFor (c: Case): Promise<{ morgan: string[], foyer: string[], problems: string[] }> {
  const collectors = { morgan: new LineCollector(), foyer: new LineCollector() }
  const options = (side: Side): Record<string, unknown> => {
    const skip = SKIPS[c.options.skip]
    return { immediate: c.options.immediate, stream: collectors[side], ...(skip === undefined ? {} : { skip }) }
  }
  const run: Run = {
    loggers: {
      morgan: morgan(c.format.format, options('morgan')),
      foyer: logger(c.format.format, options('foyer')) as Middleware
    },
    response: c.response,
    reached: { morgan: false, foyer: false },
    closed: { morgan: false, foyer: false },
    problems: []
  }
  current = run
  const bytes = requestBytes(c.request)
  const replies = await Promise.all([
    rawRequest((servers.morgan as TestServer).port, bytes),
    rawRequest((servers.foyer as TestServer).port, bytes)
  ])
  assert.ok(run.reached.morgan && run.reached.foyer, `the request reached both handlers; replies: ${JSON.stringify(replies)}`)
  await waitFor(() => run.closed.morgan && run.closed.foyer)
  // morgan writes its line synchronously; foyer's lines of one tick go out together just after
  const expected = collectors.morgan.lines
  if (expected.length > 0) await collectors.foyer.waitForLines(expected.length)
  else await settle(10)
  await settle(1)
  return { morgan: collectors.morgan.lines, foyer: collectors.foyer.lines, problems: run.problems }
}

function describeCase (c: Case): string {
  return JSON.stringify({ ...c, request: requestBytes(c.request).toString('latin1') })
}

async function check (c: Case): Promise<void> {
  const lines = await linesFor(c)
  assert.deepEqual(lines.problems, [])
  const mask = (line: string): string => c.format.clocks.length > 0 || !['combined', 'common', 'short', 'tiny', 'dev'].includes(c.format.format)
    ? maskMarked(line, c.format.clocks)
    : maskNamed(line, c.format.format)
  assert.deepEqual(lines.foyer.map(mask), lines.morgan.map(mask), `${describeCase(c)}\nmorgan: ${JSON.stringify(lines.morgan)}\nfoyer:  ${JSON.stringify(lines.foyer)}`)
}

describe('foyer and morgan side by side (property)', () => {
  before(async () => {
    servers.morgan = await startServer(listener('morgan'))
    servers.foyer = await startServer(listener('foyer'))
  })

  after(async () => {
    await servers.morgan?.close()
    await servers.foyer?.close()
  })

  it('write the same line for random requests, responses, format strings and options', async () => {
    await fc.assert(fc.asyncProperty(
      fc.record({ format: randomFormat, request: requestCase, response: responseCase, options: optionsCase }),
      check
    ), { numRuns: RUNS, includeErrorInReport: true })
  })

  it('write the same line with each predefined format', async () => {
    await fc.assert(fc.asyncProperty(
      fc.record({ format: namedFormat, request: requestCase, response: responseCase, options: optionsCase }),
      check
    ), { numRuns: RUNS, includeErrorInReport: true })
  })
})
