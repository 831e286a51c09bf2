// logger(format, options): every option, the format argument in all its forms, the legacy
// forms morgan still accepts, and the middleware in Express and Connect.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Writable } from 'node:stream'
import { promisify } from 'node:util'
import connect from 'connect'
import express from 'express'
import { logger } from '../../src/index.js'
import type { FormatFn, LoggerMiddleware } from '../../src/index.js'
import { answer, callRecorder, compareWithMorgan, LineCollector, maskClock, morgan, serve, settle, sleep, waitFor, watchWarnings } from '../helpers/logger-lines.js'
import { rawSocket, request, startServer } from '../helpers/server.js'
import type { Middleware } from '../helpers/server.js'

const run = promisify(execFile)

/** Runs `source` in a child process with foyer loaded, and returns what it printed. */
async function child (source: string, env: Record<string, string> = {}): Promise<{ stdout: string, stderr: string }> {
  return await run(process.execPath, ['--import', 'tsx', '-e', `const { logger } = require('./src/index.ts');\n${source}`], { env: { ...process.env, ...env } })
}

/** One request through a server with the given middlewares; resolves with the reply status. */
async function once (middlewares: Middleware[], handler = answer(), path = '/'): Promise<number> {
  const server = await serve(middlewares, handler)
  try {
    return (await request(server.port, { path })).status
  } finally {
    await server.close()
  }
}

describe('the immediate option', () => {
  it('writes the line when the request arrives, before any response', async () => {
    const out = new LineCollector()
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      // answer only once the line is out
      waitFor(() => out.lines.length === 1).then(() => { answer()(req, res) }, () => { res.end('timeout') })
    }
    assert.equal(await once([logger(':method :url :status :res[content-length] :response-time', { stream: out, immediate: true }) as Middleware], handler, '/now'), 200)
    assert.deepEqual(out.lines, ['GET /now - - -'])
  })

  it('logs a request whose handler never answers, once', async () => {
    const out = new LineCollector()
    const server = await serve([logger(':url', { stream: out, immediate: true }) as Middleware], () => { /* hangs */ })
    try {
      const socket = await rawSocket(server.port)
      socket.write('GET /hang HTTP/1.1\r\nHost: x\r\n\r\n')
      await out.waitForLines(1)
      socket.destroy()
      await settle(50)
      assert.deepEqual(out.lines, ['/hang'])
    } finally {
      await server.close()
    }
  })

  it('writes the same line as morgan', async () => {
    const { ours, theirs } = await compareWithMorgan('combined', async (port) => await request(port, { path: '/i' }), { options: { immediate: true } })
    assert.equal(ours, theirs)
    assert.equal(maskClock(ours), '127.0.0.1 - - [<clf>] "GET /i HTTP/1.1" - - "-" "-"')
  })
})

describe('the skip option', () => {
  it('skips the line when skip(req, res) is truthy, deciding once the response is known', async () => {
    const out = new LineCollector()
    const log = logger(':status :url', { stream: out, skip: (_req, res) => res.statusCode < 400 }) as Middleware
    const server = await serve([log], (req, res) => { answer(Number(req.url?.slice(1)))(req, res) })
    try {
      for (const status of [200, 302, 404, 500]) await request(server.port, { path: `/${status}` })
      assert.deepEqual(await out.waitForLines(2), ['404 /404', '500 /500'])
      await settle()
      assert.equal(out.lines.length, 2)
    } finally {
      await server.close()
    }
  })

  it('is given the request and the response', async () => {
    const seen: Array<[IncomingMessage, ServerResponse]> = []
    let handled: [IncomingMessage, ServerResponse] | undefined
    const out = new LineCollector()
    await once([logger(':url', { stream: out, skip: (req, res) => { seen.push([req, res]); return 1 } }) as Middleware], (req, res) => { handled = [req, res]; answer()(req, res) })
    await waitFor(() => seen.length === 1)
    assert.equal(seen[0]?.[0], handled?.[0])
    assert.equal(seen[0]?.[1], handled?.[1])
    assert.deepEqual(out.lines, [])
  })

  it('is called, as the format function is, without a receiver, as morgan calls them', async () => {
    const receivers: unknown[] = []
    const format = function (this: unknown): string { receivers.push(this); return 'line' }
    const skip = function (this: unknown): boolean { receivers.push(this); return false }
    for (const immediate of [false, true]) {
      const out = new LineCollector()
      await once([logger(format, { stream: out, skip, immediate }) as Middleware])
      assert.deepEqual(await out.waitForLines(1), ['line'])
    }
    assert.deepEqual(receivers, [undefined, undefined, undefined, undefined])
  })

  it('throws a TypeError when it is not a function', () => {
    assert.throws(() => logger('tiny', { skip: true as unknown as () => boolean }), { name: 'TypeError', message: 'option skip must be a function' })
  })
})

describe('the stream option', () => {
  it('defaults to the standard output', async () => {
    const { stdout } = await child(`
      const { createServer } = require('node:http')
      const log = logger(':method :url :status')
      const server = createServer((req, res) => log(req, res, () => res.end('ok')))
      server.listen(0, '127.0.0.1', async () => {
        await fetch('http://127.0.0.1:' + server.address().port + '/to-stdout')
        server.close()
      })
    `)
    assert.equal(stdout, 'GET /to-stdout 200\n')
  })

  it('accepts any object with a write method, called once per line', async () => {
    const recorder = callRecorder()
    const server = await serve([logger(':url', { stream: recorder }) as Middleware], answer())
    try {
      await Promise.all([request(server.port, { path: '/1' }), request(server.port, { path: '/2' })])
      await waitFor(() => recorder.calls.length === 2)
      assert.deepEqual(recorder.calls.sort(), ['/1\n', '/2\n'])
    } finally {
      await server.close()
    }
  })

  it('receives the objects a format function returns when it is in object mode', async () => {
    const entries: unknown[] = []
    const stream = { writableObjectMode: true, write (entry: unknown) { entries.push(entry) } }
    const format = (tokens: Parameters<FormatFn>[0], req: IncomingMessage, res: ServerResponse): object => ({
      method: tokens.method(req, res), url: tokens.url(req, res), status: Number(tokens.status(req, res))
    })
    await once([logger(format, { stream }) as Middleware], answer(201), '/obj')
    await waitFor(() => entries.length === 1)
    assert.deepEqual(entries, [{ method: 'GET', url: '/obj', status: 201 }])
  })

  it('gets an object as text with a newline when it is not in object mode, as in morgan', async () => {
    const { ours, theirs } = await compareWithMorgan(() => ({ a: 1 }), async (port) => await request(port))
    assert.equal(ours, theirs)
    assert.equal(ours, '[object Object]')
  })

  it('throws a TypeError when it has no write method', () => {
    assert.throws(() => logger('tiny', { stream: {} as unknown as Writable }), { name: 'TypeError', message: 'option stream must have a write method' })
  })
})

describe('the maxPending option', () => {
  it('throws a TypeError unless it is a positive number', () => {
    for (const bad of [0, -1, Number.NaN, '16mb', null]) {
      assert.throws(() => logger('tiny', { stream: new LineCollector(), maxPending: bad as number }), { name: 'TypeError', message: 'option maxPending must be a positive number of bytes' })
    }
    assert.equal(typeof logger('tiny', { stream: new LineCollector(), maxPending: 1024 }), 'function')
  })

  it('is never read from Object.prototype, since only foyer has it, but is from other objects the options inherit from', () => {
    const proto = Object.prototype as Record<string, unknown>
    let made: unknown
    try {
      // as a prototype pollution elsewhere in the application would put it
      proto['maxPending'] = -1
      made = logger('tiny', { stream: new LineCollector() })
      made = logger('tiny', new Proxy({ stream: new LineCollector() }, {}))
      made = logger('tiny')
      proto['maxPending'] = Number.NaN
      made = logger('tiny', new Proxy({ stream: new LineCollector() }, {}))
    } finally {
      delete proto['maxPending']
    }
    assert.equal(typeof made, 'function')
    const inherited = Object.create({ maxPending: -1 }) as { stream: LineCollector }
    inherited.stream = new LineCollector()
    assert.throws(() => logger('tiny', inherited), { name: 'TypeError', message: 'option maxPending must be a positive number of bytes' })
    const proxied = new Proxy({ stream: new LineCollector() }, { get: (target, key) => key === 'maxPending' ? -1 : Reflect.get(target, key) })
    assert.throws(() => logger('tiny', proxied), { name: 'TypeError', message: 'option maxPending must be a positive number of bytes' })
  })
})

describe('the format argument', () => {
  it('may be a format function, called with the tokens, the request and the response', async () => {
    let args: unknown[] = []
    let handled: unknown[] = []
    const out = new LineCollector()
    await once([logger((tokens, req, res) => { args = [tokens, req, res]; return `${tokens['http-version'](req, res) ?? ''} ${tokens.status(req, res) ?? ''}` }, { stream: out }) as Middleware],
      (req, res) => { handled = [req, res]; answer(202)(req, res) })
    assert.deepEqual(await out.waitForLines(1), ['1.1 202'])
    assert.equal(args[1], handled[0])
    assert.equal(args[2], handled[1])
    for (const name of ['date', 'method', 'url', 'status', 'remote-addr', 'remote-user', 'req', 'res', 'referrer', 'user-agent', 'http-version', 'pid', 'response-time', 'total-time']) {
      assert.equal(typeof (args[0] as Record<string, unknown>)[name], 'function', name)
    }
  })

  it('writes nothing when the format function returns undefined or null', async () => {
    const out = new LineCollector()
    let calls = 0
    const quiet = logger(() => { calls++; return calls === 1 ? undefined : null }, { stream: out }) as Middleware
    await once([quiet])
    await once([quiet])
    await settle()
    assert.equal(calls, 2)
    assert.equal(out.text, '')
  })

  it('throws a TypeError for a number, true or a symbol, as morgan does', () => {
    for (const bad of [42, true, Symbol('x')]) {
      assert.throws(() => logger(bad as unknown as string), { name: 'TypeError', message: 'argument format must be a string' })
    }
  })

  it('falls back to the default format for null, false and the empty string, as morgan does', async () => {
    for (const empty of [null, false, '']) {
      const { ours, theirs } = await compareWithMorgan(empty, async (port) => await request(port, { path: '/e' }))
      assert.equal(ours, theirs)
      assert.match(ours, /^127\.0\.0\.1 - - \[\w{3}, .* GMT\] "GET \/e HTTP\/1\.1" 200 2 "-" "-"$/)
    }
  })

  it('is deprecated when missing, and then the default format', async () => {
    const { stdout } = await child(`
      process.on('warning', (w) => console.log(w.name + ': ' + w.message))
      const lines = []
      logger(undefined, { stream: { write (l) { lines.push(l) } } })
    `)
    assert.match(stdout, /DeprecationWarning: foyer\/logger: undefined format: specify a format/)
    assert.match(stdout, /DeprecationWarning: foyer\/logger: default format: use combined format/)
  })
})

describe('the legacy logger(options) form', () => {
  it('takes the format from options.format, with a deprecation warning naming the new form', async () => {
    const { stdout } = await child(`
      process.on('warning', (w) => console.log(w.name + ': ' + w.message))
      const lines = []
      const log = logger({ format: 'tiny', stream: { write (l) { lines.push(l) } } })
      console.log(typeof log)
    `)
    assert.match(stdout, /DeprecationWarning: foyer\/logger: logger\(options\): use logger\("tiny", options\) instead/)
    assert.match(stdout, /^function$/m)
  })

  it('writes what morgan writes, with the default format when options.format is missing', async () => {
    const watch = watchWarnings()
    try {
      const recorder = callRecorder()
      const out = new LineCollector()
      const { morgan } = await import('../helpers/logger-lines.js')
      const server = await serve([morgan({ stream: recorder }), logger({ stream: out, immediate: false }) as Middleware], answer())
      try {
        await request(server.port, { path: '/legacy' })
        await waitFor(() => recorder.calls.length === 1)
        assert.deepEqual(await out.waitForLines(1), [recorder.calls[0]?.slice(0, -1)])
      } finally {
        await server.close()
      }
    } finally {
      watch.stop()
    }
  })
})

describe('the legacy buffer option', () => {
  it('collects lines for the given milliseconds and writes them together, with a deprecation warning', async () => {
    const watch = watchWarnings()
    const out = new LineCollector()
    try {
      const log = logger(':url', { stream: out, buffer: 150 }) as Middleware
      const server = await serve([log], answer())
      try {
        await request(server.port, { path: '/a' })
        await request(server.port, { path: '/b' })
        await settle(30)
        assert.equal(out.text, '', 'nothing before the interval')
        await out.waitForLines(2)
        assert.deepEqual(out.chunks, ['/a\n/b\n'])
      } finally {
        await server.close()
      }
      await settle(10)
      assert.ok(watch.warnings.some((w) => w.name === 'DeprecationWarning' && /buffer option/.test(w.message)))
    } finally {
      watch.stop()
    }
  })

  it('writes what a format returns as text lines, objects too, to an object-mode stream, as morgan\'s buffer does', async () => {
    const written = async (make: (stream: Writable) => Middleware): Promise<unknown[]> => {
      const chunks: unknown[] = []
      const out = new Writable({ objectMode: true, write (chunk: unknown, _encoding, done) { chunks.push(chunk); done() } })
      const server = await serve([make(out)], answer())
      try {
        await request(server.port, { path: '/a' })
        await request(server.port, { path: '/b' })
        await waitFor(() => chunks.length > 0)
        return chunks
      } finally {
        await server.close()
      }
    }
    const format = (_tokens: unknown, req: IncomingMessage): object => ({ url: req.url, toString () { return `GET ${String(req.url)}` } })
    const theirs = await written((stream) => morgan(format, { stream, buffer: 50 }))
    assert.deepEqual(theirs, ['GET /a\nGET /b\n'])
    assert.deepEqual(await written((stream) => logger(format, { stream, buffer: 50 }) as Middleware), theirs)
  })

  it('holds lines for a second with buffer: true, on the app\'s fake timers, as morgan does', async (t) => {
    for (const make of [(stream: Writable) => morgan(':url', { stream, buffer: true }), (stream: Writable) => logger(':url', { stream, buffer: true })]) {
      const out = new LineCollector()
      const server = await serve([make(out) as Middleware], answer())
      t.mock.timers.enable({ apis: ['setTimeout'] })
      try {
        await request(server.port, { path: '/held' })
        await settle(20)
        t.mock.timers.tick(999)
        await settle(20)
        assert.equal(out.text, '', 'held until the second has passed')
        t.mock.timers.tick(1)
        await waitFor(() => out.lines.length === 1)
        assert.deepEqual(out.lines, ['/held'])
      } finally {
        t.mock.timers.reset()
        await server.close()
      }
    }
  })

  it('writes what is buffered when the process exits', async () => {
    const { stdout } = await child(`
      const { createServer } = require('node:http')
      const log = logger(':url', { buffer: true })
      const server = createServer((req, res) => log(req, res, () => res.end('ok')))
      server.listen(0, '127.0.0.1', async () => {
        await fetch('http://127.0.0.1:' + server.address().port + '/buffered')
        process.exit(0)
      })
    `)
    assert.equal(stdout, '/buffered\n')
  })

  it('hands what it holds to the stream when the app ends the stream', async () => {
    const watch = watchWarnings()
    const out = new LineCollector()
    try {
      const server = await serve([logger(':url', { stream: out, buffer: 60_000 }) as Middleware], answer())
      try {
        await request(server.port, { path: '/held' })
        await settle(20)
        assert.equal(out.text, '', 'held for the interval')
      } finally {
        await server.close()
      }
      out.end()
      assert.deepEqual(out.lines, ['/held'])
      assert.equal(out.writableEnded, true)
    } finally {
      watch.stop()
    }
  })

  it('keeps the process alive until it has written, as morgan, for a stream that completes its writes later', async () => {
    const { stdout } = await child(`
      const { createServer } = require('node:http')
      const { Writable } = require('node:stream')
      const out = new Writable({ write (chunk, _encoding, done) { setTimeout(() => { process.stdout.write(chunk); done() }, 20) } })
      const log = logger(':url', { buffer: 100, stream: out })
      const server = createServer((req, res) => log(req, res, () => res.end('ok')))
      server.listen(0, '127.0.0.1', async () => {
        await fetch('http://127.0.0.1:' + server.address().port + '/late')
        server.close()
        server.closeAllConnections()
      })
    `)
    assert.equal(stdout, '/late\n')
  })
})

describe('lines at process.exit()', () => {
  it('come before the output of exit handlers the app registered earlier, as morgan has written them by then', async () => {
    const { stdout } = await child(`
      const { createServer } = require('node:http')
      process.on('exit', () => { process.stdout.write('exit handler\\n') })
      const log = logger(':url')
      const server = createServer((req, res) => log(req, res, () => { res.on('finish', () => process.exit(0)); res.end('ok') }))
      server.listen(0, '127.0.0.1', () => { fetch('http://127.0.0.1:' + server.address().port + '/last') })
    `)
    assert.equal(stdout, '/last\nexit handler\n')
  })
})

describe('several loggers in one app', () => {
  it('each writes its own line to its own stream', async () => {
    const errors = new LineCollector()
    const all = new LineCollector()
    const server = await serve([
      logger('dev', { stream: errors, skip: (_req, res) => res.statusCode < 400 }) as Middleware,
      logger('common', { stream: all }) as Middleware
    ], (req, res) => { answer(req.url === '/bad' ? 500 : 200)(req, res) })
    try {
      await request(server.port, { path: '/good' })
      await request(server.port, { path: '/bad' })
      const lines = await all.waitForLines(2)
      assert.deepEqual(lines.map(maskClock), ['127.0.0.1 - - [<clf>] "GET /good HTTP/1.1" 200 2', '127.0.0.1 - - [<clf>] "GET /bad HTTP/1.1" 500 2'])
      assert.equal((await errors.waitForLines(1)).length, 1)
      // eslint-disable-next-line no-control-regex -- the colour codes are the subject
      assert.match(errors.lines[0] ?? '', /^\x1b\[0mGET \/bad \x1b\[31m500\x1b\[0m/)
    } finally {
      await server.close()
    }
  })

  it('log the request on arrival and again on response, in that order, on one stream', async () => {
    const out = new LineCollector()
    await once([
      logger('> :method :url', { stream: out, immediate: true }) as Middleware,
      logger('< :status :url', { stream: out }) as Middleware
    ], answer(204), '/both')
    assert.deepEqual(await out.waitForLines(2), ['> GET /both', '< 204 /both'])
  })
})

describe('errors while logging', () => {
  it('are passed to next with immediate', async () => {
    const failing = logger(() => { throw new Error('format failed') }, { stream: new LineCollector(), immediate: true }) as Middleware
    let caught: unknown
    const server = await startServer((req, res) => {
      failing(req, res, (err) => {
        caught = err
        res.statusCode = err === undefined ? 200 : 500
        res.end()
      })
    })
    try {
      assert.equal((await request(server.port)).status, 500)
      assert.equal((caught as Error).message, 'format failed')
    } finally {
      await server.close()
    }
  })

  it('of a falsy value thrown with immediate, which next() would take for no error, are reported', async () => {
    const watch = watchWarnings()
    try {
      for (const thrown of [undefined, null, 0, '', false]) {
        const failing = logger(() => { throw thrown }, { stream: new LineCollector(), immediate: true }) as Middleware
        const server = await serve([failing], answer())
        try {
          assert.equal((await request(server.port)).status, 200)
        } finally {
          await server.close()
        }
      }
      await settle()
      assert.equal(watch.withCode('FOYER_LOG_FORMAT_ERROR').length, 5)
    } finally {
      watch.stop()
    }
  })

  it('of a value that cannot be made into text (no prototype, a throwing getter) are reported, and the server goes on', async () => {
    const watch = watchWarnings()
    try {
      const noPrototype = Object.create(null) as object
      const badMessage = Object.defineProperty(new Error(), 'message', { get () { throw new Error('no message') } })
      for (const thrown of [noPrototype, badMessage]) {
        for (const immediate of [false, true]) {
          const failing = logger(() => { throw thrown }, { stream: new LineCollector(), immediate }) as Middleware
          const server = await serve([failing], (_req, res) => { res.end('ok') })
          try {
            await request(server.port)
            await settle()
          } finally {
            await server.close()
          }
        }
      }
      const reports = watch.withCode('FOYER_LOG_FORMAT_ERROR')
      assert.equal(reports.length, 2)
      for (const report of reports) assert.match(report.message, /threw \(a value that cannot be shown\)/)
    } finally {
      watch.stop()
    }
  })

  it('are reported once and do not stop the server when the line is due after the response', async () => {
    const watch = watchWarnings()
    try {
      const failing = logger(() => { throw new Error('format failed') }, { stream: new LineCollector() }) as Middleware
      const server = await serve([failing], answer())
      try {
        for (let i = 0; i < 3; i++) assert.equal((await request(server.port)).status, 200)
        await settle()
        const reports = watch.warnings.filter((w) => /format failed/.test(w.message))
        assert.equal(reports.length, 1)
      } finally {
        await server.close()
      }
    } finally {
      watch.stop()
    }
  })
})

describe('the middleware', () => {
  it('counts no dropped lines while the stream keeps up, and the count is read-only', async () => {
    const log: LoggerMiddleware = logger('tiny', { stream: new LineCollector() })
    await once([log as Middleware])
    assert.equal(log.dropped, 0)
    assert.throws(() => { (log as { dropped: number }).dropped = 5 }, TypeError)
  })

  it('works in Express 5, logging the original URL of routed requests', async () => {
    const out = new LineCollector()
    const app = express()
    const router = express.Router()
    router.use(logger(':method :url :status', { stream: out }))
    router.get('/items', (_req, res) => { res.send('items') })
    app.use('/api', router)
    const server = await startServer(app)
    try {
      await request(server.port, { path: '/api/items?x=1' })
      assert.deepEqual(await out.waitForLines(1), ['GET /api/items?x=1 200'])
    } finally {
      await server.close()
    }
  })

  it('uses req.ip from Express when the app trusts a proxy', async () => {
    const out = new LineCollector()
    const app = express()
    app.set('trust proxy', true)
    app.use(logger(':remote-addr', { stream: out }))
    app.get('/', (_req, res) => { res.send('ok') })
    const server = await startServer(app)
    try {
      await request(server.port, { headers: { 'x-forwarded-for': '198.51.100.7' } })
      assert.deepEqual(await out.waitForLines(1), ['198.51.100.7'])
    } finally {
      await server.close()
    }
  })

  it('works in Connect', async () => {
    const out = new LineCollector()
    const app = connect()
    app.use(logger('tiny', { stream: out }))
    app.use((_req: IncomingMessage, res: ServerResponse) => { res.setHeader('content-length', 2); res.end('ok') })
    const server = await startServer(app)
    try {
      await request(server.port, { path: '/c' })
      assert.match((await out.waitForLines(1))[0] ?? '', /^GET \/c 200 2 - \d+\.\d{3} ms$/)
    } finally {
      await server.close()
    }
  })
})

describe('one registry for every copy of the module', () => {
  it('sees a token registered through another copy, as the CommonJS and ESM builds would', async () => {
    const loaded = Object.keys(require.cache).filter((k) => k.includes(`${'/src/logger/'}`))
    const saved = loaded.map((k) => [k, require.cache[k]] as const)
    for (const k of loaded) Reflect.deleteProperty(require.cache, k)

    const copy = (require('../../src/logger/index.ts') as { logger: typeof logger }).logger
    for (const [k, m] of saved) require.cache[k] = m
    assert.notEqual(copy, logger, 'a second copy')

    copy.token('from-the-other-copy', () => 'shared')
    copy.format('format-from-the-other-copy', ':from-the-other-copy :method')
    const out = new LineCollector()
    await once([logger('format-from-the-other-copy', { stream: out }) as Middleware])
    assert.deepEqual(await out.waitForLines(1), ['shared GET'])
    await sleep(1)
  })
})
