// Every built-in token and argument form, checked against what morgan 1.12 writes for the same
// request where morgan defines the value, plus user tokens and overriding built-ins.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Agent, request as httpRequest, ServerResponse } from 'node:http'
import type { IncomingMessage } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { request as httpsRequest } from 'node:https'
import type { AddressInfo } from 'node:net'
import { connect as http2Connect, createServer as createHttp2Server } from 'node:http2'
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2'
import { Readable } from 'node:stream'
import { runInNewContext } from 'node:vm'
import { logger } from '../../src/index.js'
import type { FormatFn, TokenFn } from '../../src/index.js'
import { answer, compareWithMorgan, LineCollector, morgan, serve, settle, waitFor } from '../helpers/logger-lines.js'
import { TLS_CERT, TLS_KEY } from '../helpers/logger-tls.js'
import { rawRequest, rawSocket, request } from '../helpers/server.js'
import type { Middleware } from '../helpers/server.js'

type Req = IncomingMessage & { originalUrl?: string | undefined, ip?: string | undefined }

/** The line foyer writes for `format` and one request, checked equal to morgan's. */
async function line (format: string, send: (port: number) => Promise<unknown>, options: Parameters<typeof compareWithMorgan>[2] = {}): Promise<string> {
  const { ours, theirs } = await compareWithMorgan(format, send, options)
  assert.equal(ours, theirs, 'the same line as morgan')
  return ours
}

const get = (path = '/', headers: Record<string, string | string[]> = {}) => async (port: number) => await request(port, { path, headers })
const raw = (text: string) => async (port: number) => await rawRequest(port, text)

describe(':url', () => {
  it('is the request URL with its query', async () => {
    assert.equal(await line(':url', get('/a/b?c=d&e')), '/a/b?c=d&e')
  })

  it('prefers req.originalUrl, which Express keeps when routers rewrite req.url', async () => {
    const rewrite: Middleware = (req, _res, next) => { (req as Req).originalUrl = req.url; req.url = '/inner'; next() }
    assert.equal(await line(':url', get('/outer'), { before: [rewrite] }), '/outer')
  })
})

describe(':method', () => {
  it('is the request method', async () => {
    assert.equal(await line(':method', async (port) => await request(port, { method: 'DELETE', path: '/x' })), 'DELETE')
  })
})

// The client sends a request, then goes away before any response.
async function abandon (port: number, path = '/'): Promise<void> {
  const socket = await rawSocket(port)
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`)
  await new Promise((resolve) => setTimeout(resolve, 30))
  socket.destroy()
}

describe(':status', () => {
  it('is the response status code', async () => {
    assert.equal(await line(':status', get(), { handler: answer(418, 'teapot') }), '418')
  })

  it('is - when the client went away before any response', async () => {
    const text = await line(':status', abandon, { handler: () => { /* never answers */ } })
    assert.equal(text, '-')
  })

  it('is - with immediate, which logs before any response', async () => {
    assert.equal(await line(':status', get(), { options: { immediate: true } }), '-')
  })

  it('escapes a status code replaced by text after the headers went out', async () => {
    const handler = (_req: IncomingMessage, res: ServerResponse): void => {
      res.writeHead(200)
      ;(res as { statusCode: unknown }).statusCode = '2"\r\n00'
      res.end()
    }
    assert.equal(await line(':status', get(), { handler }), '2\\"\\r\\n00')
  })
})

describe(':response-time[digits]', () => {
  it('reads process.hrtime at each use, so a clock that replaces it is seen', async () => {
    const original = process.hrtime
    let calls = 0
    const fake = Object.assign((time?: [number, number]): [number, number] => {
      if (time !== undefined) return original(time)
      calls++
      return calls === 1 ? [100, 0] : [100, 2_500_000]
    }, { bigint: original.bigint })
    const out = new LineCollector()
    const server = await serve([logger(':response-time', { stream: out }) as Middleware], answer())
    try {
      process.hrtime = fake
      try { await request(server.port) } finally { process.hrtime = original }
      assert.deepEqual(await out.waitForLines(1), ['2.500'])
      assert.equal(calls, 2, 'one reading when the request starts, one when the response does')
    } finally {
      await server.close()
    }
  })

  const slow = (ms: number) => (_req: IncomingMessage, res: ServerResponse) => { setTimeout(() => { answer()(_req, res) }, ms) }

  it('is milliseconds with 3 decimals by default', async () => {
    const text = await line(':response-time', get(), { handler: slow(20) })
    assert.match(text, /^\d+\.\d{3}$/)
    assert.ok(Number(text) >= 15, text)
  })

  it('takes the number of decimals as its argument', async () => {
    assert.match(await line(':response-time[0]', get(), { handler: slow(5) }), /^\d+$/)
    assert.match(await line(':response-time[1]', get()), /^\d+\.\d$/)
    assert.match(await line(':response-time[6]', get()), /^\d+\.\d{6}$/)
  })

  it('runs until the headers are written, not until the response ends', async () => {
    const handler = (_req: IncomingMessage, res: ServerResponse): void => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      setTimeout(() => { res.end('late') }, 60)
    }
    // total times differ between two loggers: each measures when it writes its line
    const { ours } = await compareWithMorgan(':response-time :total-time', get(), { handler })
    const [response, total] = ours.split(' ').map(Number) as [number, number]
    assert.ok(response < 40, `response time ${response}`)
    assert.ok(total >= 50, `total time ${total}`)
  })

  it('is - without a response: immediate, or an aborted request', async () => {
    assert.equal(await line(':response-time', get(), { options: { immediate: true } }), '-')
    const text = await line(':response-time', abandon, { handler: () => { /* never answers */ } })
    assert.equal(text, '-')
  })

  it('is -, as is :total-time, when an app cleared a start mark with a falsy value, as with morgan', async () => {
    for (const clear of [(req: { _startAt?: unknown }) => { req._startAt = 0 }, (_req: unknown, res: { _startAt?: unknown }) => { res._startAt = null }]) {
      const handler = (req: IncomingMessage, res: ServerResponse): void => {
        res.writeHead(200)
        clear(req as never, res as never)
        res.end('ok')
      }
      const { ours, theirs } = await compareWithMorgan(':status :response-time :total-time', get(), { handler })
      assert.equal(ours, theirs)
      assert.equal(ours, '200 - -')
    }
  })
})

describe(':total-time[digits]', () => {
  it('is milliseconds until the response finished, 3 decimals by default', async () => {
    const { ours } = await compareWithMorgan(':total-time', get(), { handler: (req, res) => { setTimeout(() => { answer()(req, res) }, 20) } })
    assert.match(ours, /^\d+\.\d{3}$/)
    assert.ok(Number(ours) >= 15, ours)
  })

  it('takes the number of decimals as its argument', async () => {
    const { ours } = await compareWithMorgan(':total-time[0] :total-time[2]', get())
    assert.match(ours, /^\d+ \d+\.\d{2}$/)
  })

  it('is - with immediate', async () => {
    assert.equal(await line(':total-time', get(), { options: { immediate: true } }), '-')
  })
})

describe(':date[format]', () => {
  const near = (text: string, parse: (t: string) => number): void => {
    const at = parse(text)
    assert.ok(Math.abs(Date.now() - at) < 5000, `${text} is now`)
  }

  it('is the web format (RFC 1123, GMT) by default', async () => {
    const { ours } = await compareWithMorgan(':date', get())
    assert.match(ours, /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/)
    near(ours, Date.parse)
  })

  it('is the web format with [web]', async () => {
    const { ours } = await compareWithMorgan(':date[web]', get())
    assert.match(ours, /GMT$/)
    near(ours, Date.parse)
  })

  it('is the common log format in UTC with [clf]', async () => {
    const { ours } = await compareWithMorgan(':date[clf]', get())
    const m = /^(\d{2})\/(\w{3})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) \+0000$/.exec(ours)
    assert.ok(m !== null, ours)
    near(ours, () => Date.parse(`${m[1] ?? ''} ${m[2] ?? ''} ${m[3] ?? ''} ${m[4] ?? ''}:${m[5] ?? ''}:${m[6] ?? ''} GMT`))
  })

  it('is ISO 8601 with milliseconds and Z with [iso]', async () => {
    const { ours } = await compareWithMorgan(':date[iso]', get())
    assert.match(ours, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    near(ours, Date.parse)
  })

  it('is - for any other argument, as in morgan', async () => {
    assert.equal(await line(':date[unix]', get()), '-')
  })
})

describe(':referrer', () => {
  it('is the Referer header', async () => {
    assert.equal(await line(':referrer', get('/', { referer: 'http://a.example/' })), 'http://a.example/')
  })

  it('falls back to a Referrer header', async () => {
    assert.equal(await line(':referrer', get('/', { referrer: 'http://b.example/' })), 'http://b.example/')
  })

  it('prefers Referer when both are sent', async () => {
    assert.equal(await line(':referrer', get('/', { referer: 'http://a.example/', referrer: 'http://b.example/' })), 'http://a.example/')
  })

  it('is - without either', async () => {
    assert.equal(await line(':referrer', get()), '-')
  })
})

describe(':remote-addr', () => {
  it('is the socket address', async () => {
    assert.equal(await line(':remote-addr', get()), '127.0.0.1')
  })

  it('prefers req.ip, as set by Express from trusted proxies', async () => {
    const ip: Middleware = (req, _res, next) => { (req as Req).ip = '203.0.113.9'; next() }
    assert.equal(await line(':remote-addr', get(), { before: [ip] }), '203.0.113.9')
  })

  it('is still known when the client has gone by the time the line is written', async () => {
    const text = await line(':remote-addr :status', abandon, { handler: () => { /* never answers */ } })
    assert.equal(text, '127.0.0.1 -')
  })

  it('is - and does not throw when the request has no connection or socket', async () => {
    const out = new LineCollector()
    const detach: Middleware = (req, _res, next) => {
      Object.defineProperty(req, 'connection', { value: undefined })
      Object.defineProperty(req, 'socket', { value: undefined })
      next()
    }
    const server = await serve([detach, logger(':remote-addr :method', { stream: out, immediate: true }) as Middleware], answer())
    try {
      const reply = await request(server.port)
      assert.equal(reply.status, 200)
      assert.deepEqual(await out.waitForLines(1), ['- GET'])
    } finally {
      await server.close()
    }
  })

  it('is the peer address of each connection, on every request of a keep-alive connection', async () => {
    const out = new LineCollector()
    const log = logger(':remote-addr :url', { stream: out }) as Middleware
    const server = await serve([log], answer())
    const agents = [new Agent({ keepAlive: true, maxSockets: 1 }), new Agent({ keepAlive: true, maxSockets: 1 })]
    const get = async (agent: Agent, localAddress: string, path: string): Promise<void> => {
      await new Promise<void>((resolve, reject) => {
        httpRequest({ host: '127.0.0.1', port: server.port, path, agent, localAddress }, (res) => {
          res.resume()
          res.on('end', resolve)
        }).on('error', reject).end()
      })
    }
    try {
      // Linux answers on all of 127.0.0.0/8: a second client address without a second interface.
      await get(agents[0] as Agent, '127.0.0.1', '/a1')
      await get(agents[1] as Agent, '127.0.0.2', '/b1')
      await get(agents[0] as Agent, '127.0.0.1', '/a2')
      await get(agents[1] as Agent, '127.0.0.2', '/b2')
      assert.deepEqual(await out.waitForLines(4), ['127.0.0.1 /a1', '127.0.0.2 /b1', '127.0.0.1 /a2', '127.0.0.2 /b2'])
    } finally {
      for (const agent of agents) agent.destroy()
      await server.close()
    }
  })

  it('is the client address over https', async () => {
    const out = new LineCollector()
    const log = logger(':remote-addr :method :url :status', { stream: out }) as Middleware
    const server = createHttpsServer({ key: TLS_KEY, cert: TLS_CERT }, (req, res) => { log(req, res, () => { answer()(req, res) }) })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const port = (server.address() as AddressInfo).port
      await new Promise<void>((resolve, reject) => {
        httpsRequest({ host: '127.0.0.1', port, path: '/secure', rejectUnauthorized: false, agent: false }, (res) => {
          res.resume()
          res.on('end', resolve)
        }).on('error', reject).end()
      })
      assert.deepEqual(await out.waitForLines(1), ['127.0.0.1 GET /secure 200'])
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe(':remote-user', () => {
  const basic = (credentials: string): string => 'Basic ' + Buffer.from(credentials).toString('base64')

  it('is the Basic-auth user name', async () => {
    assert.equal(await line(':remote-user', get('/', { authorization: basic('ada:lovelace') })), 'ada')
  })

  it('keeps everything before the first colon', async () => {
    assert.equal(await line(':remote-user', get('/', { authorization: basic('a b:c:d') })), 'a b')
  })

  it('reads an Authorization header set by an earlier middleware', async () => {
    const setAuth: Middleware = (req, _res, next) => { req.headers.authorization = basic('grace:hopper'); next() }
    assert.equal(await line(':remote-user', get(), { before: [setAuth] }), 'grace')
  })

  it('is - without credentials, with another scheme, or with a malformed header', async () => {
    assert.equal(await line(':remote-user', get()), '-')
    assert.equal(await line(':remote-user', get('/', { authorization: 'Bearer abc' })), '-')
    assert.equal(await line(':remote-user', get('/', { authorization: 'Basic !!!' })), '-')
    assert.equal(await line(':remote-user', get('/', { authorization: basic(':nobody') })), '-')
  })
})

describe(':req[header]', () => {
  it('is the request header, whatever the case of its name', async () => {
    assert.equal(await line(':req[x-trace] :req[X-Trace]', get('/', { 'x-trace': 'abc' })), 'abc abc')
  })

  it('is - when the header is absent', async () => {
    assert.equal(await line(':req[x-missing]', get()), '-')
  })

  it('finds each of more header names than the logger keeps lower-cased', async () => {
    // 300 names, each written two ways: more than the 256 the lookup keeps
    const headers: Record<string, string> = {}
    const tokens: string[] = []
    for (let i = 0; i < 300; i++) {
      headers[`x-h${i}`] = `v${i}`
      tokens.push(`:req[X-H${i}]`, `:req[x-h${i}]`)
    }
    const text = await line(tokens.join(' '), get('/', headers))
    assert.equal(text, Array.from({ length: 300 }, (_, i) => `v${i} v${i}`).join(' '))
  })

  it('joins every value of a repeated header', async () => {
    const text = await line(':req[set-cookie]', raw('GET / HTTP/1.1\r\nHost: x\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nConnection: close\r\n\r\n'))
    assert.equal(text, 'a=1, b=2')
  })

  it('shows repeated headers as node:http joins them', async () => {
    const text = await line(':req[accept]', raw('GET / HTTP/1.1\r\nHost: x\r\nAccept: a/b\r\nAccept: c/d\r\nConnection: close\r\n\r\n'))
    assert.equal(text, 'a/b, c/d')
  })

  it('is - when the name is missing, instead of failing as morgan does', async () => {
    const out = new LineCollector()
    const server = await serve([logger(':req :method', { stream: out }) as Middleware], answer())
    try {
      await request(server.port)
      assert.deepEqual(await out.waitForLines(1), ['- GET'])
    } finally {
      await server.close()
    }
  })
})

describe(':res[header]', () => {
  it('is the response header', async () => {
    assert.equal(await line(':res[content-type] :res[Content-Length]', get(), { handler: answer(200, 'four', { 'content-type': 'text/plain' }) }), 'text/plain 4')
  })

  it('is - when the header is absent', async () => {
    assert.equal(await line(':res[x-nothing]', get()), '-')
  })

  it('joins every value of an array header', async () => {
    assert.equal(await line(':res[set-cookie]', get(), { handler: answer(200, 'ok', { 'set-cookie': ['a=1', 'b=2'] }) }), 'a=1, b=2')
  })

  it('is - for a numeric header of 0, as in morgan', async () => {
    const handler = (_req: IncomingMessage, res: ServerResponse): void => { res.setHeader('content-length', 0); res.end() }
    assert.equal(await line(':res[content-length]', get(), { handler }), '-')
  })

  it('sees headers given to writeHead', async () => {
    const handler = (_req: IncomingMessage, res: ServerResponse): void => {
      res.writeHead(200, { 'Content-Length': 5, 'X-Kind': 'direct' })
      res.end('hello')
    }
    assert.equal(await line(':res[content-length] :res[x-kind]', get(), { handler }), '5 direct')
  })

  it('is - when no response was sent', async () => {
    assert.equal(await line(':res[content-length]', get(), { options: { immediate: true } }), '-')
  })

  it('asks the response\'s getHeader for the name as the format writes it, as morgan does', async () => {
    // A response class of the app's own whose getHeader knows a name in one spelling only.
    class Served extends ServerResponse {
      override getHeader (name: string): ReturnType<ServerResponse['getHeader']> {
        return name === 'X-Served-By' ? 'node-7' : super.getHeader(name)
      }
    }
    const handler = answer(200, 'ok', { 'content-type': 'text/plain' })
    const serverOptions = { ServerResponse: Served as typeof ServerResponse }
    const byHand: FormatFn = (tokens, req, res) => `${String(tokens.res(req, res, 'X-Served-By'))} ${String(tokens.res(req, res, 'x-served-by'))}`
    for (const format of [':res[X-Served-By] :res[x-served-by] :res[Content-Type]', byHand]) {
      const { ours, theirs } = await compareWithMorgan(format, get(), { handler, serverOptions })
      assert.equal(ours, theirs)
      assert.match(ours, /^node-7 (-|undefined)( text\/plain)?$/)
    }
    const json = await compareWithMorgan(logger.json({ by: ':res[X-Served-By]' }), get(), { handler, serverOptions })
    assert.equal(json.ours, '{"by":"node-7"}')
  })
})

describe('arguments a format function passes, which need not be text', () => {
  /** What `fn` gives, or the kind of error it throws. */
  const outcome = (fn: () => unknown): string => {
    try {
      return String(fn())
    } catch (err) {
      return err instanceof TypeError ? 'TypeError' : 'another error'
    }
  }

  it('are taken by :response-time, :date, :req and :res as morgan takes them', async () => {
    const format: FormatFn = (tokens, req, res) => [
      tokens['response-time'](req, res, 0), tokens['response-time'](req, res, 2), tokens['response-time'](req, res, true),
      tokens.date(req, res, 0), tokens.date(req, res, false), tokens.date(req, res, 1),
      outcome(() => tokens.req(req, res, 0 as unknown as string)), outcome(() => tokens.res(req, res, 0 as unknown as string))
    ].join('|')
    const { ours, theirs } = await compareWithMorgan(format, get())
    assert.equal(ours, theirs)
    const [whole, two, one, zero, no, other, req, res] = ours.split('|') as string[]
    assert.match(`${whole} ${two} ${one}`, /^\d+ \d+\.\d{2} \d+\.\d$/)
    assert.match(`${zero}|${no}`, /^\w{3}, \d{2} \w{3} \d{4} [\d:]{8} GMT\|\w{3}, \d{2} \w{3} \d{4} [\d:]{8} GMT$/)
    assert.deepEqual([other, req, res], ['', 'TypeError', 'TypeError'])
  })

  it('give :res nothing before the response is sent, as in morgan', async () => {
    const format: FormatFn = (tokens, req, res) => outcome(() => tokens.res(req, res, 0 as unknown as string))
    assert.deepEqual(await compareWithMorgan(format, get(), { options: { immediate: true } }), { ours: 'undefined', theirs: 'undefined' })
  })

  it('are taken by :total-time as a number of decimals', async () => {
    const format: FormatFn = (tokens, req, res) => `${String(tokens['total-time'](req, res, 0))} ${String(tokens['total-time'](req, res, 1))}`
    const { ours, theirs } = await compareWithMorgan(format, get())
    assert.match(ours, /^\d+ \d+\.\d$/)
    assert.match(theirs, /^\d+ \d+\.\d$/)
  })
})

describe(':pid', () => {
  it('is the process id', async () => {
    assert.equal(await line(':pid', get()), String(process.pid))
  })

  it('escapes a stubbed process id or date once, on every path a line takes', () => {
    const real = Object.getOwnPropertyDescriptor(process, 'pid') as PropertyDescriptor
    const proto = Date.prototype as unknown as Record<string, unknown>
    const realWeb = proto.toUTCString
    const forged = '1"\n2'
    Object.defineProperty(process, 'pid', { value: forged, configurable: true })
    proto.toUTCString = () => forged
    const req = { headers: {} } as never
    const res = {} as never
    const table = (logger as unknown as Record<symbol, Record<string, (req: never, res: never) => unknown>>)[Symbol.for('foyer.logger.tokens')] as Record<string, (req: never, res: never) => unknown>
    try {
      for (const name of ['pid', 'date']) {
        const once = '1\\"\\n2'
        assert.equal(logger.compile(`:${name}`)(logger as never, req, res), once, name)
        assert.equal(logger.compile(`:${name}`)(Object.create(logger) as never, req, res), once, name)
        assert.equal(table[name]?.(req, res), once, name)
        assert.deepEqual(JSON.parse(logger.json({ one: `:${name}`, joined: `[:${name}]` })(logger as never, req, res)), { one: forged, joined: `[${forged}]` }, name)
      }
    } finally {
      Object.defineProperty(process, 'pid', real)
      proto.toUTCString = realWeb
    }
    assert.equal(logger.compile(':pid')(logger as never, req, res), String(process.pid))
  })
})

describe(':http-version', () => {
  it('is 1.1 for HTTP/1.1 and 1.0 for HTTP/1.0', async () => {
    assert.equal(await line(':http-version', get()), '1.1')
    assert.equal(await line(':http-version', raw('GET / HTTP/1.0\r\n\r\n')), '1.0')
  })

  it('escapes a version a middleware set to text', async () => {
    const forge: Middleware = (req, _res, next) => { (req as { httpVersionMajor: unknown }).httpVersionMajor = '1"\n2'; next() }
    assert.equal(await line(':http-version', get(), { before: [forge] }), '1\\"\\n2.1')
  })
})

describe(':user-agent', () => {
  it('is the User-Agent header, - without one', async () => {
    assert.equal(await line(':user-agent', get('/', { 'user-agent': 'curl/8.7.1' })), 'curl/8.7.1')
    assert.equal(await line(':user-agent', raw('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')), '-')
  })
})

describe('logger.token(name, fn)', () => {
  it('defines a token usable in format strings, and returns the logger', async () => {
    const fn: TokenFn = (req) => String(req.headers['x-request-id'] ?? '')
    assert.equal(logger.token('request-id', fn), logger)
    morgan.token('request-id', fn)
    assert.equal(await line(':request-id :method', get('/', { 'x-request-id': 'r-42' })), 'r-42 GET')
  })

  it('returns the function it is called on, as morgan\'s token() and format() do: a wrapper function that copied them chains on itself (koa-morgan); called on anything else, the logger', async () => {
    type Token = (this: unknown, name: string, fn: TokenFn) => unknown
    type Format = (this: unknown, name: string, fmt: string) => unknown
    const fn: TokenFn = (req) => String(req.headers['x-wrapped'] ?? '')
    const returned = (lib: { token: unknown, format: unknown }): unknown[] => {
      const token = lib.token as Token
      const format = lib.format as Format
      // koa-morgan's export: a function of its own, given morgan's token and format
      const wrapper = Object.assign(function wrapped (): void {}, { token, format })
      // what `import * as log` makes in CommonJS output: an object with the module's properties
      const namespace = { token, format, default: lib }
      return [
        wrapper.token('wrapped', fn) === wrapper,
        wrapper.format('wrapped-format', ':wrapped :method') === wrapper,
        token.call(lib, 'wrapped', fn) === lib,
        namespace.token('wrapped', fn),
        namespace.format('wrapped-format', ':wrapped :method')
      ]
    }
    assert.deepEqual(returned(logger), [true, true, true, logger, logger])
    // (morgan's give back the object, which a chain cannot call)
    const theirs = returned(morgan)
    assert.deepEqual(theirs.slice(0, 3), [true, true, true])
    assert.equal(typeof theirs[3], 'object')
    // called on its own, the logger (morgan's: undefined)
    const { token } = logger
    assert.equal(token('wrapped', fn), logger)
    // the token and the format are defined all the same
    assert.equal(await line('wrapped-format', get('/', { 'x-wrapped': 'w-1' })), 'w-1 GET')
  })

  it('passes the bracketed argument, and no argument when there is none', async () => {
    const seen: unknown[][] = []
    const fn = (...args: unknown[]): string => { seen.push(args.slice(2)); return 'v' }
    logger.token('args', fn)
    morgan.token('args', fn)
    assert.equal(await line(':args :args[some thing]', get()), 'v v')
    assert.deepEqual(seen, [[], ['some thing'], [], ['some thing']])
  })

  it('prints - for undefined, null, an empty string, 0 and false, as morgan does', async () => {
    const values: unknown[] = [undefined, null, '', 0, false, 7, 'x']
    logger.token('value', (_req, _res, i) => values[Number(i)] as string)
    morgan.token('value', (_req: unknown, _res: unknown, i: string) => values[Number(i)])
    assert.equal(await line(':value[0] :value[1] :value[2] :value[3] :value[4] :value[5] :value[6]', get()), '- - - - - 7 x')
  })

  it('calls the token with the token table as this, as morgan does', async () => {
    let self: unknown
    logger.token('self', function (this: unknown) { self = this; return 's' })
    const out = new LineCollector()
    const server = await serve([logger(':self', { stream: out }) as Middleware], answer())
    try {
      await request(server.port)
      await out.waitForLines(1)
      assert.equal(typeof (self as Record<string, unknown>).url, 'function')
    } finally {
      await server.close()
    }
  })

  it('overrides a built-in token, which can be restored from the logger afterwards', async () => {
    const shown = logger as unknown as Record<string, TokenFn>
    const original = shown.url as TokenFn
    logger.token('url', () => '/overridden')
    try {
      const out = new LineCollector()
      const server = await serve([logger(':url', { stream: out }) as Middleware], answer())
      try {
        await request(server.port, { path: '/real' })
        assert.deepEqual(await out.waitForLines(1), ['/overridden'])
      } finally {
        await server.close()
      }
    } finally {
      logger.token('url', original)
    }
    // restored as it was: escaped once, not twice
    assert.equal(await line(':url', get('/back?q=%22')), '/back?q=%22')
    assert.equal(await line(':url', raw('GET /a"b\\c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')), '/a\\"b\\\\c')
  })

  it('makes tokens available to format functions, escaped', async () => {
    const format = (tokens: Record<string, TokenFn>, req: IncomingMessage, res: ServerResponse): string =>
      [tokens.method?.(req, res), tokens.url?.(req, res), tokens.status?.(req, res), tokens.res?.(req, res, 'content-length')].join(' ')
    const text = await line(format as unknown as string, raw('GET /q"x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
    assert.equal(text, 'GET /q\\"x 200 2')
  })

  it('throws a TypeError for a name that is not a string or a token that is not a function', () => {
    assert.throws(() => logger.token(5 as unknown as string, () => 'x'), { name: 'TypeError', message: 'argument name must be a string' })
    assert.throws(() => logger.token('x', 'y' as unknown as TokenFn), { name: 'TypeError', message: 'argument fn must be a function' })
  })
})

describe(':res-bytes', () => {
  /** The lines of `format` for the requests `send` makes, answered by `handler`. */
  async function bytesLines (handler: (req: IncomingMessage, res: ServerResponse) => void, send: (port: number) => Promise<unknown>, count = 1, format = ':method :res-bytes'): Promise<string[]> {
    const out = new LineCollector()
    const server = await serve([logger(format, { stream: out }) as Middleware], handler)
    try {
      await send(server.port)
      return await out.waitForLines(count)
    } finally {
      await server.close()
    }
  }

  it('is the body length of a response with Content-Length', async () => {
    assert.deepEqual(await bytesLines(answer(200, 'héllo'), get()), ['GET 6'])
  })

  it('counts a chunked response without Content-Length, framing excluded', async () => {
    const handler = (_req: IncomingMessage, res: ServerResponse): void => {
      res.write('abc')
      res.write(Buffer.from('defg'))
      res.write('ff', 'hex')
      res.end('hij')
    }
    const lines = await bytesLines(handler, async (port) => {
      const text = await rawRequest(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      assert.match(text, /transfer-encoding: chunked/i)
    })
    assert.deepEqual(lines, ['GET 11'])
  })

  it('counts a streamed response piped from a readable', async () => {
    const handler = (_req: IncomingMessage, res: ServerResponse): void => {
      Readable.from([Buffer.alloc(1000, 1), Buffer.alloc(24, 2), 'xyz']).pipe(res)
    }
    assert.deepEqual(await bytesLines(handler, get()), ['GET 1027'])
  })

  it('counts each response of a keep-alive connection on its own', async () => {
    const handler = (req: IncomingMessage, res: ServerResponse): void => { res.end(req.url === '/long' ? 'x'.repeat(100) : 'ab') }
    const lines = await bytesLines(handler, async (port) => {
      const socket = await rawSocket(port)
      socket.write('GET /long HTTP/1.1\r\nHost: x\r\n\r\nGET /short HTTP/1.1\r\nHost: x\r\n\r\nGET /long HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      await new Promise((resolve) => socket.on('close', resolve).resume())
    }, 3, ':url :res-bytes')
    assert.deepEqual(lines, ['/long 100', '/short 2', '/long 100'])
  })

  it('is 0 for HEAD and 304, whose body is never sent, whether written with end() or write()', async () => {
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      if (req.url?.startsWith('/304') === true) res.statusCode = 304
      if (req.url?.endsWith('/write') === true) {
        res.write('a body ')
        res.end('node:http drops')
      } else res.end('a body node:http drops')
    }
    for (const how of ['', '/write']) {
      assert.deepEqual(await bytesLines(handler, async (port) => await request(port, { method: 'HEAD', path: how || '/' })), ['HEAD 0'])
      assert.deepEqual(await bytesLines(handler, get('/304' + how)), ['GET 0'])
    }
  })

  it('counts only what was written before the client went away', async () => {
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      res.write('first')
      req.socket.on('close', () => { res.write('after the client left'); res.end('too late') })
    }
    const lines = await bytesLines(handler, async (port) => {
      const socket = await rawSocket(port)
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
      await new Promise((resolve) => socket.once('data', resolve))
      socket.destroy()
    })
    assert.deepEqual(lines, ['GET 5'])
  })

  it('counts base64 and hex text as the bytes it decodes to, line breaks and stray characters skipped', async () => {
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      if (req.url === '/base64') res.end('aGVs\r\nbG8g\r\nd29y\r\nbGQ=', 'base64')
      else if (req.url === '/hex') res.end('6869zz21', 'hex')
      else res.end('aGVsbG8', 'base64')
    }
    for (const path of ['/base64', '/hex', '/plain']) {
      let body = ''
      const lines = await bytesLines(handler, async (port) => {
        // HTTP/1.0: the body is sent as it is, up to the close, so what arrives is what node decoded.
        const text = await rawRequest(port, `GET ${path} HTTP/1.0\r\n\r\n`)
        body = text.slice(text.indexOf('\r\n\r\n') + 4)
      })
      assert.deepEqual(lines, [`GET ${Buffer.byteLength(body, 'latin1')}`], path)
      assert.equal(body, { '/base64': 'hello world', '/hex': 'hi', '/plain': 'hello' }[path])
    }
  })

  it('counts a Uint8Array made in another realm, which node sends like any other', async () => {
    const chunk = runInNewContext('new Uint8Array([104, 105, 33])') as Uint8Array
    assert.equal(chunk instanceof Uint8Array, false)
    const handler = (_req: IncomingMessage, res: ServerResponse): void => { res.end(chunk) }
    let body = ''
    const lines = await bytesLines(handler, async (port) => { body = (await request(port)).body })
    assert.equal(body, 'hi!')
    assert.deepEqual(lines, ['GET 3'])
  })

  describe('over HTTP/2', () => {
    /** The lines for one request per `path`, answered by `handler` through the compatibility API; each path's body length as received is checked against its line. */
    async function http2Lines (handler: (req: Http2ServerRequest, res: Http2ServerResponse) => void, requests: Array<{ path: string, method?: string }>): Promise<string[]> {
      const out = new LineCollector()
      const log = logger(':method :url :status :res-bytes', { stream: out }) as Middleware
      const server = createHttp2Server((req, res) => {
        log(req as unknown as IncomingMessage, res as unknown as ServerResponse, () => { handler(req, res) })
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const client = http2Connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
      try {
        const received: string[] = []
        for (const { path, method = 'GET' } of requests) {
          const size = await new Promise<number>((resolve, reject) => {
            const stream = client.request({ ':path': path, ':method': method })
            let bytes = 0
            stream.on('error', reject)
            stream.on('data', (data: Buffer) => { bytes += data.length })
            stream.on('end', () => { resolve(bytes) })
            stream.end()
          })
          received.push(`${method} ${path} ${size}`)
        }
        const lines = await out.waitForLines(requests.length)
        assert.deepEqual(lines.map((line) => line.replace(/ \d+ (\d+)$/, ' $1')), received, 'the bytes the client received')
        return lines
      } finally {
        client.close()
        await new Promise((resolve) => server.close(resolve))
      }
    }

    it('counts a chunk given to end() once', async () => {
      const lines = await http2Lines((req, res) => {
        switch (req.url) {
          case '/end': res.end('hello'); break
          case '/write-end': res.write('abc'); res.end('de'); break
          case '/hex': res.end('deadbeef', 'hex'); break
          default: res.writeHead(201); res.end(Buffer.from('created'), () => {})
        }
      }, [{ path: '/end' }, { path: '/write-end' }, { path: '/hex' }, { path: '/head-first' }])
      assert.deepEqual(lines, ['GET /end 200 5', 'GET /write-end 200 5', 'GET /hex 200 4', 'GET /head-first 201 7'])
    })

    it('is 0 for HEAD, 204 and 304, whose stream ends with the headers', async () => {
      const lines = await http2Lines((req, res) => {
        if (req.url === '/204') res.statusCode = 204
        if (req.url === '/304') res.statusCode = 304
        res.write('abc')
        res.end('de')
      }, [{ path: '/', method: 'HEAD' }, { path: '/204' }, { path: '/304' }])
      assert.deepEqual(lines, ['HEAD / 200 0', 'GET /204 204 0', 'GET /304 304 0'])
    })
  })

  it('is 0 when the client went away before any response', async () => {
    const lines = await bytesLines(() => { /* never answers */ }, abandon)
    assert.deepEqual(lines, ['GET 0'])
  })

  it('is 0 when the app writes the body once the connection is destroyed, before the response closes', async () => {
    // node drops what is written to a destroyed connection; the response's 'close' comes a tick
    // later. Here the app destroys it itself, or writes once the client has left ('aborted').
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      if (req.url === '/destroy-then-end') {
        req.socket.destroy()
        res.write('hello')
        res.end('!')
      } else {
        req.on('aborted', () => { res.end('bye bye') })
      }
    }
    const lines = await bytesLines(handler, async (port) => {
      assert.equal(await rawRequest(port, 'GET /destroy-then-end HTTP/1.1\r\nHost: x\r\n\r\n'), '')
      await abandon(port, '/aborted-then-end')
    }, 2, ':url :res-bytes')
    assert.deepEqual(lines.sort(), ['/aborted-then-end 0', '/destroy-then-end 0'])
  })

  it('counts nothing written once the app has ended its side of the connection', async () => {
    // node writes what comes after the connection's end() to nothing (the socket reports a write
    // after end)
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      res.write('ab', () => {
        if (req.url === '/end') req.socket.end()
        else req.socket.destroySoon()
        res.end('hello')
      })
    }
    for (const path of ['/end', '/destroy-soon']) {
      let body = ''
      const lines = await bytesLines(handler, async (port) => {
        const text = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`)
        body = text.slice(text.indexOf('\r\n\r\n') + 4)
      }, 1, ':url :res-bytes')
      assert.equal(body, '2\r\nab\r\n', path)
      assert.deepEqual(lines, [`${path} 2`])
    }
  })

  it('is 0 for a pipelined response whose connection closed before its turn, which node closes from Node.js 24', async () => {
    // /first never answers; /second is answered at once, and its response waits for the first's
    // turn on the connection. The client leaves: nothing of /second was ever sent.
    let answered = false
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      if (req.url === '/second') { res.end('queued'); answered = true }
    }
    const out = new LineCollector()
    const server = await serve([logger(':url :status :res-bytes', { stream: out }) as Middleware], handler)
    try {
      const socket = await rawSocket(server.port)
      socket.write('GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n')
      await waitFor(() => answered)
      socket.destroy()
      // before Node.js 24 the waiting response is never closed, and it gets no line (nor with morgan)
      const closesWaiting = Number(process.versions.node.split('.')[0]) >= 24
      const lines = await out.waitForLines(closesWaiting ? 2 : 1)
      await settle()
      assert.deepEqual([...out.lines].sort(), closesWaiting ? ['/first - 0', '/second 200 0'] : ['/first - 0'])
      assert.equal(lines.length, out.lines.length)
    } finally {
      await server.close()
    }
  })

  it('leaves write and end alone for a format that does not use it', async () => {
    let hooked: boolean | undefined
    const handler = (_req: IncomingMessage, res: ServerResponse): void => {
      hooked = res.write !== ServerResponse.prototype.write || res.end !== ServerResponse.prototype.end
      res.end('ok')
    }
    await bytesLines(handler, get(), 1, 'combined')
    assert.equal(hooked, false)
    await bytesLines(handler, get(), 1, ':res-bytes')
    assert.equal(hooked, true)
  })

  it('is counted for format functions, which may call any token', async () => {
    const format = (tokens: Record<string, TokenFn>, req: IncomingMessage, res: ServerResponse): string => `bytes=${tokens['res-bytes']?.(req, res) ?? ''}`
    const out = new LineCollector()
    const server = await serve([logger(format as unknown as string, { stream: out }) as Middleware], answer(200, 'four'))
    try {
      await request(server.port)
      assert.deepEqual(await out.waitForLines(1), ['bytes=4'])
    } finally {
      await server.close()
    }
  })
})
