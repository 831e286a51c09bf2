// When a response starts and ends, as the logger sees it: headers given to writeHead, the
// start time, exactly one line per logger whatever happens to the connection, and the async
// context tokens run in.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import { EventEmitter, once } from 'node:events'
import { createServer, IncomingMessage, ServerResponse } from 'node:http'
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http'
import { connect as http2Connect, createServer as createHttp2Server } from 'node:http2'
import { connect, Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import bodyParser from 'body-parser'
import onFinished from 'on-finished'
import { json } from '../../src/body/index.js'
import { logger } from '../../src/index.js'
import { loadCopy } from '../helpers/realm.js'
import { answer, callRecorder, compareWithMorgan, LineCollector, morgan, serve, settle, waitFor } from '../helpers/logger-lines.js'
import type { SideBySide } from '../helpers/logger-lines.js'
import { rawRequest, rawSocket, request } from '../helpers/server.js'
import type { Handler, Middleware } from '../helpers/server.js'

const get = async (port: number): Promise<unknown> => await request(port, { path: '/r' })

/**
 * morgan and foyer each alone on a server of its own (so morgan's on-headers cannot set headers
 * for foyer), one request each: their lines, without the newline.
 */
async function eachAlone (morganFormat: string, foyerFormat: string, handler: Handler, before: Middleware[] = []): Promise<SideBySide> {
  const recorder = callRecorder()
  const collector = new LineCollector()
  for (const log of [morgan(morganFormat, { stream: recorder }), logger(foyerFormat, { stream: collector })]) {
    const server = await serve([...before, log as Middleware], handler)
    try { await get(server.port) } finally { await server.close() }
  }
  const [ours] = await collector.waitForLines(1)
  return { ours: ours ?? '', theirs: recorder.calls.join('').slice(0, -1) }
}

/**
 * One GET /h2 over HTTP/2 (h2c) to a server running `log` (when given), then `handler`: the
 * response's headers, once its body has ended.
 */
async function getOverHttp2 (log: Middleware | undefined, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<IncomingHttpHeaders> {
  const server = createHttp2Server((h2req, h2res) => {
    const req = h2req as unknown as IncomingMessage
    const res = h2res as unknown as ServerResponse
    if (log === undefined) handler(req, res)
    else log(req, res, () => { handler(req, res) })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const client = http2Connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  try {
    return await new Promise<IncomingHttpHeaders>((resolve, reject) => {
      const stream = client.request({ ':path': '/h2' })
      stream.on('error', reject)
      stream.on('response', (headers) => { stream.resume(); stream.on('end', () => { resolve(headers) }) })
      stream.end()
    })
  } finally {
    client.close()
    await new Promise((resolve) => server.close(resolve))
  }
}

describe('headers given to writeHead', () => {
  const cases: Array<[string, (res: ServerResponse) => void]> = [
    ['an object', (res) => { res.writeHead(200, { 'Content-Length': 2, 'X-A': 'a' }) }],
    ['a reason phrase and an object', (res) => { res.writeHead(200, 'Fine', { 'Content-Length': 2, 'X-A': 'a' }) }],
    ['a list of pairs', (res) => { res.writeHead(200, [['Content-Length', '2'], ['X-A', 'a']] as unknown as string[]) }],
    ['a flat list repeating a name', (res) => { res.writeHead(200, ['Content-Length', '2', 'X-A', 'a', 'X-A', 'b']) }],
    ['an object over headers already set', (res) => { res.setHeader('X-A', 'old'); res.setHeader('X-B', 'kept'); res.writeHead(200, { 'Content-Length': 2, 'X-A': 'a' }) }]
  ]
  for (const [name, writeHead] of cases) {
    it(`are seen by :res[...] when given as ${name}, as with morgan`, async () => {
      const handler = (_req: IncomingMessage, res: ServerResponse): void => { writeHead(res); res.end('ok') }
      const { ours, theirs } = await compareWithMorgan(':status :res[content-length] :res[x-a] :res[x-b]', get, { handler })
      assert.equal(ours, theirs)
      assert.match(ours, /^200 2 a(, b)? (-|kept)$/)
    })

    it(`are seen by :res[...] when given as ${name}, each logger alone on its server`, async () => {
      const handler = (_req: IncomingMessage, res: ServerResponse): void => { writeHead(res); res.end('ok') }
      const format = ':status :res[content-length] :res[x-a] :res[x-b] :res[x-none]'
      const { ours, theirs } = await eachAlone(format, format, handler)
      assert.equal(ours, theirs)
      assert.match(ours, /^200 2 a(, b)? (-|kept) -$/)
    })
  }

  it('are seen by :res[...] under the last of names that differ only in case, as with morgan', async () => {
    const handler = (_req: IncomingMessage, res: ServerResponse): void => { res.writeHead(200, { 'x-a': '1', 'X-A': '2', 'Content-Length': 2 }); res.end('ok') }
    assert.deepEqual(await eachAlone(':res[x-a]', ':res[X-A]', handler), { ours: '2', theirs: '2' })
  })

  it('are the ones of the call that wrote them, not of a later call that threw', async () => {
    const handler = (_req: IncomingMessage, res: ServerResponse): void => {
      res.writeHead(200, { 'x-a': '1', 'Content-Length': 2 })
      assert.throws(() => res.writeHead(500, { 'x-a': '2', 'x-b': '3' }), { code: 'ERR_HTTP_HEADERS_SENT' })
      res.end('ok')
    }
    // morgan's on-headers sets the status of the refused call before node:http refuses it, so
    // morgan logs a 500 the client never received; the headers it could not set are not logged.
    assert.deepEqual(await eachAlone(':status :res[x-a] :res[x-b]', ':status :res[x-a] :res[x-b]', handler), { ours: '200 1 -', theirs: '500 1 -' })
  })

  it('are logged as they were sent, whatever the app does with its object afterwards, as with morgan (a list of values excepted, which both keep)', async () => {
    const handler = (_req: IncomingMessage, res: ServerResponse): void => {
      const shared: OutgoingHttpHeaders = { 'Content-Length': 2, 'X-A': 'sent', 'Set-Cookie': ['a=1'] }
      res.writeHead(200, shared)
      shared['X-A'] = 'changed'
      delete shared['Content-Length']
      ;(shared['Set-Cookie'] as string[]).push('b=2')
      res.end('ok')
    }
    const format = ':res[x-a] :res[content-length] :res[set-cookie]'
    assert.deepEqual(await eachAlone(format, format, handler), { ours: 'sent 2 a=1, b=2', theirs: 'sent 2 a=1, b=2' })
  })

  it('are taken from the third argument when the second is undefined or null, as node:http sends them', async () => {
    for (const reason of [undefined, null]) {
      const log = new LineCollector()
      const server = await serve([logger(':status :res[x-a] :res[content-length]', { stream: log }) as Middleware], (_req, res) => {
        (res.writeHead as (...args: unknown[]) => ServerResponse)(201, reason, { 'X-A': 'a', 'Content-Length': 2 })
        res.end('ok')
      })
      try {
        const reply = await rawRequest(server.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
        assert.match(reply, /\r\nX-A: a\r\n/)
        // (morgan's on-headers drops them: the client gets neither, and its line shows neither)
        assert.deepEqual(await log.waitForLines(1), ['201 a 2'], String(reason))
      } finally {
        await server.close()
      }
    }
  })

  it('are not logged when a middleware wrapping writeHead took them off before they were sent, as with morgan', async () => {
    // As compression (through on-headers) does: the headers given to writeHead are set on the
    // response, Content-Length is dropped for the encoded body, and node:http gets the status only.
    const dropsLength: Middleware = (_req, res, next) => {
      const writeHead = res.writeHead
      res.writeHead = function (this: ServerResponse, status: number, headers?: OutgoingHttpHeaders) {
        for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) this.setHeader(name, value)
        this.removeHeader('Content-Length')
        this.setHeader('X-Encoded', 'yes')
        return writeHead.call(this, status)
      } as ServerResponse['writeHead']
      next()
    }
    const handler = (_req: IncomingMessage, res: ServerResponse): void => { res.writeHead(200, { 'Content-Length': 2, 'X-A': 'a' }); res.end('ok') }
    const format = ':status :res[content-length] :res[x-a] :res[x-encoded]'
    const { ours, theirs } = await compareWithMorgan(format, get, { handler, before: [dropsLength] })
    assert.equal(ours, theirs)
    assert.equal(ours, '200 - a yes')
    const alone = new LineCollector()
    const server = await serve([dropsLength, logger(format, { stream: alone }) as Middleware], handler)
    try {
      const reply = await rawRequest(server.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      assert.doesNotMatch(reply, /content-length/i)
      assert.deepEqual(await alone.waitForLines(1), ['200 - a yes'])
    } finally {
      await server.close()
    }
  })

  it('are logged as they were sent when a middleware wrapping writeHead before the logger hands node:http another object', async () => {
    // It rewrites a value and drops Content-Length; the app sets no header with setHeader, so
    // node:http sends that object as it is.
    const rewrites: Middleware = (_req, res, next) => {
      const writeHead = res.writeHead
      res.writeHead = function (this: ServerResponse, status: number, headers?: OutgoingHttpHeaders) {
        const { 'Content-Length': _length, ...rest } = headers ?? {}
        return writeHead.call(this, status, { ...rest, 'X-A': 'rewritten', 'Set-Cookie': ['a=1', 'b=2'] })
      } as ServerResponse['writeHead']
      next()
    }
    const handler = (_req: IncomingMessage, res: ServerResponse): void => {
      res.writeHead(200, { 'Content-Length': 2, 'X-A': 'original', 'Set-Cookie': 'c=3' })
      res.end('ok')
    }
    const out = new LineCollector()
    const server = await serve([rewrites, logger(':status :res[content-length] :res[x-a] :res[set-cookie]', { stream: out }) as Middleware], handler)
    try {
      const reply = await rawRequest(server.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      assert.doesNotMatch(reply, /content-length/i)
      assert.match(reply, /\r\nX-A: rewritten\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n/)
      assert.deepEqual(await out.waitForLines(1), ['200 - rewritten a=1, b=2'])
    } finally {
      await server.close()
    }
  })

  it('are read from what was sent, as morgan reads them, when a middleware wrapping writeHead before the logger passes them on with one of its own', async () => {
    const addsOne: Middleware = (_req, res, next) => {
      const writeHead = res.writeHead
      res.writeHead = function (this: ServerResponse, status: number, headers?: OutgoingHttpHeaders) {
        return writeHead.call(this, status, { ...headers, 'X-Added': 'yes' })
      } as ServerResponse['writeHead']
      next()
    }
    const handler = (_req: IncomingMessage, res: ServerResponse): void => {
      res.writeHead(200, { 'Content-Length': '2', 'X-A': '1', 'x-a': '2', 'Set-Cookie': ['a=1', 'b=2'] })
      res.end('ok')
    }
    // (node:http adds Date and Connection to the head by itself: neither logger sees them)
    const format = ':res[content-length] :res[x-a] :res[set-cookie] :res[x-added] :res[date] :res[connection]'
    const { ours, theirs } = await eachAlone(format, format, handler, [addsOne])
    assert.equal(ours, theirs)
    assert.equal(ours, '2 2 a=1, b=2 yes - -')
  })

  it('reach the client unchanged, reason phrase included', async () => {
    const log = logger(':status', { stream: new LineCollector() }) as Middleware
    const server = await serve([log], (_req, res) => { res.writeHead(201, 'Made', ['X-A', '1', 'X-A', '2']); res.end('ok') })
    try {
      const reply = await rawRequest(server.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      assert.match(reply, /^HTTP\/1\.1 201 Made\r\n/)
      assert.match(reply, /\r\nX-A: 1\r\nX-A: 2\r\n/)
    } finally {
      await server.close()
    }
  })
})

describe('the start of the response', () => {
  it('is recorded in res._startAt and res._startTime when the headers are written, as morgan does', async () => {
    let marks: unknown[] = []
    const handler = (_req: IncomingMessage, res: ServerResponse & { _startAt?: unknown }): void => {
      const before = res._startAt
      res.writeHead(200)
      marks = [before, res._startAt, (res as { _startTime?: unknown })._startTime]
      res.end()
    }
    await compareWithMorgan(':status', get, { handler: handler as never })
    assert.equal(marks[0], undefined)
    assert.ok(Array.isArray(marks[1]) && marks[1].length === 2)
    assert.ok(marks[2] instanceof Date)
  })

  it('is the final response\'s, not that of an informational 1xx sent before it, as with morgan', async () => {
    const marks: unknown[] = []
    const handler = (_req: IncomingMessage, res: ServerResponse & { _startAt?: unknown }): void => {
      res.writeContinue()
      res.writeProcessing()
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' })
      marks.push(res._startAt, res.headersSent)
      setTimeout(() => {
        res.writeHead(201, { 'content-length': 4, link: '</app.js>; rel=preload' })
        marks.push(res._startAt)
        res.end('done')
      }, 20)
    }
    const { ours, theirs } = await compareWithMorgan(':status :res[content-length] :res[link]', get, { handler: handler as never })
    assert.equal(ours, theirs)
    assert.equal(ours, '201 4 </app.js>; rel=preload')
    assert.deepEqual(marks.slice(0, 2), [undefined, false])
    assert.ok(Array.isArray(marks[2]))
  })

  it('is marked by the first writeHead that takes effect, whatever the app left in res._startAt, as with morgan, over HTTP/1 and HTTP/2', async () => {
    type Marked = ServerResponse & { _startAt?: unknown }
    // What res._startAt is after each step, told apart without reading a clock: undefined, the
    // value the app left, a mark, or the same mark as before.
    const state = (value: unknown, left?: unknown): unknown => value === left && left !== undefined ? 'left' : Array.isArray(value) ? 'marked' : value
    const attempt = (call: () => void): string => {
      try { call(); return 'taken' } catch (err) { return String((err as { code?: unknown }).code) }
    }
    // on-headers sets each header before it calls morgan's listener, so a header the response
    // refuses leaves the start to the call that succeeds; a status code is refused after the
    // listener ran, so that call marks
    const refused = (headers: OutgoingHttpHeaders | number) => (res: Marked): unknown[] => {
      const outcome = attempt(() => { typeof headers === 'number' ? res.writeHead(headers) : res.writeHead(200, headers) })
      const first = res._startAt
      // (what the refused call left on the response would be refused again)
      if (typeof headers === 'object') for (const name of Object.keys(headers)) attempt(() => { res.removeHeader(name) })
      // (a header node:http takes, as null over HTTP/1, has sent the headers: this one throws)
      const second = attempt(() => { res.writeHead(500) })
      return [outcome, state(first), second, res._startAt === first ? 'unchanged' : state(res._startAt)]
    }
    const steps: Record<string, (res: Marked) => unknown[]> = {
      'a value left before writeHead': (res) => {
        const left = [0, 0]
        res._startAt = left
        res.writeHead(200)
        return [state(res._startAt, left)]
      },
      'null left before writeHead': (res) => {
        res._startAt = null
        res.writeHead(200)
        return [state(res._startAt)]
      },
      'a header value with a newline': refused({ 'X-A': 'bad\nvalue' }),
      'a header value null': refused({ 'X-A': null as unknown as string }),
      'a header name with a space': refused({ 'X A': '1' }),
      // an HTTP/2 response trims a name before it checks it, and refuses some headers only when
      // it sends them, after on-headers' listener ran
      'a header name of white space alone': refused({ '\t': '1' }),
      'a header name with spaces around it, and a list for a header of one value': refused({ ' x-a ': '1', 'content-type': ['a/b', 'c/d'] }),
      'a pseudo-header refused when sent': refused({ ':protocol': 'x' }),
      'a pseudo-header refused when set': refused({ ' :Path': '/x' }),
      'a status code out of range': refused(99)
    }
    const runOn = async (protocol: string, log: unknown, handler: (res: Marked) => void): Promise<void> => {
      if (protocol === 'HTTP/2') {
        await getOverHttp2(log as Middleware, (_req, res) => { handler(res) })
        return
      }
      const server = await serve([log as Middleware], (_req, res) => { handler(res) })
      try { await get(server.port) } finally { await server.close() }
    }
    for (const protocol of ['HTTP/1', 'HTTP/2']) {
      for (const [name, step] of Object.entries(steps)) {
        const seen: unknown[][] = []
        for (const log of [morgan(':status', { stream: callRecorder() }), logger(':status', { stream: new LineCollector() })]) {
          await runOn(protocol, log, (res) => { seen.push(step(res)); res.end() })
        }
        assert.deepEqual(seen[1], seen[0], `${protocol}: ${name}`)
      }
    }
  })

  it('is recorded in req._startAt, req._startTime and req._remoteAddress when the request enters, as morgan does', async () => {
    let seen: Record<string, unknown> = {}
    const out = new LineCollector()
    const server = await serve([logger(':url', { stream: out }) as Middleware], (req, res) => {
      const r = req as unknown as Record<string, unknown>
      seen = { startAt: r._startAt, startTime: r._startTime, remote: r._remoteAddress }
      answer()(req, res)
    })
    try {
      await request(server.port)
      assert.ok(Array.isArray(seen.startAt))
      assert.ok(seen.startTime instanceof Date)
      assert.equal(seen.remote, '127.0.0.1')
    } finally {
      await server.close()
    }
  })

  it('reads the clock for each request\'s _startTime, so a changed clock or fake timers show at once, as with morgan', async (t) => {
    const seen: Array<Date | undefined> = []
    const server = await serve([logger(':url', { stream: new LineCollector() }) as Middleware], (req, res) => {
      seen.push((req as { _startTime?: Date })._startTime)
      answer()(req, res)
    })
    try {
      await request(server.port)
      t.mock.timers.enable({ apis: ['Date'], now: Date.UTC(2030, 0, 1) })
      await request(server.port)
      t.mock.timers.reset()
      assert.equal(seen[1]?.toISOString(), '2030-01-01T00:00:00.000Z')
    } finally {
      t.mock.timers.reset()
      await server.close()
    }
  })

  it('is found by custom tokens written for morgan', async () => {
    const fn = (req: IncomingMessage & { _startTime?: Date }): string => String(req._startTime instanceof Date)
    logger.token('has-start-time', fn)
    morgan.token('has-start-time', fn)
    const { ours, theirs } = await compareWithMorgan(':has-start-time', get)
    assert.equal(ours, theirs)
    assert.equal(ours, 'true')
  })
})

/**
 * A real ServerResponse on a socket of its own for GET /hand-made, as serverless adapters and
 * test harnesses make them: it finishes, but no server detaches it from its socket or emits its
 * 'close'.
 */
function handMade (): { req: IncomingMessage, res: ServerResponse } {
  const req = new IncomingMessage(new Socket())
  Object.assign(req, { method: 'GET', url: '/hand-made', headers: {} })
  const res = new ServerResponse(req)
  res.assignSocket(new Writable({ write (_chunk, _encoding, done) { done() } }) as unknown as Socket)
  return { req, res }
}

/**
 * A real ServerResponse for GET /sync on a socket that takes whatever is written and calls back
 * at once, as serverless adapters' sockets do: the response emits 'finish' inside end().
 */
function onSyncSocket (): { req: IncomingMessage, res: ServerResponse } {
  const req = new IncomingMessage(new Socket())
  Object.assign(req, { method: 'GET', url: '/sync', headers: {}, httpVersionMajor: 1, httpVersionMinor: 1 })
  const res = new ServerResponse(req)
  const socket = {
    writable: true,
    _writableState: {},
    on () { return socket },
    removeListener () { return socket },
    destroy () {},
    cork () {},
    uncork () {},
    write (_data: unknown, encoding: unknown, done?: () => void): boolean {
      const callback = typeof encoding === 'function' ? encoding as () => void : done
      callback?.()
      return true
    }
  }
  res.assignSocket(socket as unknown as Socket)
  return { req, res }
}

/** Sends `request` on a raw connection, waits `ms`, then resets the connection (a client that leaves). */
function sendThenReset (request: string, ms = 100): (port: number) => Promise<void> {
  return async (port) => {
    const socket = await rawSocket(port)
    socket.on('error', () => {})
    socket.write(request)
    await settle(ms)
    socket.resetAndDestroy()
    await settle(30)
  }
}

describe('the end of the response', () => {
  it('writes one line per logger when the response finishes', async () => {
    const out = new LineCollector()
    const a = logger('a :url', { stream: out }) as Middleware
    const b = logger('b :url :res[content-length]', { stream: out }) as Middleware
    const server = await serve([a, morgan('tiny', { stream: callRecorder() }), b], answer())
    try {
      await request(server.port, { path: '/one' })
      await request(server.port, { path: '/two' })
      assert.deepEqual(await out.waitForLines(4), ['a /one', 'b /one 2', 'a /two', 'b /two 2'])
      await settle()
      assert.equal(out.lines.length, 4)
    } finally {
      await server.close()
    }
  })

  it('writes the line of a response no server manages, which never emits \'close\', as morgan writes it', async () => {
    const linesOf = async (make: (stream: { write: (line: string) => void }) => Middleware): Promise<string[]> => {
      const lines: string[] = []
      const { req, res } = handMade()
      const finished = new Promise((resolve) => res.on('finish', resolve))
      make({ write: (line) => { lines.push(line) } })(req, res, () => { res.end('ok') })
      await finished
      await settle()
      assert.equal(res.closed, false)
      return lines
    }
    const format = ':method :url :status :res-bytes'
    assert.deepEqual(await linesOf((stream) => logger(format, { stream }) as Middleware), ['GET /hand-made 200 2\n'])
    assert.deepEqual(await linesOf((stream) => morgan(':method :url :status', { stream })), ['GET /hand-made 200\n'])
  })

  it('counts the chunk given to end() in :res-bytes when the socket calls back at once and the response finishes inside end(), as serverless adapters\' sockets do', async () => {
    const linesOf = async (send: (res: ServerResponse) => void): Promise<string[]> => {
      const lines: string[] = []
      const { req, res } = onSyncSocket()
      const log = logger(':status :res-bytes', { stream: { write: (line: string) => { lines.push(line) } } }) as Middleware
      log(req, res, () => { send(res) })
      await waitFor(() => lines.length === 1)
      return lines
    }
    assert.deepEqual(await linesOf((res) => { res.end('hello') }), ['200 5\n'])
    assert.deepEqual(await linesOf((res) => { res.write('he'); res.end('llo') }), ['200 5\n'])
    assert.deepEqual(await linesOf((res) => { res.setHeader('Content-Length', 5); res.end('hello') }), ['200 5\n'])
  })

  it('makes the line before the app\'s \'finish\' listeners run when the response finishes inside end(), as morgan does', async () => {
    const linesOf = async (make: (stream: { write: (line: string) => void }) => Middleware): Promise<string[]> => {
      const lines: string[] = []
      const { req, res } = onSyncSocket()
      make({ write: (line) => { lines.push(line) } })(req, res, () => {
        res.on('finish', () => { res.statusCode = 599; req.url = '/changed' })
        res.end('hello')
      })
      await settle()
      return lines
    }
    assert.deepEqual(await linesOf((stream) => morgan(':url :status', { stream })), ['/sync 200\n'])
    assert.deepEqual(await linesOf((stream) => logger(':url :status :res-bytes', { stream }) as Middleware), ['/sync 200 5\n'])
  })

  it('gets the line to a stream a \'finish\' listener ends when the response finishes inside end(), as morgan does', async () => {
    const textOf = async (make: (stream: Writable) => Middleware): Promise<string> => {
      let text = ''
      const stream = new Writable({ write (chunk: Buffer, _encoding, done) { text += chunk.toString(); done() } })
      const { req, res } = onSyncSocket()
      make(stream)(req, res, () => {
        res.on('finish', () => { stream.end() })
        res.end('hello')
      })
      await settle()
      return text
    }
    assert.equal(await textOf((stream) => morgan(':url :status', { stream })), '/sync 200\n')
    assert.equal(await textOf((stream) => logger(':url :status :res-bytes', { stream }) as Middleware), '/sync 200 5\n')
  })

  it('counts the chunk of an end() replaced before the logger once, when that end() hands it, or a copy, to this.write(), as test injectors\' responses do', async () => {
    type Replace = (res: ServerResponse, end: () => unknown) => ServerResponse['end']
    const linesOf = async (replace: Replace, send: (res: ServerResponse) => void): Promise<string[]> => {
      const lines: string[] = []
      const { req, res } = onSyncSocket()
      const end = res.end
      res.end = replace(res, (...args: unknown[]) => end.apply(res, args as Parameters<ServerResponse['end']>))
      const log = logger(':status :res-bytes', { stream: { write: (line: string) => { lines.push(line) } } }) as Middleware
      log(req, res, () => { send(res) })
      await waitFor(() => lines.length === 1)
      return lines
    }
    // light-my-request's: the chunk goes to this.write(), then end() is called without it
    const throughWrite: Replace = (res, end) => ((chunk?: unknown) => {
      if (chunk !== undefined) res.write(chunk as string)
      return end()
    }) as ServerResponse['end']
    assert.deepEqual(await linesOf(throughWrite, (res) => { res.end('hello') }), ['200 5\n'])
    assert.deepEqual(await linesOf(throughWrite, (res) => { res.write('ab'); res.end('cde') }), ['200 5\n'])
    assert.deepEqual(await linesOf(throughWrite, (res) => { res.end(Buffer.from('hello')) }), ['200 5\n'])
    // a copy of the chunk, as bytes
    const throughCopy: Replace = (res, end) => ((chunk?: unknown) => {
      if (chunk !== undefined) res.write(Buffer.from(chunk as string))
      return end()
    }) as ServerResponse['end']
    assert.deepEqual(await linesOf(throughCopy, (res) => { res.end('hello') }), ['200 5\n'])
  })

  it('counts what an end() replaced before the logger writes through this.write() before passing its own chunk on', async () => {
    // a middleware that adds a footer to every response, over a real connection
    const footer: Middleware = (_req, res, next) => {
      const end = res.end
      res.end = function (this: ServerResponse, chunk?: unknown) {
        this.write('<footer>')
        return (end as (this: ServerResponse, chunk: string) => ServerResponse).call(this, chunk as string)
      } as ServerResponse['end']
      next()
    }
    const out = new LineCollector()
    const server = await serve([footer, logger(':url :res-bytes', { stream: out }) as Middleware], (req, res) => { res.end(req.url === '/long' ? 'x'.repeat(29) : 'hello') })
    try {
      assert.equal((await request(server.port, { path: '/short' })).body, '<footer>hello')
      assert.equal((await request(server.port, { path: '/long' })).body.length, 37)
      assert.deepEqual(await out.waitForLines(2), ['/short 13', '/long 37'])
    } finally {
      await server.close()
    }
  })

  it('gives a logger of a later copy of the module the chunk given to end() when the response finishes inside it', async () => {
    const later = loadCopy('src/index.ts', false)
    const lines: string[] = []
    const stream = { write: (line: string) => { lines.push(line) } }
    const { req, res } = onSyncSocket()
    const first = logger('first :res-bytes', { stream }) as Middleware
    const second = (later.logger as typeof logger)('second :res-bytes', { stream }) as Middleware
    first(req, res, () => { second(req, res, () => { res.end('hello') }) })
    await waitFor(() => lines.length === 2)
    assert.deepEqual(lines.sort(), ['first 5\n', 'second 5\n'])
  })

  it('writes a line per logger when the response emitted \'close\' by hand before the second logger ran, without looping', async () => {
    const out = new LineCollector()
    const first = logger('one :url', { stream: out }) as Middleware
    const second = logger('two :url :status', { stream: out }) as Middleware
    const server = await serve([first, (_req, res, next) => { res.emit('close'); next() }, second], answer())
    try {
      assert.equal((await request(server.port, { path: '/x' })).status, 200)
      assert.deepEqual((await out.waitForLines(2)).sort(), ['one /x', 'two /x 200'])
    } finally {
      await server.close()
    }
  })

  it('writes the line of a 101 made by hand for an upgrade and detached from its socket, which never emits \'close\', as morgan writes it', async () => {
    // as an app answers an 'upgrade' request through its middlewares, then hands the socket over
    const linesOf = async (make: (stream: { write: (line: string) => void }) => Middleware, detach: 'after end' | 'at finish'): Promise<string[]> => {
      const lines: string[] = []
      const log = make({ write: (line) => { lines.push(line) } })
      const server = createServer()
      server.on('upgrade', (req: IncomingMessage, socket: Socket) => {
        const res = new ServerResponse(req)
        res.assignSocket(socket)
        if (detach === 'at finish') res.on('finish', () => { res.detachSocket(socket) })
        log(req, res, () => {
          res.writeHead(101, { Upgrade: 'websocket', Connection: 'Upgrade' })
          res.end()
          if (detach === 'after end') res.detachSocket(socket)
          socket.end('frame')
        })
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      try {
        const client = connect((server.address() as AddressInfo).port, '127.0.0.1')
        client.resume()
        client.end('GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
        await once(client, 'close')
        await waitFor(() => lines.length === 1)
        return lines
      } finally {
        server.close()
      }
    }
    for (const detach of ['after end', 'at finish'] as const) {
      assert.deepEqual(await linesOf((stream) => logger(':method :url :status', { stream }) as Middleware, detach), ['GET /ws 101\n'], detach)
      assert.deepEqual(await linesOf((stream) => morgan(':method :url :status', { stream }), detach), ['GET /ws 101\n'], detach)
    }
  })

  it('writes the lines of a response no server manages and of one sent before the logger ran while the app\'s tests run on fake timers, as morgan does', async (t) => {
    const lines: string[] = []
    const stream = { write: (line: string) => { lines.push(line) } }
    const sendFirst: Middleware = (req, res, next) => { answer(203)(req, res); next() }
    const server = await serve([sendFirst, logger(':url :status', { stream }) as Middleware], () => { /* already answered */ })
    // The fake clock never moves in this test: the lines can only come on node's own timers.
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'setInterval', 'Date'] })
    try {
      await request(server.port, { path: '/sent' })
      const { req, res } = handMade()
      const log = logger(':url :status', { stream }) as Middleware
      log(req, res, () => { res.end('ok') })
      await waitFor(() => lines.length === 2)
      assert.deepEqual(lines, ['/sent 203\n', '/hand-made 200\n'])
    } finally {
      t.mock.timers.reset()
      await server.close()
    }
  })

  it('leaves write and end of an object that only imitates a response as they are, so a spy on them stays', async () => {
    const lines: string[] = []
    const end = function (this: EventEmitter & { statusCode: number, finished: boolean }): void { ends++; this.finished = true; this.emit('finish') }
    let ends = 0
    const res = Object.assign(new EventEmitter(), { statusCode: 200, finished: false, headersSent: true, getHeader: () => undefined, writeHead () {}, end })
    const req = Object.assign(new EventEmitter(), { method: 'GET', url: '/double', headers: {}, httpVersionMajor: 1, httpVersionMinor: 1 })
    // a format function may read any token, :res-bytes too
    const format = (tokens: Record<string, (req: never, res: never) => unknown>, rq: never, rs: never): string => `${String(tokens.url?.(rq, rs))} ${String(tokens['res-bytes']?.(rq, rs))}`
    const log = logger(format as never, { stream: { write: (line: string) => { lines.push(line) } } }) as unknown as (req: unknown, res: unknown, next: () => void) => void
    log(req, res, () => { res.end() })
    await waitFor(() => lines.length === 1)
    assert.equal(res.end, end)
    assert.equal(ends, 1)
    assert.deepEqual(lines, ['/double undefined\n'])
  })

  it('writes one line when the client goes away before the response', async () => {
    const { ours, theirs } = await compareWithMorgan(':method :url :status :res[content-length] :response-time :total-time', async (port) => {
      const socket = await rawSocket(port)
      socket.write('GET /left HTTP/1.1\r\nHost: x\r\n\r\n')
      await settle(30)
      socket.destroy()
    }, { handler: () => { /* never answers */ } })
    assert.equal(ours, theirs)
    assert.equal(ours, 'GET /left - - - -')
  })

  it('writes the line as the connection fails, before an answer the app then makes on the dead connection, as morgan does', async () => {
    // The connection fails, emitting 'error' and then 'close'; at 'close' node:http emits the
    // request's 'aborted', where a body parser gives up on the upload and the app's error handler
    // answers, or the app answers by itself. None of that answer is sent: the line shows the
    // response as it was when the connection failed.
    const parse = json() as Middleware
    const handler: Handler = (req, res) => {
      if (req.method === 'GET') {
        req.on('aborted', () => { res.statusCode = 503; res.setHeader('content-length', 3); res.end('bye') })
        return
      }
      parse(req, res, (err) => {
        res.statusCode = (err as { status?: number } | undefined)?.status ?? 200
        res.setHeader('content-length', 5)
        res.end('error')
      })
    }
    const upload = 'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":'
    const leave = (request: string, how: 'end' | 'reset' | 'wait') => async (port: number): Promise<void> => {
      const socket = await rawSocket(port)
      socket.on('error', () => {})
      let received = ''
      socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
      socket.write(request)
      await settle(30)
      if (how === 'end') socket.end()
      else if (how === 'reset') socket.resetAndDestroy()
      await waitFor(() => socket.destroyed || received !== '', 5000)
      socket.destroy()
    }
    const format = ':method :url :status :res[content-length] :response-time'
    const cases: Array<[string, (port: number) => Promise<void>, object]> = [
      // node answers 400 to an incomplete body itself
      ['the client ends the connection mid-upload', leave(upload, 'end'), {}],
      ['the client resets the connection mid-upload', leave(upload, 'reset'), {}],
      // node answers 408 itself
      ['the server\'s requestTimeout passes mid-upload', leave(upload, 'wait'), { requestTimeout: 200, connectionsCheckingInterval: 20 }],
      ['the client resets the connection before the response', leave('GET /get HTTP/1.1\r\nHost: x\r\n\r\n', 'reset'), {}]
    ]
    for (const [what, send, serverOptions] of cases) {
      const { ours, theirs } = await compareWithMorgan(format, send, { handler, serverOptions })
      assert.equal(ours, theirs, what)
      assert.match(ours, /^(POST \/upload|GET \/get) - - -$/, what)
    }
  })

  it('hears an error of the connection while its response is pending, as morgan does, and no longer once the line is made', async () => {
    // node:http takes its own listeners off a connection it hands over (an upgrade): an error
    // nothing hears is thrown. morgan's listener hears one while the response is pending, makes
    // the line, and is taken off; so is the logger's.
    const out = new LineCollector()
    const logs: Record<string, Middleware> = {
      '/foyer': logger(':url :status', { stream: out }) as Middleware,
      '/morgan': morgan(':url :status', { stream: callRecorder() }) as Middleware
    }
    const outcomes: Record<string, string[]> = {}
    const server = await serve([], (req, res) => {
      const socket = req.socket
      const nodes = socket.listeners('error')
      const emit = (): string => {
        try { socket.emit('error', new Error('boom')); return 'heard' } catch (err) { return `thrown ${(err as Error).message}` }
      }
      const check = (): void => {
        for (const listener of nodes) socket.removeListener('error', listener as () => void)
        outcomes[req.url ?? ''] = [emit(), emit()]
        res.end()
      }
      const log = logs[req.url ?? '']
      if (log === undefined) check()
      else log(req, res, check)
    })
    try {
      for (const path of ['/plain', '/foyer', '/morgan']) await request(server.port, { path })
      assert.deepEqual(await out.waitForLines(1), ['/foyer -'])
      assert.deepEqual(outcomes, {
        '/plain': ['thrown boom', 'thrown boom'],
        '/foyer': ['heard', 'thrown boom'],
        '/morgan': ['heard', 'thrown boom']
      })
    } finally {
      await server.close()
    }
  })

  it('makes the line after the connection\'s \'error\' listeners that were there when the logger ran, and before those added after it, as morgan does', async () => {
    // Before: a 'clientError' listener of the server's answering on the response node is sending
    // (node's own listener calls it), or an on-finished callback of an earlier middleware. After:
    // body-parser, which answers a body over its limit once the request is done (on-finished too).
    const answer499 = (res: ServerResponse): void => { if (!res.headersSent) { res.statusCode = 499; res.end() } }
    const reset = sendThenReset('POST /up HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a":', 50)
    const earlier: Middleware = (_req, res, next) => { onFinished(res, (err) => { if (err !== null) answer499(res) }); next() }
    const never: Handler = () => { /* never answers */ }
    const before = await compareWithMorgan(':method :url :status', reset, { before: [earlier], handler: never })
    assert.equal(before.ours, before.theirs)
    assert.equal(before.ours, 'POST /up 499')
    const fromServer = await compareWithMorgan(':method :url :status', reset, {
      handler: never,
      before: [(req, _res, next) => {
        const server = (req.socket as Socket & { server?: EventEmitter }).server
        if (server !== undefined && server.listenerCount('clientError') === 0) {
          server.on('clientError', (_err: unknown, socket: Socket & { _httpMessage?: ServerResponse | null }) => { if (socket._httpMessage) answer499(socket._httpMessage) })
        }
        next()
      }]
    })
    assert.equal(fromServer.ours, fromServer.theirs)
    assert.equal(fromServer.ours, 'POST /up 499')
    const parser = bodyParser.json({ limit: 10 }) as Middleware
    const after = await compareWithMorgan(':method :url :status', reset, {
      handler: (req, res) => { parser(req, res, (err) => { res.statusCode = (err as { status?: number } | undefined)?.status ?? 200; res.end() }) }
    })
    assert.equal(after.ours, after.theirs)
    assert.equal(after.ours, 'POST /up -')
  })

  it('hears the connection\'s failure after the \'error\' listeners that were there when the logger ran, for a pipelined response that got its connection later too, as morgan does', async () => {
    // An earlier middleware answers 499 from an on-finished callback when the connection fails.
    // /b, pipelined behind /a, gets the connection once /a is answered; then the client leaves.
    const earlier: Middleware = (_req, res, next) => { onFinished(res, (err) => { if (err !== null && !res.headersSent) { res.statusCode = 499; res.end() } }); next() }
    const { ours, theirs } = await compareWithMorgan(':method :url :status', sendThenReset('GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n'), { before: [earlier], handler: (req, res) => { if (req.url === '/a') setTimeout(() => res.end('a'), 30) }, lines: 2 })
    assert.equal(ours, theirs)
    assert.equal(ours, 'GET /a 200\nGET /b 499')
  })

  it('writes the line when a connection the app took over from its response fails, and stops hearing it, as morgan does', async () => {
    // /a's handler takes the connection over and leaves its response pending; node gives the
    // connection to /b, sent next on it, at once. Then the client leaves.
    const out = new LineCollector()
    const log = logger(':method :url :status', { stream: out }) as Middleware
    let taken: Socket | undefined
    const server = await serve([log], (req, res) => { if (req.url === '/a') { taken = req.socket; res.detachSocket(req.socket) } })
    try {
      const socket = await rawSocket(server.port)
      socket.on('error', () => {})
      socket.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\n')
      await waitFor(() => taken !== undefined)
      const before = taken?.listenerCount('error') as number
      socket.write('GET /b HTTP/1.1\r\nHost: x\r\n\r\n')
      await waitFor(() => taken?.listenerCount('error') === before + 1)
      socket.resetAndDestroy()
      assert.deepEqual((await out.waitForLines(2)).sort(), ['GET /a -', 'GET /b -'])
      assert.equal(taken?.listenerCount('error'), before - 1)
    } finally {
      await server.close()
    }
  })

  it('writes the line when a connection the app took over from its pending response closes, as morgan does', async () => {
    // node no longer closes a response with the connection it was detached from
    const handler: Handler = (req, res) => {
      const socket = req.socket
      if (req.url === '/part') {
        res.writeHead(200, { 'Content-Length': 4 })
        res.write('ab')
      }
      res.detachSocket(socket)
      socket.end(req.url === '/part' ? 'cd' : 'HTTP/1.1 204 No Content\r\n\r\n')
    }
    for (const path of ['/part', '/raw']) {
      const { ours, theirs } = await compareWithMorgan(':url :status :res[content-length]', async (port) => {
        await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`)
      }, { handler })
      assert.equal(ours, theirs)
      assert.equal(ours, path === '/part' ? '/part 200 4' : '/raw - -')
    }
  })

  it('writes the line of a pending response the app detaches from a \'close\' listener of its connection\'s, as morgan does', async () => {
    // the listener comes before node's own, which would close the response
    const linesOf = async (log: Middleware, lines: () => string[]): Promise<string[]> => {
      const pending = new WeakMap<Socket, ServerResponse>()
      const server = await serve([log], (req, res) => { pending.set(req.socket, res) })
      server.server.on('connection', (socket: Socket) => {
        socket.once('close', () => { pending.get(socket)?.detachSocket(socket) })
      })
      try {
        const socket = await rawSocket(server.port)
        socket.write('GET /detach HTTP/1.1\r\nHost: x\r\n\r\n')
        await settle(50)
        socket.destroy()
        await waitFor(() => lines().length === 1)
        return lines()
      } finally {
        await server.close()
      }
    }
    const recorder = callRecorder()
    assert.deepEqual(await linesOf(morgan(':method :url :status', { stream: recorder }), () => recorder.calls), ['GET /detach -\n'])
    const out = new LineCollector()
    assert.deepEqual(await linesOf(logger(':method :url :status', { stream: out }) as Middleware, () => out.lines), ['GET /detach -'])
  })

  it('writes the line as the connection fails for a pipelined response that waited for its turn, as morgan does', async () => {
    // The first request is not logged; the second, pipelined behind it, is logged while its
    // response has no socket yet, and its client leaves mid-upload once it has its turn.
    const parse = json() as Middleware
    const first = 'GET /first HTTP/1.1\r\nHost: x\r\n\r\n'
    const upload = 'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":'
    const { ours, theirs } = await compareWithMorgan(':method :url :status', sendThenReset(first + upload), {
      before: [(req, res, next) => { if (req.url === '/first') setTimeout(() => res.end('first'), 30); else next() }],
      handler: (req, res) => { parse(req, res, (err) => { res.statusCode = (err as { status?: number } | undefined)?.status ?? 200; res.end() }) }
    })
    assert.equal(ours, theirs)
    assert.equal(ours, 'POST /upload -')
  })

  it('takes a response made from ServerResponse.prototype without its constructor, which has no socket, as morgan does', async () => {
    // (as unit tests make stand-ins: Object.create(express.response))
    const lines: string[] = []
    const log = logger(':method :url :status', { stream: { write: (line: string) => { lines.push(line) } } })
    const res = Object.create(ServerResponse.prototype) as ServerResponse
    const req = { headers: {}, method: 'GET', url: '/stand-in', socket: {} } as unknown as IncomingMessage
    let called = false
    log(req, res, () => { called = true })
    assert.equal(called, true)
    res.statusCode = 200
    res.emit('finish')
    await waitFor(() => lines.length === 1)
    assert.deepEqual(lines, ['GET /stand-in -\n'])
  })

  it('writes one line when the client goes away in the middle of the response', async () => {
    const out = new LineCollector()
    const server = await serve([logger(':url :status', { stream: out }) as Middleware], (_req, res) => { res.writeHead(200); res.write('partial') })
    try {
      const socket = await rawSocket(server.port)
      socket.write('GET /mid HTTP/1.1\r\nHost: x\r\n\r\n')
      await new Promise((resolve) => socket.once('data', resolve))
      socket.destroy()
      assert.deepEqual(await out.waitForLines(1), ['/mid 200'])
      await settle()
      assert.equal(out.lines.length, 1)
    } finally {
      await server.close()
    }
  })

  it('writes the line when the logger runs after the response was already sent', async () => {
    const sendFirst: Middleware = (req, res, next) => { answer(203)(req, res); next() }
    const { ours, theirs } = await compareWithMorgan(':url :status', get, { before: [sendFirst], handler: () => { /* already answered */ } })
    assert.equal(ours, theirs)
    assert.equal(ours, '/r 203')
  })

  it('lets every event of the response, with its arguments, through to its listeners, and writes the line before the close listeners run', async () => {
    const order: string[] = []
    const seen: string[] = []
    let custom: unknown[] = []
    // What an instrumentation library does: wrap the response's emit before the logger runs.
    const wrapEmit: Middleware = (_req, res, next) => {
      const emit = res.emit
      res.emit = function (this: ServerResponse, event: string | symbol, ...args: unknown[]): boolean {
        seen.push(String(event))
        return emit.call(this, event, ...args)
      } as ServerResponse['emit']
      res.on('close', () => { order.push('close listener before the logger') })
      next()
    }
    const log = logger(':url :status', { stream: { write: (line: string) => { order.push(line) } } }) as Middleware
    const server = await serve([wrapEmit, log], (req, res) => {
      res.on('custom', (...args: unknown[]) => { custom = args })
      res.emit('custom', 1, 2, 3, 4)
      res.on('close', () => { order.push('close listener after the logger') })
      answer()(req, res)
    })
    try {
      await request(server.port, { path: '/e' })
      await waitFor(() => order.length === 3)
      await settle()
      assert.deepEqual(order, ['/e 200\n', 'close listener before the logger', 'close listener after the logger'])
      assert.deepEqual(custom, [1, 2, 3, 4])
      assert.equal(seen.filter((event) => event === 'close').length, 1)
      assert.ok(seen.includes('finish'))
    } finally {
      await server.close()
    }
  })

  it('makes the line before the \'finish\' listeners the app added after the logger, so tokens see what was sent, as morgan\'s do', async () => {
    logger.token('user', (req) => (req as IncomingMessage & { user?: string }).user)
    morgan.token('user', (req: IncomingMessage & { user?: string }) => req.user)
    // per-request state cleaned up once the response is sent, and a status changed too late
    const handler: Handler = (req, res) => {
      (req as IncomingMessage & { user?: string }).user = 'ada'
      res.on('finish', () => {
        delete (req as IncomingMessage & { user?: string }).user
        res.statusCode = 299
      })
      answer()(req, res)
    }
    const { ours, theirs } = await compareWithMorgan(':method :url :status user=:user', get, { handler })
    assert.equal(ours, theirs)
    assert.equal(ours, 'GET /r 200 user=ada')
  })

  it('gives tokens the request the middleware saw, when it is not the one the response holds', async () => {
    const out = new LineCollector()
    logger.token('seen-user', (req) => (req as IncomingMessage & { user?: string }).user)
    const log = logger(':seen-user :url :status', { stream: out }) as Middleware
    // A framework handing middleware its own request object, made from node's.
    const server = await serve([], (req, res) => {
      const own = Object.assign(Object.create(req) as IncomingMessage, { user: 'ann' })
      log(own, res, () => { answer()(req, res) })
    })
    try {
      await request(server.port, { path: '/own' })
      assert.deepEqual(await out.waitForLines(1), ['ann /own 200'])
    } finally {
      await server.close()
    }
  })

  it('writes each line of pipelined requests in order', async () => {
    const out = new LineCollector()
    const server = await serve([logger(':url :status', { stream: out }) as Middleware], answer())
    try {
      await rawRequest(server.port, 'GET /p1 HTTP/1.1\r\nHost: x\r\n\r\nGET /p2 HTTP/1.1\r\nHost: x\r\n\r\nGET /p3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      assert.deepEqual(await out.waitForLines(3), ['/p1 200', '/p2 200', '/p3 200'])
    } finally {
      await server.close()
    }
  })
})

describe('the async context', () => {
  it('is the one the middleware ran in, so tokens can read AsyncLocalStorage, as with morgan', async () => {
    const storage = new AsyncLocalStorage<string>()
    const fn = (): string => storage.getStore() ?? 'none'
    logger.token('store', fn)
    morgan.token('store', fn)
    const enter: Middleware = (req, _res, next) => { storage.run(`id-${req.url ?? ''}`, next) }
    const { ours, theirs } = await compareWithMorgan(':store', get, { before: [enter] })
    assert.equal(ours, theirs)
    assert.equal(ours, 'id-/r')
    const aborted = await compareWithMorgan(':store :status', async (port) => {
      const socket = await rawSocket(port)
      socket.write('GET /gone HTTP/1.1\r\nHost: x\r\n\r\n')
      await settle(30)
      socket.destroy()
    }, { before: [enter], handler: () => { /* never answers */ } })
    assert.equal(aborted.ours, aborted.theirs)
    assert.equal(aborted.ours, 'id-/gone -')
  })
})

describe('HTTP/2 compatibility requests', () => {
  it('are logged, with their version', async () => {
    const out = new LineCollector()
    const log = logger(':method :url :status :http-version :res[content-length]', { stream: out }) as Middleware
    await getOverHttp2(log, (_req, res) => { res.setHeader('content-length', 2); res.end('ok') })
    assert.deepEqual(await out.waitForLines(1), ['GET /h2 200 2.0 2'])
  })

  it('send a flat header list given to writeHead as node:http2 sends it without a logger, and log it', async () => {
    // Before Node.js 20.12 an HTTP/2 compatibility response has no appendHeader, and its own
    // writeHead keeps the last value of a repeated name; from 20.12 the values add up.
    const answer = async (withLogger: boolean): Promise<{ header: unknown, lines: string[] }> => {
      const out = new LineCollector()
      const log = withLogger ? logger(':status :res[x-a]', { stream: out }) as Middleware : undefined
      const headers = await getOverHttp2(log, (_req, res) => { res.writeHead(200, ['X-A', '1', 'X-A', '2'] as unknown as OutgoingHttpHeaders); res.end('ok') })
      return { header: headers['x-a'], lines: withLogger ? await out.waitForLines(1) : [] }
    }
    const bare = await answer(false)
    const logged = await answer(true)
    assert.equal(logged.header, bare.header)
    assert.deepEqual(logged.lines, [`200 ${String(bare.header)}`])
  })
})
