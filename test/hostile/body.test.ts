// Hostile bodies and broken clients against the parsers. Each case checks the exact outcome:
// status, `type`, that `next` ran once, and that nothing escaped as an uncaught exception or an
// unhandled rejection.
import { describe, it, before, after, afterEach } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http'
import * as zlib from 'node:zlib'
import { json, raw, text, urlencoded } from '../../src/index.js'
import { gc } from '../helpers/gc.js'
import { rawRequest, rawSocket, request, startServer } from '../helpers/server.js'
import type { Middleware, TestServer } from '../helpers/server.js'

const { brotliCompressSync, constants: zc, deflateSync, gzipSync } = zlib

const problems: string[] = []
const onUncaught = (err: unknown): void => { problems.push(`uncaught: ${String(err)}`) }
const onUnhandled = (err: unknown): void => { problems.push(`unhandled rejection: ${String(err)}`) }

interface Seen { calls: number, listeners?: number, type?: string }

/** A server running `mw`, answering `[type] status` or `ok <json body>`, and counting `next` calls. */
async function serve (mw: Middleware, before?: (req: IncomingMessage) => void, options?: ServerOptions): Promise<TestServer & { seen: Seen[] }> {
  const seen: Seen[] = []
  const server = await startServer((req: IncomingMessage, res: ServerResponse) => {
    const entry: Seen = { calls: 0 }
    seen.push(entry)
    before?.(req)
    mw(req, res, (err?: unknown) => {
      entry.calls++
      if (entry.calls > 1) return
      entry.listeners = ['data', 'end', 'error', 'close', 'aborted'].reduce((n, e) => n + req.listenerCount(e), 0)
      res.setHeader('connection', 'close')
      if (err !== undefined && err !== null) {
        const e = err as { status: number, type: string }
        entry.type = e.type
        res.statusCode = e.status
        res.end(`[${e.type}] ${e.status}`)
      } else {
        res.end(`ok ${describeBody((req as IncomingMessage & { body?: unknown }).body)}`)
      }
    })
  }, options)
  return Object.assign(server, { seen })
}

// A 50,000-deep value is too deep for JSON.stringify: say what it is instead.
function describeBody (body: unknown): string {
  try {
    return JSON.stringify(body) ?? 'undefined'
  } catch {
    return Array.isArray(body) ? '[deep array]' : '{deep object}'
  }
}

const settle = async (ms = 50): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

function statusOf (raw: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0)
}

function head (path: string, headers: Record<string, string | number>): string {
  return [`POST ${path} HTTP/1.1`, 'Host: localhost', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n')
}

before(() => {
  process.on('uncaughtException', onUncaught)
  process.on('unhandledRejection', onUnhandled)
})
afterEach(() => { assert.deepEqual(problems.splice(0), []) })
after(() => {
  process.off('uncaughtException', onUncaught)
  process.off('unhandledRejection', onUnhandled)
})

describe('decompression bombs', () => {
  const inflated = Buffer.alloc(64 * 1024 * 1024, 0x20)
  const bombs: Array<[string, Buffer]> = [
    ['gzip', gzipSync(inflated, { level: 9 })],
    ['deflate', deflateSync(inflated, { level: 9 })],
    ['br', brotliCompressSync(inflated, { params: { [zc.BROTLI_PARAM_QUALITY]: 5 } })]
  ]
  // zstd where the running Node.js has it (22.15 and later); older ones answer it with a 415
  const zstdCompressSync = (zlib as { zstdCompressSync?: (data: Buffer) => Buffer }).zstdCompressSync
  if (zstdCompressSync !== undefined) bombs.push(['zstd', zstdCompressSync(inflated)])
  for (const [encoding, bomb] of bombs) {
    it(`a ${encoding} body inflating to 64 MiB gets a 413, with memory staying flat`, async () => {
      assert.ok(bomb.length < 100 * 1024, 'the bomb itself is under the default limit')
      const server = await serve(json() as Middleware)
      try {
        gc()
        const base = process.memoryUsage()
        let peak = 0
        const sampler = setInterval(() => {
          const m = process.memoryUsage()
          peak = Math.max(peak, m.arrayBuffers - base.arrayBuffers + m.heapUsed - base.heapUsed)
        }, 2)
        const res = await request(server.port, { headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body: bomb })
        clearInterval(sampler)
        assert.equal(res.status, 413)
        assert.equal(res.body, '[entity.too.large] 413')
        assert.equal(server.seen[0]?.calls, 1)
        assert.ok(peak < 8 * 1024 * 1024, `memory grew by ${(peak / 1048576).toFixed(1)} MiB`)
      } finally {
        await server.close()
      }
    })
  }
})

describe('compressed bodies that inflate to nothing', () => {
  // Sent without end until the server answers: the limit counts inflated bytes, of which there
  // are none, so only the bound on encoded bytes (twice the limit plus 1 MiB) can stop them.
  const endless: Array<[string, string, Buffer, Buffer]> = [
    // a zlib header, then empty stored blocks, five bytes each
    ['deflate of empty stored blocks', 'deflate', Buffer.from([0x78, 0x9c]), Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff])],
    // a gzip header announcing a file name, and a name that never ends
    ['gzip with a file name that never ends', 'gzip', Buffer.from([0x1f, 0x8b, 0x08, 0x08, 0, 0, 0, 0, 0, 0x03]), Buffer.alloc(1000, 0x61)]
  ]
  for (const [name, encoding, start, repeat] of endless) {
    it(`${name} gets a 413 once its encoded bytes pass the bound`, async () => {
      const limit = 10 * 1024
      // Not `serve`: its `Connection: close` would make the server close a socket with unread
      // bytes, which resets the connection and can discard the answer before the client reads it.
      const mw = json({ limit }) as Middleware
      const calls: string[] = []
      let received: number | undefined
      const server = await startServer((req: IncomingMessage, res: ServerResponse) => {
        mw(req, res, (err?: unknown) => {
          const e = err as { status?: number, type?: string, received?: number } | undefined
          calls.push(`${e?.type ?? 'ok'}`)
          received = e?.received
          res.statusCode = e?.status ?? 200
          res.end(`[${e?.type ?? ''}] ${res.statusCode}`)
        })
      })
      try {
        const socket = await rawSocket(server.port)
        socket.on('error', () => {})
        let answer = ''
        socket.on('data', (c: Buffer) => { answer += c.toString('latin1') })
        socket.write(head('/', { 'content-type': 'application/json', 'content-encoding': encoding, 'transfer-encoding': 'chunked' }))
        const piece = Buffer.concat(Array.from({ length: Math.ceil(16 * 1024 / repeat.length) }, () => repeat))
        const frame = (data: Buffer): Buffer => Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')])
        socket.write(frame(start))
        let sent = start.length
        // at most 32 MiB: far past the bound (1 MiB and 20 KiB here) and what the sockets' buffers hold
        const answered = (): boolean => answer !== ''
        while (!answered() && sent < 32 * 1024 * 1024) {
          await new Promise<void>((resolve) => { socket.write(frame(piece), () => { resolve() }) })
          sent += piece.length
          if (sent % (256 * 1024) < piece.length) await settle(1)
        }
        await settle(50)
        socket.destroy()
        assert.equal(statusOf(answer), 413, `answer after ${sent} bytes: ${answer.slice(0, 60)}`)
        assert.match(answer, /\[entity\.too\.large\] 413/)
        assert.deepEqual(calls, ['entity.too.large'])
        // refused at the bound, the encoded bytes received: at most one read of the socket past it
        const bound = 2 * limit + 1024 * 1024
        assert.ok(received !== undefined && received > bound && received <= bound + 64 * 1024, `received ${String(received)}`)
      } finally {
        await server.close()
      }
    })
  }
})

describe('corrupt and unknown encodings', () => {
  let server: TestServer & { seen: Seen[] }
  before(async () => { server = await serve(json() as Middleware) })
  after(async () => { await server.close() })

  const body = gzipSync('{"a":1}')
  const cases: Array<[string, string, Buffer, number]> = [
    ['truncated gzip', 'gzip', body.subarray(0, body.length - 6), 400],
    ['garbage gzip', 'gzip', Buffer.from('this is not gzip at all'), 400],
    ['garbage deflate', 'deflate', Buffer.from('nope'), 400],
    ['garbage br', 'br', Buffer.from([0xff, 0xff, 0xff, 0xff]), 400],
    ['stacked gzip, gzip', 'gzip, gzip', gzipSync(body), 415],
    ['compress', 'compress', Buffer.from('x'), 415],
    ['an unknown name', 'snappy', Buffer.from('x'), 415]
  ]
  for (const [name, encoding, wire, status] of cases) {
    it(`${name} gets a ${status}`, async () => {
      const res = await request(server.port, { headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body: wire })
      assert.equal(res.status, status)
      assert.match(res.body, status === 415 ? /^\[encoding\.unsupported\] 415$/ : /^\[entity\.parse\.failed\] 400$/)
    })
  }
})

describe('Content-Length', () => {
  it('declared above the limit: a 413 before any byte of the body is sent', async () => {
    const server = await serve(json() as Middleware)
    try {
      const socket = await rawSocket(server.port)
      const answer = new Promise<string>((resolve) => {
        let out = ''
        socket.on('data', (c: Buffer) => { out += c.toString('latin1'); if (out.includes('\r\n\r\n')) resolve(out) })
      })
      socket.write(head('/', { 'content-type': 'application/json', 'content-length': 10 * 1024 * 1024 }))
      const reply = await answer
      socket.destroy()
      assert.equal(statusOf(reply), 413)
      assert.match(reply, /\[entity\.too\.large\] 413/)
    } finally {
      await server.close()
    }
  })

  it('declared longer than the body, the client closing: a 400 request.aborted', async () => {
    const server = await serve(json() as Middleware)
    try {
      const socket = await rawSocket(server.port)
      socket.write(head('/', { 'content-type': 'application/json', 'content-length': 100 }) + '{"a":')
      await settle()
      socket.destroy()
      await settle(100)
      assert.equal(server.seen.length, 1)
      assert.equal(server.seen[0]?.calls, 1)
      assert.equal(server.seen[0]?.type, 'request.aborted')
    } finally {
      await server.close()
    }
  })

  it('declared shorter than the body: a 400 request.size.invalid', async () => {
    // node:http itself reads exactly Content-Length bytes; a decoding pipeline that is told a
    // length different from what the stream yields (a length counted in characters) must say so.
    const server = await serve(json() as Middleware, (req) => {
      req.headers['content-length'] = String(Number(req.headers['content-length']) - 2)
    })
    try {
      const res = await rawRequest(server.port, head('/', { 'content-type': 'application/json', 'content-length': 9 }) + '{"a":"b"}')
      assert.equal(statusOf(res), 400)
      assert.match(res, /\[request\.size\.invalid\] 400/)
    } finally {
      await server.close()
    }
  })
})

describe('aborts', () => {
  it('a client aborting mid-body gives request.aborted, once, and leaves no listener behind', async () => {
    const server = await serve(raw() as Middleware)
    try {
      for (let i = 0; i < 5; i++) {
        const socket = await rawSocket(server.port)
        socket.write(head('/', { 'content-type': 'application/octet-stream', 'content-length': 1000 }) + 'x'.repeat(300))
        await settle(30)
        socket.destroy()
      }
      await settle(100)
      assert.equal(server.seen.length, 5)
      for (const s of server.seen) {
        assert.equal(s.calls, 1)
        assert.equal(s.type, 'request.aborted')
        assert.equal(s.listeners, 0)
      }
    } finally {
      await server.close()
    }
  })
})

describe('endless bodies', () => {
  it('an endless chunked body gets a 413 while it is still streaming', async () => {
    const server = await serve(text() as Middleware)
    try {
      const socket = await rawSocket(server.port)
      let reply = ''
      socket.on('data', (c: Buffer) => { reply += c.toString('latin1') })
      socket.on('error', () => {})
      socket.write(head('/', { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }))
      const chunk = `${(16 * 1024).toString(16)}\r\n${'y'.repeat(16 * 1024)}\r\n`
      const started = Date.now()
      let sent = 0
      while (!reply.includes('\r\n\r\n') && Date.now() - started < 10_000 && !socket.destroyed) {
        socket.write(chunk)
        sent += 16 * 1024
        await settle(1)
      }
      socket.destroy()
      // the body has no end: the answer came while it was being sent
      assert.equal(statusOf(reply), 413)
      assert.match(reply, /\[entity\.too\.large\] 413/)
      assert.ok(sent < 64 * 1024 * 1024, `answered after ${sent} bytes`)
    } finally {
      await server.close()
    }
  })
})

describe('slow and concurrent bodies', () => {
  /** A server running `mw` that counts the body bytes each request has delivered so far. */
  async function serveCounting (mw: Middleware): Promise<{ server: TestServer & { seen: Seen[] }, received: number[] }> {
    const received: number[] = []
    const server = await serve(mw, (req) => {
      const i = received.push(0) - 1
      req.on('data', (c: Buffer) => { received[i] = (received[i] as number) + c.length })
    })
    return { server, received }
  }

  // Not timed: a server the slow body blocked would answer nothing before it ends, about 50 s
  // on, and the test's timeout would end it first.
  it('a slowloris body does not block other requests', { timeout: 30_000 }, async () => {
    const server = await serve(json() as Middleware)
    try {
      const slow = await rawSocket(server.port)
      slow.on('error', () => {})
      slow.write(head('/', { 'content-type': 'application/json', 'content-length': 50 }) + '{')
      const trickle = setInterval(() => { slow.write(' ') }, 1000)
      for (let i = 0; i < 20; i++) {
        const res = await request(server.port, { headers: { 'content-type': 'application/json' }, body: `{"i":${i}}` })
        assert.equal(res.body, `ok {"i":${i}}`)
      }
      clearInterval(trickle)
      slow.destroy()
    } finally {
      await server.close()
    }
  })

  it('bodies sent a byte per chunk hold at most about twice their own size', async () => {
    // 10 requests of 60,000 one-byte chunks each (under the 100 KiB limit), stalled before their
    // last chunk. Kept as 60,000 Buffers each, they would hold over 100 MiB.
    const count = 10
    const chunks = 60_000
    const { server, received } = await serveCounting(raw() as Middleware)
    try {
      gc()
      const base = process.memoryUsage()
      const body = Buffer.from('1\r\na\r\n'.repeat(chunks))
      const sockets = await Promise.all(Array.from({ length: count }, async () => await rawSocket(server.port)))
      for (const s of sockets) {
        s.on('error', () => {})
        s.write(head('/', { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' }))
        s.write(body)
      }
      const deadline = Date.now() + 20_000
      while ((received.length < count || received.some((n) => n < chunks)) && Date.now() < deadline) await settle(20)
      assert.deepEqual(received, Array.from({ length: count }, () => chunks))
      gc()
      const now = process.memoryUsage()
      const grown = now.heapUsed - base.heapUsed + now.arrayBuffers - base.arrayBuffers
      // 10 x 60 KB of body; allow for the sockets, parsers and the buffers copies go into
      assert.ok(grown < 12 * 1024 * 1024, `grew ${(grown / 1048576).toFixed(1)} MiB`)
      for (const s of sockets) s.destroy()
      await settle(200)
      for (const s of server.seen) assert.equal(s.calls, 1)
    } finally {
      await server.close()
    }
  })

  it('slow bodies that have sent a hundred bytes in a hundred pieces hold a small buffer each, not a 64 KiB one', async () => {
    // 300 chunked requests, each stalled after 100 one-byte chunks. A 64 KiB buffer for the
    // pieces of each would hold over 19 MiB.
    const count = 300
    const chunks = 100
    const { server, received } = await serveCounting(json() as Middleware)
    try {
      const sockets = await Promise.all(Array.from({ length: count }, async () => await rawSocket(server.port)))
      for (const s of sockets) s.on('error', () => {})
      // the sockets and the requests' own objects, before any body byte
      for (const s of sockets) s.write(head('/', { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }))
      const deadline = Date.now() + 20_000
      while (received.length < count && Date.now() < deadline) await settle(20)
      gc()
      const base = process.memoryUsage()
      const body = Buffer.from('1\r\n \r\n'.repeat(chunks))
      for (const s of sockets) s.write(body)
      while (received.some((n) => n < chunks) && Date.now() < deadline) await settle(20)
      assert.deepEqual(received, Array.from({ length: count }, () => chunks))
      gc()
      const now = process.memoryUsage()
      const perRequest = (now.heapUsed - base.heapUsed + now.arrayBuffers - base.arrayBuffers) / count
      assert.ok(perRequest < 8 * 1024, `${Math.round(perRequest)} bytes per request`)
      for (const s of sockets) s.destroy()
      await settle(200)
      for (const s of server.seen) assert.equal(s.calls, 1)
    } finally {
      await server.close()
    }
  })

  it('200 concurrent slow bodies keep memory bounded', async () => {
    const count = 200
    const { server, received } = await serveCounting(raw() as Middleware)
    try {
      gc()
      const base = process.memoryUsage()
      const sockets = await Promise.all(Array.from({ length: count }, async () => await rawSocket(server.port)))
      for (const s of sockets) {
        s.on('error', () => {})
        s.write(head('/', { 'content-type': 'application/octet-stream', 'content-length': 50 * 1024 }))
      }
      // each sends 20 KiB of its 50 KiB, below the 100 KiB limit, then stalls
      for (let round = 0; round < 5; round++) {
        for (const s of sockets) s.write(Buffer.alloc(4096, 0x61))
        await settle(20)
      }
      const deadline = Date.now() + 20_000
      while ((received.length < count || received.some((n) => n < 5 * 4096)) && Date.now() < deadline) await settle(20)
      assert.deepEqual(received, Array.from({ length: count }, () => 5 * 4096))
      const now = process.memoryUsage()
      const grown = now.heapUsed - base.heapUsed + now.arrayBuffers - base.arrayBuffers
      // 200 x 20 KiB of body held is 4 MiB; allow for the sockets and parsers themselves
      assert.ok(grown < 32 * 1024 * 1024, `grew ${(grown / 1048576).toFixed(1)} MiB`)
      for (const s of sockets) s.destroy()
      while (server.seen.some((s) => s.calls === 0) && Date.now() < deadline) await settle(20)
      await settle(50)
      assert.equal(server.seen.length, count)
      for (const s of server.seen) assert.equal(s.calls, 1)
    } finally {
      await server.close()
    }
  })
})

describe('json', () => {
  let server: TestServer & { seen: Seen[] }
  before(async () => { server = await serve(json() as Middleware) })
  after(async () => { await server.close() })
  const post = async (body: string | Buffer, type = 'application/json'): Promise<string> =>
    (await request(server.port, { headers: { 'content-type': type }, body })).body

  const poisoned = [
    '{"__proto__":{"polluted":true}}',
    '{"a":[{"b":{"__proto__":{"polluted":true}}}]}',
    '{"\\u005f_proto__":{"polluted":true}}',
    '{"__pro\\u0074o__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"x":{"constructor":{"prototype":{"polluted":true}}}}',
    '{"\\u0063onstructor":{"prot\\u006ftype":{"polluted":true}}}'
  ]
  for (const body of poisoned) {
    it(`refuses ${body}`, async () => {
      assert.equal(await post(body), '[entity.parse.failed] 400')
    })
  }

  it('never lets a poisoned body reach Object.prototype, under any option', async () => {
    for (const mode of ['error', 'remove', 'ignore'] as const) {
      const s = await serve(json({ onProtoPoisoning: mode }) as Middleware)
      try {
        for (const body of poisoned) await request(s.port, { headers: { 'content-type': 'application/json' }, body })
      } finally {
        await s.close()
      }
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined)
  })

  it('50,000-deep nesting does not crash', async () => {
    const res = await post('['.repeat(50_000) + ']'.repeat(50_000))
    assert.match(res, /^(ok |\[entity\.parse\.failed\] 400)/)
    const res2 = await post('{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000))
    assert.match(res2, /^(ok |\[entity\.(parse\.failed|too\.large)\] (400|413))/)
  })

  it('invalid UTF-8 decodes to replacement characters, then parses', async () => {
    const body = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')])
    assert.equal(await post(body), 'ok {"a":"\ufffd(\ufffd"}')
  })
})

describe('urlencoded', () => {
  it('a depth bomb gives a 400', async () => {
    const server = await serve(urlencoded({ extended: true }) as Middleware)
    try {
      const res = await request(server.port, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a' + '[b]'.repeat(500) + '=1' })
      assert.equal(res.status, 400)
    } finally {
      await server.close()
    }
  })

  it('1,001 parameters give a 413, exactly 1,000 a 200', async () => {
    for (const extended of [false, true]) {
      const server = await serve(urlencoded({ extended }) as Middleware)
      try {
        const body = (n: number): string => Array.from({ length: n }, (_, i) => `k${i}=v`).join('&')
        assert.equal((await request(server.port, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body(1000) })).status, 200)
        const res = await request(server.port, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body(1001) })
        assert.equal(res.status, 413)
        assert.equal(res.body, '[parameters.too.many] 413')
      } finally {
        await server.close()
      }
    }
  })

  // Not timed: a parse that is quadratic in the input would take minutes on these (a linear one,
  // milliseconds), and the test's timeout ends it. (Repeated keys with parameterLimit raised:
  // urlencoded.test.ts.)
  const floods: Array<[string, string, number, string]> = [
    ['1,000,000 &', '&'.repeat(1_000_000), 413, '[parameters.too.many] 413'],
    ['a[]= x 500,000', 'a[]='.repeat(500_000), 200, 'ok {"a[]":"' + 'a[]='.repeat(499_999) + '"}']
  ]
  for (const [name, body, status, answer] of floods) {
    it(`${name} is answered`, { timeout: 60_000 }, async () => {
      for (const extended of [false, true]) {
        const server = await serve(urlencoded({ extended, limit: '4mb' }) as Middleware)
        try {
          const res = await request(server.port, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
          assert.equal(res.status, status)
          if (!extended) assert.equal(res.body, answer)
        } finally {
          await server.close()
        }
      }
    })
  }

  it('prototype keys in extended mode pollute nothing', async () => {
    const server = await serve(urlencoded({ extended: true }) as Middleware)
    try {
      for (const body of ['__proto__[polluted]=1', 'a[__proto__][polluted]=1', 'constructor[prototype][polluted]=1', '__proto__=x&a[constructor][prototype][polluted]=1']) {
        const res = await request(server.port, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
        assert.equal(res.status, 200)
      }
      assert.equal(({} as Record<string, unknown>).polluted, undefined)
    } finally {
      await server.close()
    }
  })
})

describe('headers', () => {
  let server: TestServer & { seen: Seen[] }
  before(async () => { server = await serve(text({ type: '*/*' }) as Middleware) })
  after(async () => { await server.close() })

  for (const charset of ['__proto__', 'constructor', 'bogus', 'hasOwnProperty', 'toString']) {
    it(`charset=${charset} gives a 415`, async () => {
      const res = await request(server.port, { headers: { 'content-type': `text/plain; charset=${charset}` }, body: 'x' })
      assert.equal(res.status, 415)
      assert.equal(res.body, '[charset.unsupported] 415')
    })
  }

  const odd = ['text/plain;', 'TEXT/PLAIN', 'text/plain;\tcharset=utf-8', 'text/plain; charset="utf-8', 'text/plain; ;;; =', 'text/plain; charset', '\ttext/plain', 'text/plain; a="\\', ';;;', '/', 'text/', 'a/b/c; charset=utf-8; charset=latin1']
  for (const type of odd) {
    it(`Content-Type ${JSON.stringify(type)} never gives a 5xx`, async () => {
      const res = await rawRequest(server.port, head('/', { 'content-type': type, 'content-length': 1, connection: 'close' }) + 'x')
      assert.ok(statusOf(res) > 0 && statusOf(res) < 500, `status ${statusOf(res)}`)
    })
  }

  // Not timed: a parse that went back over the header for each parameter would take minutes on
  // this one (a linear one, milliseconds), and the test's timeout ends it.
  it('a Content-Type header of 200,000 parameters is parsed', { timeout: 60_000 }, async () => {
    const large = await serve(text() as Middleware, undefined, { maxHeaderSize: 4 * 1024 * 1024 })
    try {
      const type = 'text/plain; ' + 'a=b; '.repeat(200_000) + 'charset=utf-8'
      const res = await request(large.port, { headers: { 'content-type': type }, body: 'x' })
      assert.equal(res.status, 200)
      assert.equal(res.body, 'ok "x"')
    } finally {
      await large.close()
    }
  })
})

describe('stream state', () => {
  it('a body the app already read is skipped', async () => {
    const parse = json() as Middleware
    const server = await serve((req, res, next) => {
      req.resume()
      req.on('end', () => { parse(req, res, next) })
    })
    try {
      const res = await request(server.port, { headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
      assert.equal(res.body, 'ok undefined')
    } finally {
      await server.close()
    }
  })

  it('req.setEncoding() before the parser gives a 500 stream.encoding.set', async () => {
    const server = await serve(json() as Middleware, (req) => { req.setEncoding('utf8') })
    try {
      const res = await request(server.port, { headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
      assert.equal(res.status, 500)
      assert.equal(res.body, '[stream.encoding.set] 500')
    } finally {
      await server.close()
    }
  })

  it('the same parser mounted twice parses once', async () => {
    let parses = 0
    const parse = json({ reviver: (key: string, value: unknown) => { if (key === '') parses++; return value } }) as Middleware
    const server = await serve((req, res, next) => { parse(req, res, (err) => { if (err !== undefined) next(err); else parse(req, res, next) }) })
    try {
      const res = await request(server.port, { headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
      assert.equal(res.body, 'ok {"a":1}')
      assert.equal(parses, 1)
    } finally {
      await server.close()
    }
  })
})
