// Structured lines: the predefined `json` format and formats built with logger.json(), against
// real servers. morgan has no JSON output, so the lines are checked by parsing them.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { logger } from '../../src/index.js'
import type { FormatFn, JsonFormatSpec, TokenIndexer } from '../../src/index.js'
import { answer, LineCollector, serve, settle } from '../helpers/logger-lines.js'
import { rawSocket, request } from '../helpers/server.js'
import type { Handler, RequestOptions } from '../helpers/server.js'

/** The lines `format` writes for one request made with `options`, handled by `handler`. */
async function linesFor (format: string | FormatFn, options: RequestOptions = {}, handler: Handler = answer(200, 'hello')): Promise<string[]> {
  const collector = new LineCollector()
  const server = await serve([logger(format, { stream: collector })], handler)
  try {
    await request(server.port, options)
    return await collector.waitForLines(1)
  } finally {
    await server.close()
  }
}

async function objectFor (format: string | FormatFn, options: RequestOptions = {}, handler?: Handler): Promise<Record<string, unknown>> {
  const [line] = await linesFor(format, options, handler)
  return JSON.parse(line as string) as Record<string, unknown>
}

const BROWSER = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0',
  referer: 'https://example.com/from'
}

describe('the json format', () => {
  it('writes one JSON object per line with the request and the response', async () => {
    const line = await objectFor('json', { path: '/a?b=1', headers: { ...BROWSER, authorization: 'Basic ' + Buffer.from('ada:pw').toString('base64') } })
    assert.deepEqual(Object.keys(line), ['time', 'method', 'url', 'status', 'responseTimeMs', 'contentLength', 'remoteAddr', 'remoteUser', 'referrer', 'userAgent', 'httpVersion'])
    assert.match(line.time as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    assert.equal(line.method, 'GET')
    assert.equal(line.url, '/a?b=1')
    assert.equal(line.status, 200)
    assert.equal(typeof line.responseTimeMs, 'number')
    assert.ok((line.responseTimeMs as number) >= 0)
    assert.equal(line.contentLength, 5)
    assert.equal(line.remoteAddr, '127.0.0.1')
    assert.equal(line.remoteUser, 'ada')
    assert.equal(line.referrer, 'https://example.com/from')
    assert.equal(line.userAgent, 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0')
    assert.equal(line.httpVersion, '1.1')
  })

  it('ends each object with a newline, one object per line', async () => {
    const collector = new LineCollector()
    const server = await serve([logger('json', { stream: collector })], answer())
    try {
      await request(server.port)
      await request(server.port)
      const lines = await collector.waitForLines(2)
      assert.ok(collector.text.endsWith('}\n'))
      for (const line of lines) assert.equal(typeof JSON.parse(line), 'object')
    } finally {
      await server.close()
    }
  })

  it('leaves out the keys whose token has no value', async () => {
    const line = await objectFor('json', {}, answer(204, ''))
    assert.equal(line.status, 204)
    for (const key of ['remoteUser', 'referrer', 'contentLength']) assert.equal(key in line, false, key)
    assert.equal('userAgent' in line, false)
  })

  it('leaves out status and response time when the client went away before any response', async () => {
    const collector = new LineCollector()
    const server = await serve([logger('json', { stream: collector })], () => { /* never answers */ })
    try {
      const socket = await rawSocket(server.port)
      socket.write('GET /gone HTTP/1.1\r\nHost: x\r\n\r\n')
      await settle(30)
      socket.destroy()
      const [line] = await collector.waitForLines(1)
      const parsed = JSON.parse(line as string) as Record<string, unknown>
      assert.equal(parsed.url, '/gone')
      assert.equal('status' in parsed, false)
      assert.equal('responseTimeMs' in parsed, false)
    } finally {
      await server.close()
    }
  })

  it('checks every value, whatever the same key held before (clean, escaped, same length)', async () => {
    // Each value equals the one the key held before, or differs from it by one character.
    const agents = ['agent-1.0', 'agent-1.1', 'agent"1.0', 'agent"1.0', 'agent-1.0', 'agent\\1.0', 'agent\u00851.0', 'agent\u00851.0', 'agent-1.0', 'agent-1.0x']
    const collector = new LineCollector()
    const server = await serve([logger('json', { stream: collector })], answer())
    try {
      for (const agent of agents) await request(server.port, { headers: { 'user-agent': agent } })
      const lines = await collector.waitForLines(agents.length)
      assert.deepEqual(lines.map((line) => (JSON.parse(line) as { userAgent: string }).userAgent), agents)
      assert.deepEqual(lines.map((line) => line.slice(line.indexOf('"userAgent":'), line.indexOf(',"httpVersion"'))), [
        '"userAgent":"agent-1.0"', '"userAgent":"agent-1.1"', '"userAgent":"agent\\"1.0"', '"userAgent":"agent\\"1.0"', '"userAgent":"agent-1.0"',
        '"userAgent":"agent\\\\1.0"', '"userAgent":"agent\\u00851.0"', '"userAgent":"agent\\u00851.0"', '"userAgent":"agent-1.0"', '"userAgent":"agent-1.0x"'
      ])
    } finally {
      await server.close()
    }
  })

  it('escapes quotes and backslashes in header values once, as JSON does', async () => {
    const line = await objectFor('json', { headers: { 'user-agent': 'a "quoted" \\ agent' } })
    assert.equal(line.userAgent, 'a "quoted" \\ agent')
  })
})

describe('logger.json', () => {
  it('maps each key to the value of its token', async () => {
    const line = await objectFor(logger.json({ verb: ':method', path: ':url', id: ':req[x-request-id]' }), { path: '/p', headers: { 'x-request-id': 'r-1' } })
    assert.deepEqual(line, { verb: 'GET', path: '/p', id: 'r-1' })
  })

  it('keeps values that are numbers by nature as numbers', async () => {
    const line = await objectFor(logger.json({
      status: ':status',
      ms: ':response-time',
      total: ':total-time[1]',
      length: ':res[content-length]',
      sent: ':res-bytes',
      pid: ':pid',
      inLength: ':req[Content-Length]',
      age: ':res[age]',
      hops: ':req[max-forwards]',
      version: ':http-version'
    }), { body: 'abc', headers: { 'content-length': '3', 'max-forwards': '4' } }, (_req, res) => {
      res.setHeader('age', '42')
      res.setHeader('content-length', '5')
      res.end('hello')
    })
    assert.equal(line.status, 200)
    assert.equal(typeof line.ms, 'number')
    assert.equal(typeof line.total, 'number')
    assert.equal(line.length, 5)
    assert.equal(line.sent, 5)
    assert.equal(line.pid, process.pid)
    assert.equal(line.inLength, 3)
    assert.equal(line.age, 42)
    assert.equal(line.hops, 4)
    assert.equal(line.version, '1.1', 'a version is text, not a number')
  })

  it('writes a numeric header as a JSON number when its text is one, through Number() when close, else as text', async () => {
    const texts = ['0', '7', '10', '200', '0.5', '12.375', '00', '01', '.5', '5.', '1.2.3', '-1', '-0.25', '+5', '1e3', '2E-2', '0.0',
      '123456789012345678901234567890', 'abc', '0x10', '0b11', '0o17', '1e400', '-1e400', 'Infinity', '1_000', '5 5', '9.', '0..1', '1.5e', '5\u00a0', '\u00a05']
    const collector = new LineCollector()
    const server = await serve([logger(logger.json({ v: ':req[max-forwards]' }), { stream: collector })], answer(200, 'ok'))
    try {
      for (const text of texts) await request(server.port, { headers: { 'max-forwards': text } })
      const lines = await collector.waitForLines(texts.length)
      texts.forEach((text, i) => {
        // what the value must be: the text itself when it is a JSON number, the number Number()
        // reads from other decimal text, and the text as a string when it is not decimal (`0x10`)
        // or no finite number (`1e400`, which JSON.parse would read as Infinity); around it, only
        // the spaces and tabs of HTTP (a no-break space, an obs-text byte, keeps it text)
        const n = Number(text)
        const decimal = /^[ \t]*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[ \t]*$/.test(text) && Number.isFinite(n)
        const literal = !decimal ? JSON.stringify(text) : /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(text) ? text : String(n)
        assert.equal(lines[i], `{"v":${literal}}`, `max-forwards ${JSON.stringify(text)}`)
      })
    } finally {
      await server.close()
    }
  })

  it('writes a value mixing text and tokens as a string, with - for a token without value', async () => {
    const line = await objectFor(logger.json({ request: ':method :url', who: 'user=:remote-user' }), { path: '/x' })
    assert.deepEqual(line, { request: 'GET /x', who: 'user=-' })
  })

  it('escapes strings as JSON requires, and DEL, C1 controls, U+2028 and U+2029 too', async () => {
    const nasty = 'quote " backslash \\ newline \n tab \t nul \u0000 esc \u001b del \u007f csi \u009b emoji \ud83d\ude00 lone \ud800 ls \u2028 ps \u2029 end'
    logger.token('json-test-nasty', () => nasty)
    const [line] = await linesFor(logger.json({ v: ':json-test-nasty' }))
    assert.equal(JSON.parse(line as string).v, nasty, 'the value survives unchanged')
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(line as string, /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ud800]/)
    assert.match(line as string, /\\u2028 ps \\u2029/)
  })

  it('uses user tokens', async () => {
    logger.token('json-test-tenant', (req) => req.headers['x-tenant'] as string | undefined)
    const line = await objectFor(logger.json({ tenant: ':json-test-tenant' }), { headers: { 'x-tenant': 'acme' } })
    assert.deepEqual(line, { tenant: 'acme' })
  })

  it('keeps the JSON type of a user token giving a number or a boolean, which a text line prints as morgan does', async () => {
    logger.token('json-test-bytes-in', (req) => req.socket.bytesRead)
    logger.token('json-test-cached', (_req, res) => res.getHeader('x-cache') === 'HIT')
    logger.token('json-test-zero', () => 0)
    logger.token('json-test-null', () => null)
    const cached: Handler = (_req, res) => { res.setHeader('x-cache', 'HIT'); res.end('ok') }
    const object = await objectFor(logger.json({ bytesIn: ':json-test-bytes-in', cached: ':json-test-cached', zero: ':json-test-zero', none: ':json-test-null' }), {}, cached)
    assert.equal(typeof object.bytesIn, 'number')
    assert.ok((object.bytesIn as number) > 0)
    assert.deepEqual({ ...object, bytesIn: 0 }, { bytesIn: 0, cached: true, zero: 0 })
    const [line] = await linesFor(':json-test-bytes-in :json-test-cached :json-test-zero :json-test-null', {}, cached)
    assert.match(line as string, /^[1-9]\d* true - -$/)
  })

  it('sees a token defined again after the format was used, and escapes a replaced built-in token', async () => {
    const format = logger.json({ who: ':json-test-again', time: ':date[iso]' })
    const table = logger as unknown as Parameters<typeof format>[0]
    const req = {} as IncomingMessage
    const res = {} as ServerResponse
    logger.token('json-test-again', () => 'first')
    assert.equal((JSON.parse(format(table, req, res)) as { who: string }).who, 'first')
    logger.token('json-test-again', () => 'second')
    assert.equal((JSON.parse(format(table, req, res)) as { who: string }).who, 'second')
    const builtinDate = (logger as unknown as TokenIndexer).date
    try {
      logger.token('date', () => 'a "quoted"\nvalue')
      assert.deepEqual(JSON.parse(format(table, req, res)), { who: 'second', time: 'a "quoted"\nvalue' })
    } finally {
      logger.token('date', builtinDate)
    }
    assert.match((JSON.parse(format(table, req, res)) as { time: string }).time, /^\d{4}-\d\d-\d\dT/)
  })

  it('escapes values once, the JSON way, when a format function passes on a table made from the one it got, or a copy of it', async () => {
    const spec = { ua: ':user-agent', ref: ':referrer', both: ':user-agent|:referrer' }
    const structured = logger.json(spec)
    const derived: FormatFn = (tokens, req, res) => structured(Object.create(tokens) as TokenIndexer, req, res)
    const proxied: FormatFn = (tokens, req, res) => structured(new Proxy(tokens, {}), req, res)
    const spread: FormatFn = (tokens, req, res) => structured({ ...tokens }, req, res)
    const assigned: FormatFn = (tokens, req, res) => structured(Object.assign({}, tokens), req, res)
    const headers = { 'user-agent': 'a"b\\c', referer: 'x\ty' }
    const expected = { ua: 'a"b\\c', ref: 'x\ty', both: 'a"b\\c|x\ty' }
    assert.deepEqual(await objectFor(logger.json(spec), { headers }), expected)
    assert.deepEqual(await objectFor(derived, { headers }), expected)
    assert.deepEqual(await objectFor(proxied, { headers }), expected)
    assert.deepEqual(await objectFor(spread, { headers }), expected)
    assert.deepEqual(await objectFor(assigned, { headers }), expected)
  })

  it('writes a user token\'s Infinity as text, which JSON has no number for, and leaves NaN out, as a text line prints -', async () => {
    logger.token('json-test-infinite', (req) => req.headers['x-sign'] === '-' ? -Infinity : Infinity)
    logger.token('json-test-nan', () => Number.NaN)
    const spec = { ratio: ':json-test-infinite', nan: ':json-test-nan', status: ':status' }
    assert.deepEqual(await objectFor(logger.json(spec)), { ratio: 'Infinity', status: 200 })
    assert.deepEqual(await objectFor(logger.json(spec), { headers: { 'x-sign': '-' } }), { ratio: '-Infinity', status: 200 })
  })

  it('leaves out a key whose token gives - or nothing, and keeps an unknown token as written', async () => {
    logger.token('json-test-dash', () => '-')
    const line = await objectFor(logger.json({ dash: ':json-test-dash', none: ':req[x-absent]', literal: 'fixed', unknown: ':no-such-token' }))
    assert.deepEqual(line, { literal: 'fixed', unknown: ':no-such-token' })
  })

  it('can be registered as a named format', async () => {
    logger.format('json-test-named', logger.json({ s: ':status', m: ':method' }))
    assert.deepEqual(await objectFor('json-test-named'), { s: 200, m: 'GET' })
  })

  it('is typed as a format function taking a spec', () => {
    const spec: JsonFormatSpec = { status: ':status' }
    const fn: FormatFn = logger.json(spec)
    assert.equal(typeof fn, 'function')
  })

  it('throws a TypeError for a spec that is not an object of format strings', async () => {
    assert.throws(() => logger.json(null as unknown as JsonFormatSpec), TypeError)
    assert.throws(() => logger.json(['a'] as unknown as JsonFormatSpec), TypeError)
    assert.throws(() => logger.json({ a: 1 } as unknown as JsonFormatSpec), /key "a"/)
    // objects whose keys are not the spec's: a Map, a Set, a Date, a RegExp, a String object
    for (const spec of [new Map([['status', ':status']]), new Set([':status']), new Date(0), /:status/, Object(':status') as object]) {
      assert.throws(() => logger.json(spec as unknown as JsonFormatSpec), TypeError, Object.prototype.toString.call(spec))
    }
    // a frozen object, one without a prototype, or one with a tag of its own (a class's, or
    // 'Module', a module namespace's), is a spec as any other
    class Fields { status = ':status'; url = ':url'; get [Symbol.toStringTag] (): string { return 'Fields' } }
    const namespaceLike = Object.freeze(Object.assign(Object.create(null) as JsonFormatSpec, { status: ':status', url: ':url', [Symbol.toStringTag]: 'Module' }))
    for (const spec of [Object.freeze({ status: ':status', url: ':url' }), Object.assign(Object.create(null) as JsonFormatSpec, { status: ':status', url: ':url' }), new Fields(), namespaceLike]) {
      assert.deepEqual(await objectFor(logger.json(spec as JsonFormatSpec), { path: '/n' }), { status: 200, url: '/n' })
    }
  })

  it('gives every line the object of its own values, whatever the lines before it were (property)', () => {
    // Keys whose tokens usually repeat (method, status, ...) keep their text for an equal value;
    // a key left out moves the comma to the next one.
    const names = ['method', 'status', 'http-version', 'remote-user', 'pid', 'date', 'url']
    const token = fc.constantFrom(...names.map((name) => `:${name}`), ':date[clf]', ':date[iso]')
    const value = fc.constantFrom<unknown>('GET', '200', '', '-', undefined, 0, 201, true, 'a"b', 'x\u2028y')
    const line = fc.record(Object.fromEntries(names.map((name) => [name, value])))
    fc.assert(fc.property(fc.array(token, { minLength: 1, maxLength: 6 }), fc.array(line, { minLength: 1, maxLength: 10 }), (tokens, lines) => {
      const spec = Object.fromEntries(tokens.map((t, i) => [`k${i}`, t]))
      const kept = logger.json(spec)
      let current: Record<string, unknown> = {}
      const table = new Proxy({}, {
        get: (_t, name) => typeof name === 'string' ? () => current[name] : undefined
      }) as unknown as TokenIndexer
      const req = {} as IncomingMessage
      const res = {} as ServerResponse
      for (const values of lines) {
        current = values
        assert.equal(kept(table, req, res), logger.json(spec)(table, req, res), `${JSON.stringify(spec)} with ${JSON.stringify(values)}`)
      }
    }), { numRuns: 300 })
  })

  it('never lets a token that throws crash the server', async () => {
    logger.token('json-test-throws', () => { throw new Error('boom') })
    const collector = new LineCollector()
    const handler = (_req: IncomingMessage, res: ServerResponse): void => { res.end('ok') }
    const server = await serve([logger(logger.json({ v: ':json-test-throws' }), { stream: collector })], handler)
    try {
      const reply = await request(server.port)
      assert.equal(reply.status, 200)
      await settle(30)
      assert.equal(collector.text, '')
    } finally {
      await server.close()
    }
  })
})
