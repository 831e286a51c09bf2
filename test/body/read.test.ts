// The shared pipeline: skip rules, limits (failing fast), aborts, Content-Length mismatches,
// stream state, and the async context `next` runs in.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import { EventEmitter } from 'node:events'
import { IncomingMessage } from 'node:http'
import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { Readable } from 'node:stream'
import bodyParser from 'body-parser'
import createError from 'http-errors'
import { json, raw, readJson, text, urlencoded } from '../../src/body/index.js'
import type { BodyMiddleware } from '../../src/body/index.js'
import { resolveCommon } from '../../src/body/options.js'
import { readBody } from '../../src/body/read.js'
import type { ReadOptions } from '../../src/body/read.js'
import { rawSocket, request, startServer } from '../helpers/server.js'
import { compare, describeValue, readResponse, requestHead, send, startBodyServer, within } from '../helpers/body-server.js'
import type { BodyServer, Seen } from '../helpers/body-server.js'

type WithBody = IncomingMessage & { body?: unknown }

const JSON_HEADERS = { 'content-type': 'application/json' }

let server: BodyServer
before(async () => { server = await startBodyServer() })
after(async () => { await server.close() })

const delay = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

describe('skip rules', () => {
  it('leaves req.body undefined for a request without a body', async () => {
    for (const [ours, theirs] of [[json(), bodyParser.json()], [raw(), bodyParser.raw()], [text(), bodyParser.text()], [urlencoded(), bodyParser.urlencoded()]]) {
      const seen = await compare(server, ours, theirs, { method: 'GET', headers: JSON_HEADERS })
      assert.deepEqual(seen.body, { undefined: true })
    }
  })

  it('leaves req.body undefined when the type does not match', async () => {
    const seen = await compare(server, json(), bodyParser.json(), { headers: { 'content-type': 'text/plain' }, body: '{"a":1}' })
    assert.deepEqual(seen.body, { undefined: true })
  })

  it('leaves req.body undefined when there is no Content-Type', async () => {
    const seen = await compare(server, json(), bodyParser.json(), { body: '{"a":1}' })
    assert.deepEqual(seen.body, { undefined: true })
  })

  it('keeps a req.body set before it when it does not parse', async () => {
    const keep = (req: IncomingMessage): void => { (req as WithBody).body = 'kept' }
    const seen = await compare(server, json(), bodyParser.json(), { method: 'GET' }, keep)
    assert.equal(seen.body, 'kept')
  })

  it('skips a body the application already read', async () => {
    const afterReading = (mw: unknown): BodyMiddleware => (req, res, next) => {
      req.resume()
      req.once('end', () => { (mw as BodyMiddleware)(req, res, next) })
    }
    const seen = await compare(server, afterReading(json()), afterReading(bodyParser.json()), { headers: JSON_HEADERS, body: '{"a":1}' })
    assert.deepEqual(seen.body, { undefined: true })
  })

  it('parses once when the same parser is mounted twice', async () => {
    const parser = json()
    const twice: BodyMiddleware = (req, res, next) => {
      parser(req, res, (err) => {
        if (err !== undefined) { next(err); return }
        const first = (req as WithBody).body
        parser(req, res, (err2) => {
          assert.equal((req as WithBody).body, first)
          next(err2)
        })
      })
    }
    const seen = await send(server, server.mount(twice), { headers: JSON_HEADERS, body: '{"a":1}' })
    assert.deepEqual(seen.body, { a: 1 })
  })

  it('reads a chunked body (no Content-Length)', async () => {
    const seen = await compare(server, json(), bodyParser.json(), { headers: { ...JSON_HEADERS, 'transfer-encoding': 'chunked' }, body: ['{"a":', '[1,', '2]}'] })
    assert.deepEqual(seen.body, { a: [1, 2] })
  })
})

describe('limit', () => {
  it('413 at once when the declared Content-Length is over the limit, before any byte is sent', async () => {
    const path = server.mount(json())
    const socket = await rawSocket(server.port)
    try {
      // only the head: the answer must not wait for a body
      socket.write(requestHead(path, { ...JSON_HEADERS, 'content-length': 10 * 1024 * 1024 }))
      const reply = await readResponse(socket)
      const seen = JSON.parse(reply.body) as Seen
      assert.equal(seen.error?.type, 'entity.too.large')
      assert.equal(seen.error?.status, 413)
      assert.deepEqual(seen.error?.props, { expected: 10485760, length: 10485760, limit: 102400 })
    } finally {
      socket.destroy()
    }
  })

  it('reports a declared oversize as body-parser does', async () => {
    const body = 'x'.repeat(2048)
    const seen = await compare(server, text({ limit: '1kb' }), bodyParser.text({ limit: '1kb' }), { headers: { 'content-type': 'text/plain' }, body })
    assert.deepEqual(seen.error?.props, { expected: 2048, length: 2048, limit: 1024 })
    assert.equal(seen.error?.message, 'request entity too large')
  })

  it('413 while a chunked body is still streaming, as soon as it passes the limit', async () => {
    const path = server.mount(raw({ limit: '10kb' }))
    const socket = await rawSocket(server.port)
    const client = { writing: true }
    try {
      socket.write(requestHead(path, { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' }))
      const chunk = 'x'.repeat(1024)
      // an endless body: it only stops when the test ends
      const pump = async (): Promise<void> => {
        while (client.writing && !socket.destroyed) {
          socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
          await delay(5)
        }
      }
      pump().catch(() => {})
      const reply = await readResponse(socket)
      assert.ok(client.writing, 'the answer came while the client was still sending')
      const seen = JSON.parse(reply.body) as Seen
      assert.equal(seen.error?.type, 'entity.too.large')
      assert.equal(seen.error?.props['limit'], 10240)
      const received = seen.error?.props['received'] as number
      assert.ok(received > 10240 && received <= 10240 + 2048, `received ${received}`)
      assert.equal(seen.listeners, 0)
    } finally {
      client.writing = false
      socket.destroy()
    }
  })

  it('keeps the connection usable: the rest of an oversize body is read and dropped', async () => {
    const path = server.mount(text({ limit: '1kb' }))
    const socket = await rawSocket(server.port)
    try {
      const body = 'y'.repeat(256 * 1024)
      socket.write(requestHead(path, { 'content-type': 'text/plain', 'content-length': body.length }))
      const first = await readResponse(socket)
      assert.equal((JSON.parse(first.body) as Seen).error?.type, 'entity.too.large')
      socket.write(body)
      socket.write(requestHead(path, { 'content-type': 'text/plain', 'content-length': 2 }) + 'ok')
      const second = await readResponse(socket)
      assert.deepEqual((JSON.parse(second.body) as Seen).body, 'ok')
    } finally {
      socket.destroy()
    }
  })

  it('accepts a body exactly at the limit', async () => {
    const seen = await compare(server, raw({ limit: 100 }), bodyParser.raw({ limit: 100 }), { headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' }, body: ['a'.repeat(50), 'b'.repeat(50)] })
    assert.equal((seen.body as { hex: string }).hex.length, 200)
  })
})

describe('Expect: 100-continue', () => {
  /** Everything the socket receives until `done` says it has what it waits for. */
  const received = async (socket: Socket, done: (text: string) => boolean): Promise<string> => await within(new Promise<string>((resolve) => {
    let text = ''
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1')
      if (done(text)) { socket.off('data', onData); resolve(text) }
    }
    socket.on('data', onData)
  }), 'the response')
  const bodyOf = (text: string): Seen => JSON.parse(text.slice(text.lastIndexOf('\r\n\r\n') + 4)) as Seen
  const whole = (text: string): boolean => /\r\n\r\n\{.*\}$/s.test(text)

  it('reads the body the client sends once node:http has told it to continue, as body-parser does, and the connection serves the next request', async () => {
    for (const mw of [json(), bodyParser.json()]) {
      const path = server.mount(mw)
      const socket = await rawSocket(server.port)
      try {
        socket.write(requestHead(path, { ...JSON_HEADERS, 'content-length': 7, expect: '100-continue' }))
        assert.equal(await received(socket, (text) => text.endsWith('\r\n\r\n')), 'HTTP/1.1 100 Continue\r\n\r\n')
        socket.write('{"a":1}')
        assert.deepEqual(bodyOf(await received(socket, whole)).body, { a: 1 })
        socket.write(requestHead(path, { ...JSON_HEADERS, 'content-length': 7 }) + '{"b":2}')
        assert.deepEqual(bodyOf(await received(socket, whole)).body, { b: 2 })
      } finally {
        socket.destroy()
      }
    }
  })

  it('answers a Content-Length over the limit without waiting for a body the client holds back until it is told to continue', async () => {
    // node:http tells it to continue before the app runs; the 413 follows without a byte of body.
    const path = server.mount(json({ limit: 10 }))
    const socket = await rawSocket(server.port)
    try {
      socket.write(requestHead(path, { ...JSON_HEADERS, 'content-length': 1000, expect: '100-continue' }))
      const text = await received(socket, whole)
      assert.match(text, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/)
      assert.deepEqual(bodyOf(text).error?.props, { expected: 1000, length: 1000, limit: 10 })
      assert.equal(bodyOf(text).error?.type, 'entity.too.large')
    } finally {
      socket.destroy()
    }
  })
})

describe('listeners after a read', () => {
  it("leaves 'data', 'end', 'close' and 'aborted' listeners that do nothing, and no 'error' listener", async () => {
    const mw = json()
    let calls = 0
    const srv = await startServer((req, res) => {
      mw(req, res, (err?: unknown) => {
        if (++calls > 1) return
        const body = JSON.stringify((req as WithBody).body)
        const left = Object.fromEntries(['data', 'end', 'close', 'error', 'aborted'].map((e) => [e, req.listenerCount(e)]))
        // a stray chunk, a second 'end' and a 'close' reach the listeners left, which do nothing
        req.emit('data', Buffer.from('{"b":2}'))
        req.emit('end')
        req.emit('close')
        req.emit('aborted')
        // with no 'error' listener, EventEmitter throws what it emits: the error is not swallowed
        let thrown: string | undefined
        try { req.emit('error', new Error('late')) } catch (e) { thrown = (e as Error).message }
        res.end(JSON.stringify({ err: err === undefined ? null : String(err), body, after: JSON.stringify((req as WithBody).body), left, thrown }))
      })
    })
    try {
      const reply = await request(srv.port, { method: 'POST', headers: { ...JSON_HEADERS, 'content-length': 7 }, body: '{"a":1}' })
      await delay(50)
      assert.deepEqual(JSON.parse(reply.body), {
        err: null,
        body: '{"a":1}',
        after: '{"a":1}',
        left: { data: 1, end: 1, close: 1, error: 0, aborted: 1 },
        thrown: 'late'
      })
      assert.equal(calls, 1, '`next` runs once')
    } finally {
      await srv.close()
    }
  })
})

describe('aborted requests', () => {
  it('an error emitted on the request mid-body reaches next as body-parser passes it, and does not crash the process', async () => {
    // Not how node:http ends a request (it destroys it, and emits 'error' only to listeners), but
    // proxies, tests and in-process request doubles do emit errors on requests; with no listener,
    // EventEmitter would throw. The error is the stream's own, not the client leaving.
    const seen: Record<string, Seen> = {}
    for (const [name, mw] of [['foyer', json()], ['body-parser', bodyParser.json()]] as const) {
      const path = server.mount(mw, (req) => { req.once('data', () => { req.emit('error', Object.assign(new Error('upstream failed'), { code: 'EUPSTREAM' })) }) })
      const observed = server.observe(path)
      const socket = await rawSocket(server.port)
      socket.write(requestHead(path, { ...JSON_HEADERS, 'content-length': 100 }) + '{"a":')
      // body-parser passes the error on once the request has finished (on some Node.js versions
      // only when its connection closes): the client leaves a little later
      await delay(50)
      socket.destroy()
      seen[name] = await within(observed, name)
    }
    const ours = seen.foyer as Seen
    assert.equal(ours.error?.message, 'upstream failed')
    assert.equal(ours.error?.status, 400)
    assert.equal(ours.error?.type, 'entity.parse.failed')
    assert.equal(ours.listeners, 0, 'no listener is left on the request')
    // body-parser leaves `type` unset (README: foyer gives every error a type)
    const theirs = seen['body-parser'] as Seen
    const withoutType = (error: Seen['error']): unknown => ({ ...error, type: undefined, keys: error?.keys.filter((k) => k !== 'type') })
    assert.deepEqual(withoutType(ours.error), withoutType(theirs.error))
    assert.equal(theirs.error?.type, undefined)
  })

  it('a text emitted in place of an error is the message of a 400, as body-parser makes it; another value that is not an object is request.aborted, where body-parser reads the body as ended', async () => {
    const emitted = async (mw: unknown, value: unknown): Promise<Seen> => {
      const path = server.mount(mw, (req) => { req.once('data', () => { req.emit('error', value) }) })
      const observed = server.observe(path)
      const socket = await rawSocket(server.port)
      socket.write(requestHead(path, { ...JSON_HEADERS, 'transfer-encoding': 'chunked' }) + '7\r\n{"a":1}\r\n')
      // (body-parser answers once the request has finished, or its connection closed)
      await delay(50)
      socket.destroy()
      return await within(observed, String(value))
    }
    const ours = await emitted(json(), 'upstream failed')
    const theirs = await emitted(bodyParser.json(), 'upstream failed')
    assert.deepEqual([ours.error?.name, ours.error?.message, ours.error?.status, ours.error?.expose, ours.error?.stackHead],
      [theirs.error?.name, theirs.error?.message, theirs.error?.status, theirs.error?.expose, theirs.error?.stackHead])
    assert.equal(ours.error?.message, 'upstream failed')
    // (body-parser leaves `type` unset; README: foyer gives every error a type)
    assert.equal(ours.error?.type, 'entity.parse.failed')
    for (const value of [undefined, 0, '', false]) {
      assert.equal((await emitted(json(), value)).error?.type, 'request.aborted', String(value))
    }
    // body-parser parses what came before such a value as the whole body
    assert.deepEqual((await emitted(bodyParser.json(), undefined)).error, undefined)
  })

  it('an error of its own keeps its status and type', async () => {
    const path = server.mount(json(), (req) => {
      req.once('data', () => { req.emit('error', Object.assign(new Error('gateway'), { status: 502, type: 'upstream.failed' })) })
    })
    const observed = server.observe(path)
    const socket = await rawSocket(server.port)
    socket.write(requestHead(path, { ...JSON_HEADERS, 'content-length': 100 }) + '{"a":')
    const seen = await observed
    socket.destroy()
    assert.deepEqual([seen.error?.message, seen.error?.status, seen.error?.type, seen.error?.expose], ['gateway', 502, 'upstream.failed', false])
  })

  it('an error of its own is passed on itself whatever its type (a getter, read-only, falsy), and a plain object\'s properties are kept, as body-parser passes them', async () => {
    class TypedError extends Error { get type (): string { return 'upload.broken' } }
    const cases: Array<[string, () => unknown, (err: Record<string, unknown>, thrown: unknown) => void]> = [
      ['a type getter', () => new TypedError('disk gone'), (err, thrown) => { assert.equal(err, thrown); assert.equal(err['status'], 400); assert.equal(err['type'], 'upload.broken') }],
      ['a frozen http-errors error', () => Object.freeze(createError(403, 'no', { type: 'my.type' })), (err, thrown) => { assert.equal(err, thrown); assert.equal(err['status'], 403) }],
      ['a null type', () => Object.assign(new Error('x'), { type: null }), (err, thrown) => { assert.equal(err, thrown); assert.equal(err['type'], null) }],
      ['a plain object', () => ({ code: 'EBROKEN', message: 'broken pipe' }), (err) => { assert.equal(err['message'], 'broken pipe'); assert.equal(err['code'], 'EBROKEN'); assert.equal(err['status'], 400) }]
    ]
    for (const [name, make, check] of cases) {
      let thrown: unknown
      const mw = json()
      let passed: (err: unknown) => void = () => {}
      const next = new Promise<unknown>((resolve) => { passed = resolve })
      const server = await startServer((req, res) => {
        mw(req, res, (err) => { passed(err); res.end() })
        req.once('data', () => { thrown = make(); req.emit('error', thrown) })
      })
      const socket = await rawSocket(server.port)
      try {
        socket.write(requestHead('/', { ...JSON_HEADERS, 'content-length': 100 }) + '{"a":')
        const err = await next
        assert.ok(err !== null && typeof err === 'object', name)
        check(err as Record<string, unknown>, thrown)
      } finally {
        socket.destroy()
        await server.close()
      }
    }
  })

  it('400 request.aborted with the bytes received and expected when the client closes mid-body', async () => {
    const path = server.mount(json())
    const observed = server.observe(path)
    const socket = await rawSocket(server.port)
    socket.write(requestHead(path, { ...JSON_HEADERS, 'content-length': 100 }) + '{"a":')
    await delay(50)
    socket.destroy()
    const seen = await observed
    assert.equal(seen.error?.type, 'request.aborted')
    assert.equal(seen.error?.status, 400)
    assert.equal(seen.error?.message, 'request aborted')
    assert.deepEqual(seen.error?.props, { code: 'ECONNABORTED', expected: 100, length: 100, received: 5 })
    assert.equal(seen.listeners, 0, 'no listener is left on the request')
  })

  it('calls next when the client leaves mid-body, before the response closes, as body-parser does: what the error handler sets is what the response closes with', async () => {
    const orders: string[][] = []
    for (const mw of [json(), bodyParser.json()]) {
      const order: string[] = []
      let done: () => void = () => {}
      const closed = new Promise<void>((resolve) => { done = resolve })
      const srv = await startServer((req, res) => {
        res.on('close', () => { order.push(`response closes with ${res.statusCode}`); done() })
        mw(req, res, (err?: unknown) => {
          order.push(`next(${(err as { type?: string } | undefined)?.type ?? ''})`)
          res.statusCode = (err as { status?: number } | undefined)?.status ?? 200
          res.end()
        })
      })
      try {
        const socket = await rawSocket(srv.port)
        socket.write(requestHead('/', { ...JSON_HEADERS, 'content-length': 100 }) + '{"a":')
        await delay(50)
        socket.destroy()
        await within(closed, 'the response closes')
        await delay(20)
        orders.push(order)
      } finally {
        await srv.close()
      }
    }
    assert.deepEqual(orders[0], ['next(request.aborted)', 'response closes with 400'])
    assert.deepEqual(orders[0], orders[1])
  })

  it('calls next after req.destroy() returns when the app destroys the request mid-body, not from inside that call', async () => {
    const order: string[] = []
    let done: () => void = () => {}
    const called = new Promise<void>((resolve) => { done = resolve })
    const mw = json()
    const srv = await startServer((req, res) => {
      // a deadline that gives up on the request and answers it itself
      setTimeout(() => {
        order.push('destroy')
        req.destroy()
        order.push('destroy returned')
        res.statusCode = 408
        res.end()
      }, 50)
      mw(req, res, (err?: unknown) => { order.push(`next(${(err as { type?: string } | undefined)?.type ?? ''})`); done() })
    })
    try {
      const socket = await rawSocket(srv.port)
      socket.on('error', () => {})
      socket.write(requestHead('/', { ...JSON_HEADERS, 'content-length': 100 }) + '{"a":')
      await within(called, 'next is called')
      socket.destroy()
      assert.deepEqual(order, ['destroy', 'destroy returned', 'next(request.aborted)'])
    } finally {
      await srv.close()
    }
  })

  for (const withError of [false, true]) {
    it(`calls next once the connection has ${withError ? 'failed' : 'closed'} when the app destroys the request mid-body${withError ? ' with an error' : ''}, as body-parser does`, async () => {
      await destroyedByTheApp(withError)
    })
  }

  // The order of the response's 'close' and `next` when the app destroys the request mid-body:
  // the same for foyer's parser and reader as for body-parser's.
  async function destroyedByTheApp (withError: boolean): Promise<void> {
    const orders: string[][] = []
    const readerAsMiddleware = (req: IncomingMessage, _res: ServerResponse, next: (err?: unknown) => void): void => {
      readJson(req).then(() => next(), next)
    }
    for (const mw of [json(), bodyParser.json(), readerAsMiddleware]) {
      const order: string[] = []
      let done: () => void = () => {}
      const called = new Promise<void>((resolve) => { done = resolve })
      const srv = await startServer((req, res) => {
        res.on('close', () => { order.push(`response closes with ${res.headersSent ? res.statusCode : '-'}`) })
        // a deadline that gives up on the request, leaving the answer to the error handler
        setTimeout(() => { req.destroy(withError ? new Error('deadline') : undefined) }, 50)
        mw(req, res, (err?: unknown) => {
          order.push(`next(${(err as { type?: string } | undefined)?.type ?? ''})`)
          res.statusCode = (err as { status?: number } | undefined)?.status ?? 200
          res.end('error page')
          done()
        })
      })
      try {
        const socket = await rawSocket(srv.port)
        socket.on('error', () => {})
        socket.write(requestHead('/', { ...JSON_HEADERS, 'content-length': 100 }) + '{"a":')
        await within(called, 'next is called')
        await delay(20)
        orders.push(order)
        socket.destroy()
      } finally {
        await srv.close()
      }
    }
    // destroyed with an error, the connection emits it before its 'close', and next comes there
    assert.deepEqual(orders[0], withError ? ['next(request.aborted)', 'response closes with 400'] : ['response closes with -', 'next(request.aborted)'])
    assert.deepEqual(orders[1], orders[0])
    assert.deepEqual(orders[2], orders[0])
  }

  it('gets 400 request.aborted when the app destroys a request made by hand on a stand-in for a connection without events', async () => {
    const made = (): IncomingMessage => {
      const req = new IncomingMessage({ readable: true, destroy () {} } as never)
      req.method = 'POST'
      req.headers = { ...JSON_HEADERS, 'content-length': '20' }
      req._read = () => {}
      // (node's own destroy() then fails on such a stand-in, and emits that on the request)
      req.on('error', () => {})
      req.push('{"a":')
      setImmediate(() => { req.destroy() })
      return req
    }
    await assert.rejects(within(readJson(made()), 'readJson'), { type: 'request.aborted', status: 400 })
    const seen = await within(new Promise<unknown>((resolve) => { json()(made(), {} as ServerResponse, resolve) }), 'json')
    assert.equal((seen as { type?: string }).type, 'request.aborted')
  })

  it('expected is null for a chunked body', async () => {
    const path = server.mount(text())
    const observed = server.observe(path)
    const socket = await rawSocket(server.port)
    socket.write(requestHead(path, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }) + '3\r\nabc\r\n')
    await delay(50)
    socket.destroy()
    const seen = await observed
    assert.deepEqual(seen.error?.props, { code: 'ECONNABORTED', expected: null, length: null, received: 3 })
  })

  it('400 request.aborted when the client left before the parser ran (an asynchronous step before it), where body-parser passes the request on with no body', async () => {
    const body = '{"a":1}'
    for (const leave of ['end', 'reset'] as const) {
      // a body cut short, and one sent whole: either is gone with the request
      for (const [length, sent] of [[20, '{"a"'], [body.length, body]] as const) {
        const what = `${leave}, ${sent.length} of ${length} bytes`
        const parsers = [json(), bodyParser.json()].map((parser) => {
          const path = server.mount((req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => {
            setTimeout(() => { parser(req, res, next) }, 100)
          })
          return { path, observed: server.observe(path) }
        })
        for (const { path } of parsers) {
          const socket = await rawSocket(server.port)
          socket.write(requestHead(path, { ...JSON_HEADERS, 'content-length': length }) + sent)
          await delay(20)
          if (leave === 'reset') socket.resetAndDestroy()
          else socket.destroy()
        }
        const [ours, theirs] = await Promise.all(parsers.map(async ({ observed }) => await observed))
        assert.equal(ours?.error?.type, 'request.aborted', what)
        assert.equal(ours?.error?.status, 400, what)
        assert.deepEqual(ours?.error?.props, { code: 'ECONNABORTED', expected: length, length, received: 0 }, what)
        assert.equal(ours?.listeners, 0, what)
        assert.deepEqual(theirs?.body, { undefined: true }, what)
      }
    }
    // a reader rejects as the middleware fails: it does not resolve as for a request without a body
    let settled: (outcome: string) => void = () => {}
    const outcome = new Promise<string>((resolve) => { settled = resolve })
    const { port, close } = await startServer((req) => {
      setTimeout(() => {
        readJson(req).then((value) => { settled(`resolved ${String(value)}`) }, (err: { type?: unknown }) => { settled(String(err.type)) })
      }, 100)
    })
    try {
      const socket = await rawSocket(port)
      socket.write(requestHead('/', { ...JSON_HEADERS, 'content-length': 20 }) + '{"a"')
      await delay(20)
      socket.destroy()
      assert.equal(await within(outcome, 'the reader settles'), 'request.aborted')
    } finally {
      await close()
    }
  })

  it('400 request.aborted when the app or node:http closed the connection before the parser ran, where body-parser passes the request on with no body', async () => {
    const body = '{"a":12345}'
    type Outcome = { type?: unknown, props?: unknown, body?: unknown }
    const outcomeOf = async (close: (req: IncomingMessage) => void, wait: number, options = {}, sent = body): Promise<Outcome[]> => {
      const outcomes: Array<Promise<Outcome>> = []
      const { port, close: stop } = await startServer((req, res) => {
        close(req)
        const parser = req.url === '/ours' ? json() : bodyParser.json()
        outcomes.push(new Promise<Outcome>((resolve) => {
          setTimeout(() => {
            parser(req, res, (err?: unknown) => {
              const e = err as { type?: unknown, received?: unknown, expected?: unknown } | undefined
              resolve(e === undefined ? { body: describeValue((req as { body?: unknown }).body) } : { type: e.type, props: { received: e.received, expected: e.expected } })
            })
          }, wait)
        }))
      }, options)
      try {
        for (const path of ['/ours', '/theirs']) {
          const socket = await rawSocket(port)
          socket.on('error', () => {})
          socket.write(requestHead(path, { ...JSON_HEADERS, 'content-length': body.length }) + sent)
          await delay(20)
        }
        return await within(Promise.all(await new Promise<Array<Promise<Outcome>>>((resolve) => {
          const check = (): void => { if (outcomes.length === 2) resolve(outcomes); else setTimeout(check, 10) }
          check()
        })), 'both parsers call next')
      } finally {
        await stop()
      }
    }
    const aborted = { type: 'request.aborted', props: { received: 0, expected: body.length } }
    const passedOn = { body: { undefined: true } }
    // by the app, at once or a moment later
    assert.deepEqual(await outcomeOf((req) => { req.destroy() }, 0), [aborted, passedOn], 'req.destroy()')
    assert.deepEqual(await outcomeOf((req) => { req.socket.end() }, 50), [aborted, passedOn], 'socket.end()')
    assert.deepEqual(await outcomeOf((req) => { req.socket.destroy() }, 50), [aborted, passedOn], 'socket.destroy()')
    // by node:http: the request's time ran out, its body unfinished, while a slow step before the
    // parser waited
    assert.deepEqual(await outcomeOf(() => {}, 600, { requestTimeout: 200, connectionsCheckingInterval: 50 }, '{"a"'), [aborted, passedOn], 'requestTimeout')
  })

  it('an abort after a 413 causes no second call and no crash', async () => {
    const path = server.mount(raw({ limit: 10 }))
    const observed = server.observe(path)
    const socket = await rawSocket(server.port)
    socket.write(requestHead(path, { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' }) + 'f\r\n0123456789abcde\r\n')
    const seen = await observed
    assert.equal(seen.error?.type, 'entity.too.large')
    socket.destroy()
    await delay(50)
    assert.deepEqual(server.repeated, [])
  })
})

describe('Content-Length that does not match the body', () => {
  it('400 request.size.invalid', async () => {
    // node:http holds a client to its Content-Length; an app or proxy rewriting the header does not
    const shorten = (req: IncomingMessage): void => { req.headers['content-length'] = String(Number(req.headers['content-length']) - 2) }
    const seen = await compare(server, json(), bodyParser.json(), { headers: JSON_HEADERS, body: '{"a":"b"}' }, shorten)
    assert.equal(seen.error?.type, 'request.size.invalid')
    assert.equal(seen.error?.status, 400)
    assert.deepEqual(seen.error?.props, { expected: 7, length: 7, received: 9 })
  })
})

describe('bodies in many pieces', () => {
  // Past a few pieces, small ones are copied together into buffers that grow with the body; large
  // ones are kept as they come. However they alternate, the body is the same.
  const ones = (n: number, size = 1): number[] => Array.from({ length: n }, () => size)
  const sizes = [1, 2, 3, 5000, ...ones(30), 700, 4096, 4095, ...Array.from({ length: 200 }, (_, i) => 1 + (i % 7)), 3000, 9000, ...ones(3, 1500), ...ones(500, 100), 70_000, ...ones(40)]
  const whole = Buffer.from(Array.from({ length: sizes.reduce((a, b) => a + b, 0) }, (_, i) => (i * 31 + 7) % 256))
  const pieces = (buffer: Buffer, lengths: number[]): Buffer[] => {
    let at = 0
    return lengths.map((length) => buffer.subarray(at, (at += length)))
  }

  it('are read whole and in order, however small and large pieces alternate: req.body and what verify sees', async () => {
    let verified: Buffer | undefined
    const parser = raw({ limit: '1mb', verify: (_req, _res, buf) => { verified = Buffer.from(buf) } })
    const seen = await send(server, server.mount(parser), { headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' }, body: pieces(whole, sizes) })
    assert.deepEqual(seen.body, describeValue(whole))
    assert.ok(verified?.equals(whole))
  })

  it('decode characters cut between pieces, as body-parser does', async () => {
    const text = JSON.stringify({ words: 'é€😀'.repeat(400) })
    const bytes = Buffer.from(text)
    const seen = await compare(server, json(), bodyParser.json(), { headers: { ...JSON_HEADERS, 'transfer-encoding': 'chunked' }, body: pieces(bytes, ones(bytes.length)) })
    assert.deepEqual(seen.body, JSON.parse(text))
  })
})

describe('stream state', () => {
  it('500 stream.encoding.set when req.setEncoding was called before the parser', async () => {
    const setEncoding = (req: IncomingMessage): void => { req.setEncoding('utf8') }
    const seen = await compare(server, json(), bodyParser.json(), { headers: JSON_HEADERS, body: '{"a":1}' }, setEncoding)
    assert.equal(seen.error?.type, 'stream.encoding.set')
    assert.equal(seen.error?.status, 500)
    assert.equal(seen.error?.message, 'stream encoding should not be set')
  })

  it('500 stream.not.readable when the stream can no longer be read', async () => {
    const unreadable = (req: IncomingMessage): void => { Object.defineProperty(req, 'readable', { value: false }) }
    const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': 'text/plain' }, body: 'x' }, unreadable)
    assert.equal(seen.error?.type, 'stream.not.readable')
    assert.equal(seen.error?.status, 500)
    assert.equal(seen.error?.message, 'stream is not readable')
  })

  it('reads a request an earlier middleware paused', async () => {
    const seen = await send(server, server.mount(json(), (req) => { req.pause() }), { headers: JSON_HEADERS, body: '{"a":1}' })
    assert.deepEqual(seen.body, { a: 1 })
  })
})

describe('async context', () => {
  const als = new AsyncLocalStorage<string>()
  const stores: Array<string | undefined> = []
  const inContext = (mw: BodyMiddleware, name: string): BodyMiddleware => (req, res, next) => {
    als.run(name, () => { mw(req, res, (err) => { stores.push(als.getStore()); next(err) }) })
  }
  const run = async (mw: BodyMiddleware, name: string, headers: Record<string, string>, body?: string | string[]): Promise<void> => {
    stores.length = 0
    await send(server, server.mount(inContext(mw, name)), { headers, ...(body === undefined ? { method: 'GET' } : { body }) })
    assert.deepEqual(stores, [name])
  }

  it('next runs in the caller\'s AsyncLocalStorage context after reading a body', async () => {
    await run(json(), 'parsed', JSON_HEADERS, ['{"a":', '1}'])
  })

  it('and after an error found while reading', async () => {
    await run(text({ limit: 2 }), 'too-large', { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }, ['ab', 'cd'])
  })

  it('and when the request is skipped', async () => {
    await run(json(), 'skipped', JSON_HEADERS)
  })

  it('verify and the json reviver run in it too, as body-parser runs them', async () => {
    const seen: Array<string | undefined> = []
    const parser = json({
      verify: () => { seen.push(als.getStore()) },
      reviver: (key, value: unknown) => { if (key === '') seen.push(als.getStore()); return value }
    })
    await run(parser, 'parsing', JSON_HEADERS, ['{"a":', '1}'])
    assert.deepEqual(seen, ['parsing', 'parsing'])
  })
})

describe('readBody without the middleware', () => {
  it('reads a body for any caller, handing back its own argument', async () => {
    const options: ReadOptions = { ...resolveCommon(undefined, 'text/plain'), charsets: 'any', parse: (body) => body }
    const s = await startServer((req: IncomingMessage, res: ServerResponse) => {
      readBody(req, res, options, (err, body, _req, tag: string) => { res.end(`${tag}:${String(err ?? body)}`) }, 'tag')
    })
    try {
      const reply = await request(s.port, { headers: { 'content-type': 'text/plain' }, body: 'hello' })
      assert.equal(reply.body, 'tag:hello')
    } finally {
      await s.close()
    }
  })
})

// Streams and objects standing in for a request, as tests and adapters make them: read as
// body-parser reads them, and never a crash.
describe('requests that node:http did not make', () => {
  type Outcome = { error?: string, body?: unknown, calls: number }
  const headers = { 'content-type': 'application/json', 'content-length': '7' }

  /** Runs `mw` on `req` (then `feed` it), and resolves with what `next` saw once things settle. */
  async function outcome (mw: unknown, req: object, feed: () => void = () => {}): Promise<Outcome> {
    const seen: Outcome = { calls: 0 }
    ;(mw as (req: unknown, res: unknown, next: (err?: { status: number, type?: string }) => void) => void)(req, {}, (err) => {
      seen.calls++
      if (err !== undefined) seen.error = `${err.status} ${String(err.type)}`
      else seen.body = (req as { body?: unknown }).body
    })
    feed()
    await delay(50)
    return seen
  }

  it('an object-mode stream giving strings or Uint8Arrays is read as body-parser reads it, and one giving other values is refused', async () => {
    const strings = (): object => Object.assign(Readable.from(['{"a"', ':1}']), { headers })
    const bytes = (): object => Object.assign(Readable.from(Array.from('{"a":"' + 'x'.repeat(70) + '"}', (c) => new Uint8Array([c.charCodeAt(0)]))), { headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } })
    for (const make of [strings, bytes]) {
      const ours = await outcome(json(), make())
      assert.deepEqual(ours, await outcome(bodyParser.json(), make()))
      assert.equal(ours.calls, 1)
      assert.ok(ours.body !== undefined)
    }
    assert.deepEqual(await within(readJson(strings() as never), 'readJson'), { a: 1 })
    const objects = Object.assign(Readable.from([{ a: 1 }]), { headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } })
    assert.deepEqual(await outcome(json(), objects), { calls: 1, error: '500 stream.not.readable' })
  })

  it('an IncomingMessage on a stand-in socket that says it is not readable (serverless adapters\', injectors\') is read, or skipped, as body-parser does it: its client did not leave', async () => {
    // serverless-http 3 makes its requests on `{ readable: false }`, and pushes the body
    const onSocket = (socket: object): IncomingMessage => {
      const req = new IncomingMessage(socket as never)
      req.method = 'POST'
      req.headers = { ...headers }
      req.push('{"a":1}')
      req.push(null)
      return req
    }
    for (const socket of [{ readable: false }, {}, new EventEmitter()]) {
      const ours = await outcome(json(), onSocket(socket))
      assert.deepEqual(ours, await outcome(bodyParser.json(), onSocket(socket)), JSON.stringify(socket))
      assert.equal(ours.calls, 1)
      assert.equal(ours.error, undefined)
    }
    // one made with no connection at all, and destroyed, is skipped (a body read already)
    for (const socket of [null, undefined]) {
      const destroyed = (): IncomingMessage => {
        const req = onSocket(socket as never)
        req.destroy()
        return req
      }
      const ours = await outcome(json(), destroyed())
      assert.deepEqual(ours, await outcome(bodyParser.json(), destroyed()), String(socket))
      assert.deepEqual(ours, { calls: 1, body: undefined })
      assert.equal(await within(readJson(destroyed()), 'readJson'), undefined)
    }
  })

  it('an EventEmitter that only emits \'data\' and \'end\' is read as body-parser reads it', async () => {
    const make = (): EventEmitter & { headers: object } => Object.assign(new EventEmitter(), { method: 'POST', headers })
    const feed = (req: EventEmitter) => () => { req.emit('data', Buffer.from('{"a":1}')); req.emit('end') }
    const ours = make()
    const theirs = make()
    assert.deepEqual(await outcome(json(), ours, feed(ours)), { calls: 1, body: { a: 1 } })
    assert.deepEqual(await outcome(bodyParser.json(), theirs, feed(theirs)), { calls: 1, body: { a: 1 } })
    const read = make()
    const reading = readJson(read as never)
    feed(read)()
    assert.deepEqual(await within(reading, 'readJson'), { a: 1 })
  })

  it('a stream that signals the client leaving with \'aborted\' alone gets 400 request.aborted, as with body-parser', async () => {
    const results: Array<[Outcome, number]> = []
    for (const mw of [json(), bodyParser.json()]) {
      const source = Object.assign(new Readable({ read () {} }), { headers })
      source.push('{"a"')
      const seen = await outcome(mw, source, () => { setTimeout(() => source.emit('aborted'), 10) })
      results.push([seen, ['data', 'end', 'error', 'close', 'aborted'].reduce((n, e) => n + source.listenerCount(e), 0)])
    }
    assert.deepEqual(results, [[{ calls: 1, error: '400 request.aborted' }, 0], [{ calls: 1, error: '400 request.aborted' }, 0]])
  })
})
