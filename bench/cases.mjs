// The benchmark cases. Adding a case is one entry in CASES below: the request it sends, what
// the parsed body must be (body cases) or the format it logs with (logger cases), and which
// variants take part. The server (server.mjs) and the runner (run.mjs) both read this table.
import { gzipSync } from 'node:zlib'

/** The floor of each group: what a server costs without the middleware under test. */
export const FLOOR = { body: 'bare', logger: 'none' }

// BENCH_BASELINE=dir adds the variant `baseline`: foyer loaded from another build (a copy of an
// earlier dist/), to compare a change with what it replaces side by side. Several directories,
// comma-separated, add `baseline`, `baseline-2`, ... in that order.
export const BASELINE_DIRS = (process.env.BENCH_BASELINE ?? '').split(',').map(dir => dir.trim()).filter(Boolean)
const BASELINE = BASELINE_DIRS.map((_, i) => i === 0 ? 'baseline' : `baseline-${i + 1}`)

/** The build directory of a baseline variant, or undefined for any other variant. */
export function baselineDir (variant) {
  const i = BASELINE.indexOf(variant)
  return i === -1 ? undefined : BASELINE_DIRS[i]
}

/** Every variant of a group, in the order the report shows them. */
export const GROUP_VARIANTS = {
  body: ['bare', 'body-parser', 'fastify', ...BASELINE, 'foyer'],
  logger: ['none', 'fixed-line', 'minimal', 'morgan', 'pino-http', ...BASELINE, 'foyer']
}

// A browser-like GET for the logger cases: the headers combined and the custom format read.
const PAGE_REQUEST = {
  method: 'GET',
  path: '/products/4711/reviews?sort=newest&page=2',
  headers: {
    'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
    referer: 'https://shop.example.com/products/4711?utm_source=newsletter',
    accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    'accept-language': 'en-GB,en;q=0.9,de;q=0.7',
    'x-request-id': '6f1c2d4e-8a9b-4c3d-9e2f-1a2b3c4d5e6f'
  }
}

// Deterministic pseudo-random numbers, so every process builds byte-identical payloads.
function numbers (seed) {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state
  }
}

const JSON_SMALL = { id: 4711, user: 'ada', email: 'ada@example.com', roles: ['admin', 'dev'], active: true, score: 98.5 }

function jsonRecords (bytes) {
  const next = numbers(7)
  const cities = ['London', 'Zürich', 'São Paulo', 'Kraków', 'Osaka', 'Nairobi']
  const records = []
  for (let id = 1; JSON.stringify(records).length < bytes; id++) {
    const n = next()
    records.push({
      id,
      name: `customer ${id}`,
      email: `customer${id}@example.com`,
      active: n % 3 !== 0,
      balance: (n % 100000) / 100,
      tags: ['retail', n % 2 ? 'priority' : 'standard'],
      address: { city: cities[n % cities.length], zip: String(10000 + n % 89999) }
    })
  }
  return records
}

// Form fields as a browser sends them: percent-encoded, spaces as '+'.
function formEncode (pairs) {
  const encode = s => encodeURIComponent(s).replace(/%20/g, '+')
  return pairs.map(([key, value]) => `${encode(key)}=${encode(value)}`).join('&')
}

const FORM_FIELDS = [
  ['first_name', 'Ada'], ['last_name', 'Lovelace'], ['email', 'ada@example.com'],
  ['phone', '+44 20 7946 0958'], ['street', '12 St James\'s Square'], ['city', 'London'],
  ['postcode', 'SW1Y 4JH'], ['country', 'GB'], ['company', 'Analytical Engines & Co'],
  ['job_title', 'Programmer'], ['newsletter', 'on'], ['terms', 'accepted'],
  ['plan', 'pro'], ['seats', '12'], ['billing', 'annual'], ['coupon', 'SPRING-24'],
  ['referrer', 'https://example.com/pricing?ref=nav'], ['locale', 'en-GB'],
  ['timezone', 'Europe/London'], ['comment', 'Please call after 5pm. Thanks!']
]

// Nested keys, the syntax `extended: true` exists for; 20 fields.
const NESTED_ORDER = {
  order: {
    id: '1001',
    currency: 'EUR',
    customer: {
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      address: { street: '12 St James\'s Square', city: 'London', zip: 'SW1Y 4JH', country: 'GB' }
    },
    items: [
      { sku: 'A-100', qty: '2', price: '9.99' },
      { sku: 'B-220', qty: '1', price: '24.50' },
      { sku: 'C-310', qty: '5', price: '1.25' }
    ],
    note: 'Leave at the door',
    gift: 'true',
    coupon: 'SPRING-24'
  }
}

function nestedPairs (value, prefix, out = []) {
  if (typeof value === 'string') {
    out.push([prefix, value])
  } else {
    for (const [key, child] of Object.entries(value)) nestedPairs(child, prefix ? `${prefix}[${key}]` : key, out)
  }
  return out
}

function loremText (bytes) {
  const words = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'café', 'naïve', 'consectetur', 'adipiscing', 'elit', 'über', 'sed', 'do', 'eiusmod', 'tempor']
  const next = numbers(11)
  let text = ''
  while (Buffer.byteLength(text) < bytes) {
    const line = []
    for (let i = 0; i < 12; i++) line.push(words[next() % words.length])
    text += line.join(' ') + '.\n'
  }
  return text
}

function randomBytes (length) {
  const next = numbers(13)
  const buf = Buffer.alloc(length)
  for (let i = 0; i < length; i++) buf[i] = next() >>> 24
  return buf
}

// Loose equality for parsed values: body-parser and qs give objects without a prototype,
// which deepStrictEqual would reject; JSON text compares structure and order alike.
const sameJson = (a, b) => a !== undefined && JSON.stringify(a) === JSON.stringify(b)

function describe (value) {
  if (value === undefined) return 'req.body is undefined (the body was not parsed)'
  if (Buffer.isBuffer(value)) return `a Buffer of ${value.length} bytes`
  if (typeof value === 'string') return `a string of ${value.length} characters`
  return `${JSON.stringify(value).slice(0, 80)}...`
}

/**
 * Checks one parsed body against the payload the case sends.
 * @returns {string | null} null when right, otherwise why not
 */
export function checkBody (c, variant, body) {
  const { expected, expectedBare } = payloadOf(c)
  let ok
  if (c.parser === 'raw') ok = Buffer.isBuffer(body) && body.equals(expected)
  else if (c.parser === 'text') ok = body === expected
  else ok = sameJson(body, variant === 'bare' && expectedBare ? expectedBare : expected)
  return ok ? null : `parsed body is wrong: got ${describe(body)}`
}

const payloads = new Map()
/** The request body of a body case (memoised: built once per process). */
export function payloadOf (c) {
  let p = payloads.get(c.name)
  if (!p) {
    p = c.payload()
    p.body = Buffer.from(p.body)
    payloads.set(c.name, p)
  }
  return p
}

/** The request autocannon sends for a case. */
export function requestOf (c) {
  if (c.group === 'logger') return { ...PAGE_REQUEST, headers: { ...PAGE_REQUEST.headers } }
  const headers = { 'content-type': c.contentType }
  if (c.encoding) headers['content-encoding'] = c.encoding
  return { method: 'POST', path: '/', headers, body: payloadOf(c).body }
}

/** The format a logger variant uses: one for all, or one per variant (`{ morgan, foyer }`). */
export function formatOf (c, variant) {
  const as = baselineDir(variant) === undefined ? variant : 'foyer'
  return typeof c.format === 'object' ? c.format[as] : c.format
}

function bodyCase (name, parser, contentType, payload, extra = {}) {
  // fastify parses JSON only out of the box (and does not inflate Content-Encoding).
  const fastify = parser === 'json' && !extra.encoding
  return {
    name,
    group: 'body',
    parser,
    options: {},
    contentType,
    payload,
    variants: GROUP_VARIANTS.body.filter(v => v !== 'fastify' || fastify),
    ...extra
  }
}

function loggerCase (name, format, fixedLine, minimalLine, extra = {}) {
  return { name, group: 'logger', format, fixedLine, minimalLine, variants: GROUP_VARIANTS.logger, ...extra }
}

// The lines of the `fixed-line` variant: each case's line for the page request, with its values
// fixed (a date, a response time) except the URL, which is the request's own (so the start-up
// check finds its marker in the file).
const PAGE = PAGE_REQUEST.headers
const FIXED_LINES = {
  combined: url => `127.0.0.1 - - [22/Nov/2026:21:00:00 +0000] "GET ${url} HTTP/1.1" 200 2 "${PAGE.referer}" "${PAGE['user-agent']}"`,
  dev: url => `\x1b[0mGET ${url} \x1b[32m200\x1b[0m 0.125 ms - 2\x1b[0m`,
  json: url => `{"time":"2026-11-22T21:00:00.125Z","method":"GET","url":"${url}","status":200,"responseTimeMs":0.125,"contentLength":2,"remoteAddr":"127.0.0.1","referrer":"${PAGE.referer}","userAgent":"${PAGE['user-agent']}","httpVersion":"1.1"}`,
  custom: url => `127.0.0.1 GET ${url} 200 2 ${PAGE['x-request-id']} ${PAGE['accept-language']} ${PAGE['user-agent']} 0.125 ms`
}

// The lines of the `minimal` variant: each case's line written by hand from the request and the
// response when it finishes, with none of the token language. `ms` is the time since the request
// came to the logger, in milliseconds. The content length is what `res.getHeader` gives, which is
// nothing for the bench's answer (its headers go to writeHead as an object): `-`, or no key.
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const two = n => n < 10 ? `0${n}` : `${n}`
let clfSecond = -1
let clfText = ''
// The date in the common log format, made once per second.
function clfDate () {
  const second = Math.floor(Date.now() / 1000)
  if (second !== clfSecond) {
    const d = new Date(second * 1000)
    clfSecond = second
    clfText = `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`
  }
  return clfText
}
let isoMillisecond = -1
let isoText = ''
// The date as an ISO string, made once per millisecond.
function isoDate () {
  const now = Date.now()
  if (now !== isoMillisecond) {
    isoMillisecond = now
    isoText = new Date(now).toISOString()
  }
  return isoText
}
const orDash = value => value === undefined ? '-' : value
// A JSON string: JSON.stringify only for a text that needs escaping (it costs about 250 ns for a
// user agent on Node.js 20).
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\x00-\x1f]/
const jsonString = text => NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`
const MINIMAL_LINES = {
  combined: (req, res) => `${req.socket.remoteAddress} - - [${clfDate()}] "${req.method} ${req.url} HTTP/${req.httpVersion}" ${res.statusCode} ${orDash(res.getHeader('content-length'))} "${orDash(req.headers.referer)}" "${orDash(req.headers['user-agent'])}"`,
  dev: (req, res, ms) => `\x1b[0m${req.method} ${req.url} \x1b[32m${res.statusCode}\x1b[0m ${ms.toFixed(3)} ms - ${orDash(res.getHeader('content-length'))}\x1b[0m`,
  json: (req, res, ms) => {
    const length = res.getHeader('content-length')
    const { referer, 'user-agent': agent } = req.headers
    return `{"time":"${isoDate()}","method":"${req.method}","url":${jsonString(req.url)},"status":${res.statusCode},"responseTimeMs":${ms.toFixed(3)}` +
      `${length === undefined ? '' : `,"contentLength":${length}`},"remoteAddr":"${req.socket.remoteAddress}"` +
      `${referer === undefined ? '' : `,"referrer":${jsonString(referer)}`}${agent === undefined ? '' : `,"userAgent":${jsonString(agent)}`},"httpVersion":"${req.httpVersion}"}`
  },
  custom: (req, res, ms) => `${req.socket.remoteAddress} ${req.method} ${req.url} ${res.statusCode} ${orDash(res.getHeader('content-length'))} ${orDash(req.headers['x-request-id'])} ${orDash(req.headers['accept-language'])} ${orDash(req.headers['user-agent'])} ${ms.toFixed(3)} ms`
}

// Three request headers, the kind of line a team writes for its own log pipeline.
const CUSTOM_FORMAT = ':remote-addr :method :url :status :res[content-length] :req[x-request-id] :req[accept-language] :req[user-agent] :response-time ms'

const MINIMAL_NOTE = 'minimal: the least a logger does: one listener on each response\'s \'finish\', where the case\'s line is written by hand from the request and the response (the content length as `res.getHeader` gives it), without a token language, morgan\'s fields, escaping, async context, or a line for a connection that fails; written as fixed-line writes. What a logger that writes these lines from real values pays at the least.'

const PINO_NOTE = 'pino-http has no token language: it writes its default JSON line (req, res, responseTime) to a pino.destination file in every logger case.'

const FIXED_LINE_NOTE = 'fixed-line: no logger, only the writing: per request the case\'s line with fixed values and the request\'s URL, encoded into a buffer, which goes to the file stream in one write every 10 ms, as foyer batches. What any logger writing these bytes to a file pays before it makes a line.'

// morgan has no JSON output: a format function building the same object as foyer's 'json'
// format from morgan's tokens, leaving out keys without a value as foyer does.
function morganJsonLine (tokens, req, res) {
  const number = value => value === undefined ? undefined : Number(value)
  return JSON.stringify({
    time: tokens.date(req, res, 'iso'),
    method: tokens.method(req, res),
    url: tokens.url(req, res),
    status: number(tokens.status(req, res)),
    responseTimeMs: number(tokens['response-time'](req, res)),
    contentLength: number(tokens.res(req, res, 'content-length')),
    remoteAddr: tokens['remote-addr'](req, res),
    remoteUser: tokens['remote-user'](req, res),
    referrer: tokens.referrer(req, res),
    userAgent: tokens['user-agent'](req, res),
    httpVersion: tokens['http-version'](req, res)
  })
}
export const CASES = [
  bodyCase('json-small', 'json', 'application/json', () => {
    const text = JSON.stringify(JSON_SMALL)
    return { body: text, expected: JSON_SMALL }
  }),
  bodyCase('json-40kb', 'json', 'application/json', () => {
    const records = jsonRecords(40 * 1024)
    return { body: JSON.stringify(records), expected: records }
  }),
  bodyCase('urlencoded', 'urlencoded', 'application/x-www-form-urlencoded', () => (
    { body: formEncode(FORM_FIELDS), expected: Object.fromEntries(FORM_FIELDS) }
  ), { options: { extended: false } }),
  bodyCase('urlencoded-extended', 'urlencoded', 'application/x-www-form-urlencoded', () => {
    const pairs = nestedPairs(NESTED_ORDER, '')
    // the floor's URLSearchParams keeps the bracketed keys flat
    return { body: formEncode(pairs), expected: NESTED_ORDER, expectedBare: Object.fromEntries(pairs) }
  }, {
    options: { extended: true },
    note: 'urlencoded-extended: 20 nested fields (order[customer][address][city]=...), brackets percent-encoded as browsers send them; the floor is URLSearchParams, which leaves the keys flat.'
  }),
  bodyCase('text-40kb', 'text', 'text/plain', () => {
    const text = loremText(40 * 1024)
    return { body: text, expected: text }
  }),
  bodyCase('raw-40kb', 'raw', 'application/octet-stream', () => {
    const bytes = randomBytes(40 * 1024)
    return { body: bytes, expected: bytes }
  }),
  bodyCase('json-gzip', 'json', 'application/json', () => {
    const records = jsonRecords(40 * 1024)
    return { body: gzipSync(JSON.stringify(records)), expected: records }
  }, {
    encoding: 'gzip',
    note: 'json-gzip: the json-40kb body gzip-encoded; fastify is not measured because it does not inflate Content-Encoding by default.'
  }),
  loggerCase('combined-file', 'combined', FIXED_LINES.combined, MINIMAL_LINES.combined, {
    note: 'combined-file: the predefined \'combined\' format to fs.createWriteStream of a temporary file (morgan, foyer).'
  }),
  loggerCase('dev', 'dev', FIXED_LINES.dev, MINIMAL_LINES.dev, {
    note: 'dev: written to a file stream like the other cases (not /dev/null), so the start-up check can read the line back; morgan and foyer colour the status with ANSI codes there too.'
  }),
  loggerCase('json-file', { morgan: morganJsonLine, foyer: 'json' }, FIXED_LINES.json, MINIMAL_LINES.json, {
    note: 'json-file: one JSON object per line to a file stream: foyer\'s \'json\' format, and for morgan a format function building the same object with JSON.stringify.'
  }),
  loggerCase('custom', CUSTOM_FORMAT, FIXED_LINES.custom, MINIMAL_LINES.custom, {
    note: `custom: \`${CUSTOM_FORMAT}\` to a file stream (morgan, foyer).`
  })
]

/** Notes the report prints under the table, by variant: a report carries those of the variants it ran. */
export const NOTES = { 'fixed-line': FIXED_LINE_NOTE, minimal: MINIMAL_NOTE, 'pino-http': PINO_NOTE }

export function caseByName (name) {
  const c = CASES.find(c => c.name === name)
  if (!c) throw new Error(`unknown case ${name}; known: ${CASES.map(c => c.name).join(', ')}`)
  return c
}
