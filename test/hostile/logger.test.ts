// Hostile values and failing destinations against the logger: a line is always one line, a broken
// or stalled destination never takes the server down or its memory up.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Writable } from 'node:stream'
import fc from 'fast-check'
import { logger } from '../../src/index.js'
import { gc } from '../helpers/gc.js'
import { chain, rawRequest, rawSocket, request, startServer } from '../helpers/server.js'
import type { Middleware } from '../helpers/server.js'
import type { TestServer } from '../helpers/server.js'

const RUNS = Number(process.env.FOYER_FUZZ_RUNS ?? 100)

class Lines extends Writable {
  text = ''
  override _write (chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.text += chunk.toString('utf8')
    done()
  }
}

const settle = async (ms = 20): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

async function until (check: () => boolean, ms = 2000): Promise<void> {
  const started = Date.now()
  while (!check() && Date.now() - started < ms) await settle(5)
}

describe('escaping (property)', () => {
  const out = new Lines()
  let server: TestServer
  before(async () => {
    const log = logger(':remote-user ":url" ":req[x-test]" ":referrer" ":user-agent" :status', { stream: out })
    server = await startServer((req: IncomingMessage & { originalUrl?: string }, res: ServerResponse) => {
      const forced = req.headers['x-original-url']
      if (typeof forced === 'string') req.originalUrl = Buffer.from(forced, 'base64').toString('utf8')
      log(req, res, () => { res.end('ok') })
    })
  })
  after(async () => { await server.close() })

  // any code point, biased towards the dangerous ones
  const hostileChar = fc.oneof(
    fc.integer({ min: 0, max: 0x20 }),
    fc.integer({ min: 0x7f, max: 0xa0 }),
    fc.constantFrom(0x22, 0x5c, 0x2028, 0x2029, 0x1b),
    fc.integer({ min: 0x21, max: 0x10ffff }).filter((c) => c < 0xd800 || c > 0xdfff)
  ).map((c) => String.fromCodePoint(c))
  const hostile = fc.array(hostileChar, { maxLength: 40 }).map((a) => a.join(''))
  // header bytes node:http accepts: tab, visible ASCII and obs-text
  const headerValue = fc.array(fc.oneof(fc.constant(9), fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff })), { maxLength: 40 })
    .map((a) => Buffer.from(a).toString('latin1').trim())

  it('for any URL, header value or Basic-auth user name, the line holds no raw control character and one newline, at its end', async () => {
    await fc.assert(fc.asyncProperty(hostile, hostile, headerValue, headerValue, async (url, user, value, agent) => {
      const before = out.text.length
      const auth = Buffer.from(`${user}:pw`, 'utf8').toString('base64')
      const head = Buffer.from([
        'GET /x HTTP/1.1', 'Host: localhost', `X-Original-Url: ${Buffer.from(url).toString('base64')}`,
        `Authorization: Basic ${auth}`, `X-Test: ${value}`, `User-Agent: ${agent}`, `Referer: ${value}`,
        'Connection: close', '', ''
      ].join('\r\n'), 'latin1')
      const reply = await rawRequest(server.port, head)
      assert.match(reply, /^HTTP\/1\.1 200/)
      await until(() => out.text.length > before && out.text.endsWith('\n'))
      const line = out.text.slice(before)
      assert.equal(line.indexOf('\n'), line.length - 1, `one newline, at the end: ${JSON.stringify(line)}`)
      // eslint-disable-next-line no-control-regex -- control characters are exactly what must not appear
      assert.doesNotMatch(line.slice(0, -1), /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/)
    }), { numRuns: RUNS })
  })
})

describe('destinations', () => {
  it('a destination that errors: the server keeps answering, and the failure is reported once', async () => {
    const warnings: Error[] = []
    const onWarning = (w: Error): void => { warnings.push(w) }
    process.on('warning', onWarning)
    const broken = new Writable({
      write (_chunk, _enc, done) {
        done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))
      }
    })
    const log = logger('tiny', { stream: broken })
    const server = await startServer((req, res) => { log(req, res, () => { res.end('ok') }) })
    try {
      for (let i = 0; i < 20; i++) {
        const res = await request(server.port, { path: `/${i}` })
        assert.equal(res.body, 'ok')
      }
      await settle(50)
      const reports = warnings.filter((w) => /EPIPE/.test(w.message))
      assert.equal(reports.length, 1)
      assert.ok(log.dropped >= 19, `dropped ${log.dropped}`)
    } finally {
      process.off('warning', onWarning)
      await server.close()
    }
  })

  it('a destination that never drains: memory stays under maxPending, and the drops are counted', async () => {
    const stalled = new Writable({ highWaterMark: 1024, write () { /* never calls back */ } })
    const maxPending = 256 * 1024
    const log = logger(':method :url :req[x-pad]', { stream: stalled, maxPending })
    const server = await startServer((req, res) => { log(req, res, () => { res.end('ok') }) })
    const pad = 'p'.repeat(4000)
    try {
      gc()
      const base = process.memoryUsage().heapUsed
      const total = 2000
      for (let i = 0; i < total; i += 20) {
        await Promise.all(Array.from({ length: 20 }, async (_, j) => await request(server.port, { path: `/${i + j}`, headers: { 'x-pad': pad } })))
      }
      await settle(50)
      gc()
      const grown = process.memoryUsage().heapUsed - base
      // 2,000 lines of 4 KB is 8 MB: a queue bounded at 256 KiB keeps only a fraction
      assert.ok(grown < 6 * 1024 * 1024, `heap grew ${(grown / 1048576).toFixed(1)} MiB`)
      const kept = Math.floor(maxPending / 4000)
      assert.ok(log.dropped >= total - kept - 5 && log.dropped <= total, `dropped ${log.dropped}`)
    } finally {
      await server.close()
      stalled.destroy()
    }
  })

  it('a destination that never drains: lines of many tokens waiting for it take about their length, not the pieces they were made of', async () => {
    const stalled = new Writable({ highWaterMark: 1024, write () { /* never calls back */ } })
    const maxPending = 1024 * 1024
    // each line (about 600 characters) is made of 120 pieces that differ from line to line
    const log = logger(Array(60).fill(':url :status').join(' '), { stream: stalled, maxPending })
    const server = await startServer((req, res) => { log(req, res, () => { res.end('ok') }) })
    try {
      gc()
      const base = process.memoryUsage().heapUsed
      const total = 2500
      for (let i = 0; i < total; i += 25) {
        await Promise.all(Array.from({ length: 25 }, async (_, j) => await request(server.port, { path: `/${i + j}` })))
      }
      await settle(50)
      gc()
      const grown = process.memoryUsage().heapUsed - base
      // about 1,860 lines wait, 1 MiB of text; held as the trees of their pieces they took 7 MiB
      assert.ok(log.dropped > 0, 'the queue is full')
      assert.ok(grown < 4 * maxPending, `heap grew ${(grown / 1048576).toFixed(1)} MiB`)
    } finally {
      await server.close()
      stalled.destroy()
    }
  })
})

describe('aborted requests', () => {
  it('each is logged once, with - for status', async () => {
    const out = new Lines()
    const log = logger(':method :url :status :res[content-length]', { stream: out })
    const server = await startServer((req, res) => { log(req, res, () => { /* never answers */ }) })
    try {
      for (let i = 0; i < 5; i++) {
        const socket = await rawSocket(server.port)
        socket.write(`GET /abort/${i} HTTP/1.1\r\nHost: x\r\n\r\n`)
        await settle(20)
        socket.destroy()
      }
      await until(() => out.text.split('\n').length > 5)
      await settle(50)
      const lines = out.text.trimEnd().split('\n').sort()
      assert.deepEqual(lines, [0, 1, 2, 3, 4].map((i) => `GET /abort/${i} - -`))
    } finally {
      await server.close()
    }
  })
})

describe('memory', () => {
  it('keeps nothing of a request once its line is written: every request and response is collected', async () => {
    const out = new Lines()
    // Each kind of logger: a format string, the json format, one counting body bytes, one writing
    // at once, and one of each sort of destination (a byte stream, a plain `{ write }` object).
    const calls: string[] = []
    const loggers = [
      logger('combined', { stream: out }),
      logger('json', { stream: out }),
      logger(':res-bytes :total-time :response-time', { stream: out }),
      logger('tiny', { stream: out, immediate: true }),
      logger('short', { stream: { write: (line: string) => { calls.push(line) } } })
    ] as Middleware[]
    const refs: Array<WeakRef<object>> = []
    const server = await startServer((req, res) => {
      refs.push(new WeakRef(req), new WeakRef(res))
      chain(loggers, (rq, rs) => { if (rq.url !== '/never') rs.end('ok') })(req, res)
    })
    try {
      // A connection per request, then requests pipelined on one kept-alive connection, then
      // requests whose client goes away before any answer.
      for (let i = 0; i < 20; i++) await request(server.port, { path: `/one/${i}` })
      const kept = await rawSocket(server.port)
      let received = ''
      kept.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
      kept.write(Array.from({ length: 20 }, (_, i) => `GET /kept/${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''))
      await until(() => received.split('HTTP/1.1 200').length > 20)
      for (let i = 0; i < 5; i++) {
        const socket = await rawSocket(server.port)
        socket.write('GET /never HTTP/1.1\r\nHost: x\r\n\r\n')
        await settle(10)
        socket.destroy()
      }
      await until(() => calls.length === 45)
      await until(() => out.text.split('\n').length > 4 * 45)
      kept.destroy()
      assert.equal(calls.length, 45)
      assert.equal(out.text.split('\n').length - 1, 4 * 45)
      assert.equal(refs.length, 2 * 45)
    } finally {
      await server.close()
    }
    // A WeakRef keeps its target alive to the end of the turn it was made in: collect in later turns.
    for (let i = 0; i < 3; i++) {
      await settle(20)
      gc()
    }
    const held = refs.filter((ref) => ref.deref() !== undefined).length
    assert.equal(held, 0, `${held} of ${refs.length} requests and responses still held`)
  })
})
