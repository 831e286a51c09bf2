// The readers on Node.js requests: readJson, readText, readRaw and readUrlencoded settle with what
// the matching middleware would put in `req.body` or pass to `next`, on node:http and on the http2
// compatibility API.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { constants as http2Constants, connect as http2Connect, createServer as createHttp2Server } from 'node:http2'
import type { ClientHttp2Session, Http2Server, Http2ServerRequest, Http2ServerResponse, OutgoingHttpHeaders } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { json, raw, readJson, readRaw, readText, readUrlencoded, text, urlencoded } from '../../src/body/index.js'
import type { BodyError, BodyMiddleware, BodyRequest } from '../../src/body/index.js'
import * as root from '../../src/index.js'
import { rawSocket, request, startServer } from '../helpers/server.js'
import { compare, requestHead, send, startBodyServer, within } from '../helpers/body-server.js'
import { gc } from '../helpers/gc.js'
import type { Before, BodyServer, Seen } from '../helpers/body-server.js'

type WithBody = IncomingMessage & { body?: unknown }

const JSON_HEADERS = { 'content-type': 'application/json' }
const TEXT_HEADERS = { 'content-type': 'text/plain' }
const RAW_HEADERS = { 'content-type': 'application/octet-stream' }
const FORM_HEADERS = { 'content-type': 'application/x-www-form-urlencoded' }

/** A node:http request with a body, whose bytes never come: enough for option checks. */
function emptyRequest (): IncomingMessage {
  return { headers: { 'content-type': 'application/json', 'content-length': '2' }, on () {}, complete: false, readable: true } as unknown as IncomingMessage
}

const delay = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** A middleware that puts what a reader settles with where the middleware would. */
function viaReader (read: (req: IncomingMessage) => Promise<unknown>): BodyMiddleware {
  // (the test servers are node:http's)
  return (req, _res, next) => {
    read(req as IncomingMessage).then((body) => { (req as WithBody).body = body; next() }, (err: BodyError) => { next(err) })
  }
}

let server: BodyServer
before(async () => { server = await startBodyServer() })
after(async () => { await server.close() })

describe('exports', () => {
  it('the package root exports the four readers', () => {
    assert.equal(root.readJson, readJson)
    assert.equal(root.readRaw, readRaw)
    assert.equal(root.readText, readText)
    assert.equal(root.readUrlencoded, readUrlencoded)
  })
})

describe('readJson on node:http', () => {
  it('resolves with the parsed body', async () => {
    const seen = await compare(server, viaReader((req) => readJson(req)), json(), { headers: JSON_HEADERS, body: '{"a":[1,2]}' })
    assert.deepEqual(seen.body, { a: [1, 2] })
  })

  it('reads a node request whose headers object has a get() of its own (as mock requests have) as a node request', async () => {
    const withGet = (read: (req: IncomingMessage) => Promise<unknown>) => viaReader((req) => {
      Object.defineProperty(req.headers, 'get', { value (name: string) { return (req as IncomingMessage).headers[name.toLowerCase()] } })
      return read(req as IncomingMessage)
    })
    const seen = await compare(server, withGet((req) => readJson(req)), json(), { headers: JSON_HEADERS, body: '{"a":[1,2]}' })
    assert.deepEqual(seen.body, { a: [1, 2] })
    const broken = await compare(server, withGet((req) => readJson(req)), json(), { headers: JSON_HEADERS, body: '{"a"' })
    assert.equal(broken.error?.status, 400)
  })

  it('resolves with {} for an empty body, as the middleware does', async () => {
    const seen = await compare(server, viaReader((req) => readJson(req)), json(), { headers: { ...JSON_HEADERS, 'transfer-encoding': 'chunked' }, body: [] })
    assert.deepEqual(seen.body, {})
  })

  it('takes the middleware\'s options', async () => {
    const options = { strict: false, reviver: (_key: string, value: unknown) => typeof value === 'number' ? value * 2 : value }
    const seen = await compare(server, viaReader((req) => readJson(req, options)), json(options), { headers: JSON_HEADERS, body: '21' })
    assert.equal(seen.body, 42)
  })

  it('inflates gzip, br and deflate bodies', async () => {
    for (const [encoding, body] of [['gzip', gzipSync('{"z":1}')], ['br', brotliCompressSync('{"z":1}')], ['deflate', deflateSync('{"z":1}')]] as const) {
      const seen = await compare(server, viaReader((req) => readJson(req)), json(), { headers: { ...JSON_HEADERS, 'content-encoding': encoding }, body })
      assert.deepEqual(seen.body, { z: 1 }, encoding)
    }
  })

  it('decodes any Unicode charset', async () => {
    const body = Buffer.from('\ufeff{"name":"Zoë"}', 'utf16le')
    const seen = await compare(server, viaReader((req) => readJson(req)), json(), { headers: { 'content-type': 'application/json; charset=utf-16le' }, body })
    assert.deepEqual(seen.body, { name: 'Zoë' })
  })

  it('gives the value the type asked for, unchecked', async () => {
    interface Item { id: number }
    const { port, close } = await startServer((req, res) => {
      readJson<Item>(req).then((item: Item | undefined) => { res.end(String(item?.id)) }, () => { res.end('error') })
    })
    try {
      const reply = await request(port, { headers: JSON_HEADERS, body: '{"id":"not a number"}' })
      assert.equal(reply.body, 'not a number')
    } finally {
      await close()
    }
  })
})

describe('resolving undefined', () => {
  const readers = [
    [(req: IncomingMessage) => readJson(req), json()],
    [(req: IncomingMessage) => readRaw(req), raw()],
    [(req: IncomingMessage) => readText(req), text()],
    [(req: IncomingMessage) => readUrlencoded(req), urlencoded()]
  ] as const

  it('resolves undefined for a request without a body', async () => {
    for (const [read, mw] of readers) {
      const seen = await compare(server, viaReader(read), mw, { method: 'GET', headers: JSON_HEADERS })
      assert.deepEqual(seen.body, { undefined: true })
    }
  })

  it('resolves undefined when the type does not match, and leaves the body to the next reader', async () => {
    const { port, close } = await startServer((req, res) => {
      (async () => {
        const asJson = await readJson(req)
        const asText = await readText(req)
        res.end(JSON.stringify({ asJson: asJson ?? null, asText }))
      })().catch(() => { res.end('error') })
    })
    try {
      const reply = await request(port, { headers: TEXT_HEADERS, body: '{"a":1}' })
      assert.deepEqual(JSON.parse(reply.body), { asJson: null, asText: '{"a":1}' })
    } finally {
      await close()
    }
  })

  it('resolves undefined when there is no Content-Type', async () => {
    const seen = await compare(server, viaReader((req) => readJson(req)), json(), { body: '{"a":1}' })
    assert.deepEqual(seen.body, { undefined: true })
  })

  it('resolves undefined when the body was already read, as the middleware skips it', async () => {
    const afterReading = (mw: BodyMiddleware): BodyMiddleware => (req, res, next) => {
      req.resume()
      req.once('end', () => { mw(req, res, next) })
    }
    const seen = await compare(server, afterReading(viaReader((req) => readJson(req))), afterReading(json()), { headers: JSON_HEADERS, body: '{"a":1}' })
    assert.deepEqual(seen.body, { undefined: true })
  })

  it('reads the same body once: a second read resolves undefined', async () => {
    const { port, close } = await startServer((req, res) => {
      (async () => {
        const first = await readJson(req)
        const second = await readJson(req)
        res.end(JSON.stringify({ first, second: second ?? null }))
      })().catch(() => { res.end('error') })
    })
    try {
      const reply = await request(port, { headers: JSON_HEADERS, body: '{"a":1}' })
      assert.deepEqual(JSON.parse(reply.body), { first: { a: 1 }, second: null })
    } finally {
      await close()
    }
  })
  it('two reads at once: the first gets the whole body, the second 500 stream.not.readable', async () => {
    const { port, close } = await startServer((req, res) => {
      const outcome = async (read: Promise<unknown>): Promise<unknown> =>
        await read.then((body) => ({ body }), (err: { status?: number, type?: string }) => ({ status: err.status, type: err.type }))
      const first = outcome(readText(req))
      const second = outcome(readText(req))
      Promise.all([first, second]).then(([a, b]) => { res.end(JSON.stringify({ a, b })) }, () => { res.end('error') })
    })
    try {
      const reply = await request(port, { headers: { ...TEXT_HEADERS, 'transfer-encoding': 'chunked' }, body: ['hello ', 'world'] })
      assert.deepEqual(JSON.parse(reply.body), { a: { body: 'hello world' }, b: { status: 500, type: 'stream.not.readable' } })
    } finally {
      await close()
    }
  })
})

describe('readText, readRaw and readUrlencoded', () => {
  it('readText resolves with the decoded string', async () => {
    const seen = await compare(server, viaReader((req) => readText(req)), text(), { headers: { 'content-type': 'text/plain; charset=iso-8859-1' }, body: Buffer.from('café', 'latin1') })
    assert.equal(seen.body, 'café')
  })

  it('readRaw resolves with a Buffer of the body', async () => {
    const body = Buffer.from([0, 1, 2, 255])
    const seen = await compare(server, viaReader((req) => readRaw(req)), raw(), { headers: RAW_HEADERS, body })
    assert.deepEqual(seen.body, { hex: '000102ff' })
  })

  it('readUrlencoded resolves with the form, nested with extended', async () => {
    let seen = await compare(server, viaReader((req) => readUrlencoded(req)), urlencoded(), { headers: FORM_HEADERS, body: 'a=1&a=2&b=x' })
    assert.deepEqual(seen.body, { a: ['1', '2'], b: 'x' })
    seen = await compare(server, viaReader((req) => readUrlencoded(req, { extended: true })), urlencoded({ extended: true }), { headers: FORM_HEADERS, body: 'a[b][c]=1' })
    assert.deepEqual(seen.body, { a: { b: { c: '1' } } })
  })

  it('each takes its type option', async () => {
    const seen = await compare(server, viaReader((req) => readText(req, { type: 'text/*' })), text({ type: 'text/*' }), { headers: { 'content-type': 'text/html' }, body: '<p>hi</p>' })
    assert.equal(seen.body, '<p>hi</p>')
  })
})

describe('errors: exactly what the middleware passes to next', () => {
  const cases: Array<[string, (req: IncomingMessage) => Promise<unknown>, BodyMiddleware, Parameters<typeof send>[2], Before?]> = [
    ['400 entity.parse.failed', (req) => readJson(req), json(), { headers: JSON_HEADERS, body: '{"oops"}' }],
    ['400 entity.parse.failed in strict mode', (req) => readJson(req), json(), { headers: JSON_HEADERS, body: ' 12' }],
    ['400 entity.parse.failed for a poisoned key', (req) => readJson(req), json(), { headers: JSON_HEADERS, body: '{"__proto__":{"x":1}}' }],
    ['400 entity.parse.failed for a corrupt gzip body', (req) => readJson(req), json(), { headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' }, body: gzipSync('{}').subarray(0, 8) }],
    ['403 entity.verify.failed', (req) => readText(req, { verify: () => { throw new Error('bad signature') } }), text({ verify: () => { throw new Error('bad signature') } }), { headers: TEXT_HEADERS, body: 'signed' }],
    ['413 entity.too.large from the Content-Length', (req) => readRaw(req, { limit: 8 }), raw({ limit: 8 }), { headers: RAW_HEADERS, body: '0123456789' }],
    ['413 entity.too.large while streaming', (req) => readRaw(req, { limit: 8 }), raw({ limit: 8 }), { headers: RAW_HEADERS, body: ['01234', '56789'] }],
    ['413 entity.too.large after inflation', (req) => readJson(req, { limit: 100 }), json({ limit: 100 }), { headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' }, body: gzipSync(`[${'0,'.repeat(100)}0]`) }],
    ['413 parameters.too.many', (req) => readUrlencoded(req, { parameterLimit: 2 }), urlencoded({ parameterLimit: 2 }), { headers: FORM_HEADERS, body: 'a=1&b=2&c=3' }],
    ['400 querystring.parse.rangeError', (req) => readUrlencoded(req, { extended: true, depth: 1 }), urlencoded({ extended: true, depth: 1 }), { headers: FORM_HEADERS, body: 'a[b][c]=1' }],
    ['415 charset.unsupported (refused by the parser)', (req) => readJson(req), json(), { headers: { 'content-type': 'application/json; charset=latin1' }, body: '{}' }],
    ['415 charset.unsupported (unknown to the decoder)', (req) => readText(req), text(), { headers: { 'content-type': 'text/plain; charset=x-nope' }, body: 'x' }],
    ['415 encoding.unsupported', (req) => readText(req), text(), { headers: { ...TEXT_HEADERS, 'content-encoding': 'lzma' }, body: 'x' }],
    ['415 encoding.unsupported with inflate false', (req) => readJson(req, { inflate: false }), json({ inflate: false }), { headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' }, body: gzipSync('{}') }],
    ['400 request.size.invalid', (req) => readRaw(req), raw(), { headers: RAW_HEADERS, body: '0123456789' }, (req) => { req.headers['content-length'] = '20' }],
    ['500 stream.encoding.set', (req) => readRaw(req), raw(), { headers: RAW_HEADERS, body: 'x' }, (req) => { req.setEncoding('latin1') }]
  ]

  for (const [name, read, mw, input, hook] of cases) {
    it(name, async () => {
      const seen = await compare(server, viaReader(read), mw, input, hook)
      const expected = name.split(' ')
      assert.equal(seen.error?.status, Number(expected[0]))
      assert.equal(seen.error?.type, expected[1])
    })
  }

  it('400 request.aborted with the bytes received and expected', async () => {
    const abort = async (mw: unknown): Promise<Seen> => {
      const path = server.mount(mw)
      const observed = server.observe(path)
      const socket = await rawSocket(server.port)
      socket.write(requestHead(path, { ...RAW_HEADERS, 'content-length': 50 }) + '0123456789')
      await delay(50)
      socket.destroy()
      return await observed
    }
    const ours = await abort(viaReader((req) => readRaw(req)))
    const theirs = await abort(raw())
    assert.equal(ours.error?.type, 'request.aborted')
    assert.deepEqual(ours.error, theirs.error)
    assert.equal(ours.listeners, 0)
  })
})

describe('verify', () => {
  it('is called with the request, no response, the bytes and the charset', async () => {
    const calls: unknown[][] = []
    const { port, close } = await startServer((req, res) => {
      readText(req, {
        verify (...args) { calls.push([args[0] === req, args[1], args[2].toString(), args[3]]) }
      }).then(() => { res.end() }, () => { res.end() })
    })
    try {
      await request(port, { headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'signed' })
      assert.deepEqual(calls, [[true, undefined, 'signed', 'utf-8']])
    } finally {
      await close()
    }
  })
})

describe('options', () => {
  it('a bad option rejects with the middleware\'s TypeError instead of throwing', async () => {
    const { port, close } = await startServer((req, res) => {
      let promise: Promise<unknown> | undefined
      try {
        promise = readJson(req, { limit: 'lots' })
      } catch {
        res.end('threw')
        return
      }
      promise.then(() => { res.end('resolved') }, (err: Error) => { res.end(`${err.name}: ${err.message}`) })
    })
    try {
      const reply = await request(port, { headers: JSON_HEADERS, body: '{}' })
      let expected = ''
      try { json({ limit: 'lots' }) } catch (err) { expected = `${(err as Error).name}: ${(err as Error).message}` }
      assert.equal(reply.body, expected)
      assert.match(reply.body, /^TypeError: option limit/)
    } finally {
      await close()
    }
  })

  it('are read at each call: an options object changed between two calls is honoured', async () => {
    const options: { limit: number | string, type?: string } = { limit: 4 }
    const results: string[] = []
    const { port, close } = await startServer((req, res) => {
      readText(req, options).then((body) => { res.end(String(body)) }, (err: { status: number, type: string }) => { res.end(`${err.status} ${err.type}`) })
    })
    try {
      const send = async (): Promise<void> => { results.push((await request(port, { headers: TEXT_HEADERS, body: 'hello' })).body) }
      await send()
      options.limit = '1kb'
      await send()
      options.type = 'text/csv'
      await send()
      delete options.type
      options.limit = 4
      await send()
      assert.deepEqual(results, ['413 entity.too.large', 'hello', 'undefined', '413 entity.too.large'])
    } finally {
      await close()
    }
  })

  it('a type array the caller changes after a call is not what a later call passing other types gets', async () => {
    const first = ['application/json']
    const results: string[] = []
    const { port, close } = await startServer((req, res) => {
      // the first request's array is changed once its read is done; the second passes a new one
      const types = req.url === '/first' ? first : ['application/json']
      readJson(req, { type: types }).then((body) => {
        if (req.url === '/first') first.push('text/plain')
        res.end(JSON.stringify(body) ?? 'undefined')
      }, (err: { type: string }) => { res.end(err.type) })
    })
    try {
      results.push((await request(port, { path: '/first', headers: JSON_HEADERS, body: '{"a":1}' })).body)
      results.push((await request(port, { path: '/second', headers: TEXT_HEADERS, body: '{"b":2}' })).body)
      assert.deepEqual(results, ['{"a":1}', 'undefined'])
    } finally {
      await close()
    }
  })

  it('a verify, type or reviver written inline in the call does not keep what it closes over (the request\'s context, the raw body) once the request is done', async () => {
    const contexts = new Set<WeakRef<object>>()
    const { port, close } = await startServer((req, res) => {
      // a context of this request, as a framework makes one, which the functions close over
      const context: { rawBody?: Buffer, typed?: boolean } = {}
      contexts.add(new WeakRef(context))
      readJson(req, {
        verify: (_req, _res, buf) => { context.rawBody = buf },
        type: (r: IncomingMessage) => { context.typed = true; return r.headers['content-type'] === 'application/json' },
        reviver: (_key, value) => context.typed === true ? value : undefined
      }).then((body) => { res.end(JSON.stringify(body)) }, (err: { type: string }) => { res.end(err.type) })
    })
    try {
      for (let i = 0; i < 20; i++) assert.equal((await request(port, { headers: JSON_HEADERS, body: '{"a":1}' })).body, '{"a":1}')
      await delay(10)
      gc()
      const alive = [...contexts].filter((ref) => ref.deref() !== undefined).length
      assert.ok(alive <= 1, `${alive} of 20 request contexts are still reachable`)
    } finally {
      await close()
    }
  })

  it('an option that is not enumerable counts, in the kept settings too', async () => {
    const hidden = (limit: number, withArray: boolean): object => Object.defineProperty(withArray ? { type: ['application/json'] } : {}, 'limit', { value: limit })
    const results: string[] = []
    let options: object = {}
    const { port, close } = await startServer((req, res) => {
      readJson(req, options).then((body) => { res.end(JSON.stringify(body)) }, (err: { type: string }) => { res.end(err.type) })
    })
    try {
      for (const withArray of [false, true]) {
        for (const limit of [1000, 2]) {
          options = hidden(limit, withArray)
          results.push((await request(port, { headers: JSON_HEADERS, body: '{"a":1}' })).body)
        }
      }
      assert.deepEqual(results, ['{"a":1}', 'entity.too.large', '{"a":1}', 'entity.too.large'])
    } finally {
      await close()
    }
  })

  it('a bad option rejects on every call, not only the first', async () => {
    const options = { limit: 'lots' }
    for (let i = 0; i < 3; i++) await assert.rejects(readJson(emptyRequest(), options), /option limit "lots" is invalid/)
  })

  it('a verify made for each call is the one called', async () => {
    const calls: string[] = []
    const { port, close } = await startServer((req, res) => {
      const n = String(req.headers['x-n'])
      readText(req, { limit: '1kb', verify () { calls.push(n) } }).then(() => { res.end() }, () => { res.end() })
    })
    try {
      for (const n of ['1', '2', '3']) await request(port, { headers: { ...TEXT_HEADERS, 'x-n': n }, body: 'x' })
      assert.deepEqual(calls, ['1', '2', '3'])
    } finally {
      await close()
    }
  })

  it('reads a plain options object for its own values only: the settings kept for them hold nothing a prototype pollution put on Object.prototype', async () => {
    const post = (): Request => new Request('http://localhost/', { method: 'POST', headers: JSON_HEADERS, body: '{"a":1}' })
    const proto = Object.prototype as Record<string, unknown>
    let during: Array<Promise<unknown>>
    try {
      proto['limit'] = '1b'
      proto['verify'] = () => { throw new Error('polluted verify') }
      during = [readJson(post(), {}), readJson(post(), { holding: {} } as object), readJson(post(), { holding: Symbol('kept by no cache') } as object)]
    } finally {
      Reflect.deleteProperty(proto, 'limit')
      Reflect.deleteProperty(proto, 'verify')
    }
    // (the last two hold values the cache does not take: read at each call, own values still)
    assert.deepEqual(await Promise.all(during), [{ a: 1 }, { a: 1 }, { a: 1 }])
    assert.deepEqual(await readJson(post(), {}), { a: 1 })
  })

  it('asks a Proxy for its options at every call, as it may answer for properties it does not list', async () => {
    const post = (): Request => new Request('http://localhost/', { method: 'POST', headers: JSON_HEADERS, body: '{"a":1}' })
    const proxied = (limit: number | string): object => new Proxy({}, { get: (_target, key) => key === 'limit' ? limit : undefined })
    await assert.rejects(readJson(post(), proxied(3)), { type: 'entity.too.large' })
    assert.deepEqual(await readJson(post(), proxied('1mb')), { a: 1 })
    await assert.rejects(readJson(post(), proxied(4)), { type: 'entity.too.large' })
  })

  it('rejects something that is not a request with a TypeError', async () => {
    await assert.rejects(readJson({} as unknown as BodyRequest), TypeError)
    await assert.rejects(readJson(null as unknown as BodyRequest), TypeError)
  })

  it('a type function receives the request', async () => {
    const seen: unknown[] = []
    const { port, close } = await startServer((req, res) => {
      readJson(req, { type: (r) => { seen.push(r === req); return true } }).then((body) => { res.end(JSON.stringify(body)) }, () => { res.end('error') })
    })
    try {
      const reply = await request(port, { headers: { 'content-type': 'application/x-anything' }, body: '[1]' })
      assert.equal(reply.body, '[1]')
      assert.deepEqual(seen, [true])
    } finally {
      await close()
    }
  })
})

// A real HTTP/2 server (h2c) answering with what the reader settled with.
interface H2Reply { status: number, body: string }

async function startHttp2 (handler: (req: Http2ServerRequest, res: Http2ServerResponse) => void): Promise<{ server: Http2Server, client: ClientHttp2Session, close: () => Promise<void> }> {
  const server = createHttp2Server(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const client = http2Connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  return {
    server,
    client,
    close: async () => {
      client.close()
      await new Promise<void>((resolve) => server.close(() => { resolve() }))
    }
  }
}

function answer (read: (req: Http2ServerRequest) => Promise<unknown>): (req: Http2ServerRequest, res: Http2ServerResponse) => void {
  return (req, res) => {
    read(req).then((body) => {
      res.end(JSON.stringify({ body: body === undefined ? '(undefined)' : body }))
    }, (err: { status?: number, type?: string, message?: string }) => {
      res.statusCode = err.status ?? 500
      res.end(`[${err.type ?? ''}] ${err.message ?? ''}`)
    })
  }
}

/** Sends one request; `chunks` undefined ends the stream with the headers. */
async function h2request (client: ClientHttp2Session, headers: OutgoingHttpHeaders, chunks?: Array<string | Buffer>): Promise<H2Reply> {
  return await new Promise((resolve, reject) => {
    const stream = client.request({ ':method': chunks === undefined ? 'GET' : 'POST', ':path': '/', ...headers }, { endStream: chunks === undefined })
    let status = 0
    let body = ''
    stream.on('response', (h) => { status = Number(h[':status']) })
    stream.setEncoding('utf8')
    stream.on('data', (c: string) => { body += c })
    stream.on('end', () => { resolve({ status, body }) })
    stream.on('error', reject)
    if (chunks !== undefined) {
      (async () => {
        for (const chunk of chunks) {
          if (stream.destroyed) return
          stream.write(chunk)
          await delay(5)
        }
        if (!stream.destroyed) stream.end()
      })().catch(reject)
    }
  })
}

describe('http2 compat requests', () => {
  let h2: Awaited<ReturnType<typeof startHttp2>>
  let reader: (req: Http2ServerRequest) => Promise<unknown> = async () => undefined
  before(async () => { h2 = await startHttp2((req, res) => { answer(reader)(req, res) }) })
  after(async () => { await h2.close() })

  it('parses a body sent with a Content-Length', async () => {
    reader = (req) => readJson(req)
    const reply = await h2request(h2.client, { ...JSON_HEADERS, 'content-length': 7 }, ['{"a":1}'])
    assert.deepEqual(JSON.parse(reply.body), { body: { a: 1 } })
  })

  it('parses a body streamed without a Content-Length', async () => {
    reader = (req) => readJson(req)
    const reply = await h2request(h2.client, JSON_HEADERS, ['{"a":', '[1,', '2]}'])
    assert.deepEqual(JSON.parse(reply.body), { body: { a: [1, 2] } })
  })

  it('resolves undefined for a request that ends with its headers', async () => {
    reader = (req) => readJson(req)
    const reply = await h2request(h2.client, JSON_HEADERS)
    assert.deepEqual(JSON.parse(reply.body), { body: '(undefined)' })
  })

  it('reads an empty body without a Content-Length as an empty body ({} for JSON)', async () => {
    reader = (req) => readJson(req)
    const reply = await h2request(h2.client, JSON_HEADERS, [])
    assert.deepEqual(JSON.parse(reply.body), { body: {} })
  })

  it('resolves undefined when the type does not match', async () => {
    reader = (req) => readJson(req)
    const reply = await h2request(h2.client, TEXT_HEADERS, ['{"a":1}'])
    assert.deepEqual(JSON.parse(reply.body), { body: '(undefined)' })
  })

  it('inflates a gzip body and decodes forms and text', async () => {
    reader = (req) => readJson(req)
    let reply = await h2request(h2.client, { ...JSON_HEADERS, 'content-encoding': 'gzip' }, [gzipSync('{"z":true}')])
    assert.deepEqual(JSON.parse(reply.body), { body: { z: true } })
    reader = (req) => readUrlencoded(req)
    reply = await h2request(h2.client, FORM_HEADERS, ['a=1&b=2'])
    assert.deepEqual(JSON.parse(reply.body), { body: { a: '1', b: '2' } })
    reader = (req) => readText(req)
    reply = await h2request(h2.client, TEXT_HEADERS, ['hel', 'lo'])
    assert.deepEqual(JSON.parse(reply.body), { body: 'hello' })
  })

  it('413 when a streamed body passes the limit, and the answer reaches the client', async () => {
    reader = (req) => readRaw(req, { limit: 10 })
    const reply = await h2request(h2.client, RAW_HEADERS, ['012345', '678901', '234567'])
    assert.equal(reply.status, 413)
    assert.equal(reply.body, '[entity.too.large] request entity too large')
  })

  it('413 from the Content-Length before reading', async () => {
    reader = (req) => readRaw(req, { limit: 10 })
    const reply = await h2request(h2.client, { ...RAW_HEADERS, 'content-length': 18 }, ['012345678901234567'])
    assert.equal(reply.status, 413)
  })

  it('400 request.aborted when the client cancels the stream mid-body', async () => {
    let settled: (err: unknown) => void = () => {}
    const outcome = new Promise((resolve) => { settled = resolve })
    reader = async (req) => await readRaw(req).then(() => { settled('resolved') }, (err: unknown) => { settled(err) })
    const stream = h2.client.request({ ':method': 'POST', ':path': '/', ...RAW_HEADERS, 'content-length': 50 })
    stream.on('error', () => {})
    stream.write('0123456789')
    await delay(50)
    stream.close(http2Constants.NGHTTP2_CANCEL)
    const err = await outcome as { status?: number, type?: string, received?: number, expected?: number }
    assert.equal(err.status, 400)
    assert.equal(err.type, 'request.aborted')
    assert.equal(err.received, 10)
    assert.equal(err.expected, 50)
  })

  it('400 request.aborted when the client resets a stream sent without a Content-Length', async () => {
    // the request ends after 'aborted': what arrived must not pass for the whole body
    let settled: (outcome: unknown) => void = () => {}
    const outcome = new Promise((resolve) => { settled = resolve })
    reader = async (req) => await readText(req).then((body) => { settled({ body }) }, (err: unknown) => { settled(err) })
    const stream = h2.client.request({ ':method': 'POST', ':path': '/', ...TEXT_HEADERS })
    stream.on('error', () => {})
    stream.write('{"amount": 1000')
    await delay(50)
    stream.destroy()
    const err = await outcome as { status?: number, type?: string, received?: number }
    assert.equal(err.status, 400)
    assert.equal(err.type, 'request.aborted')
    assert.equal(err.received, 15)
  })

  it('the json() middleware reads a body streamed without a Content-Length too', async () => {
    const mw = json()
    const server = await startHttp2((req, res) => {
      mw(req, res, (err) => {
        res.end(JSON.stringify({ err: err?.type, body: (req as unknown as WithBody).body }))
      })
    })
    try {
      const reply = await h2request(server.client, JSON_HEADERS, ['{"a":', '1}'])
      assert.deepEqual(JSON.parse(reply.body), { body: { a: 1 } })
    } finally {
      await server.close()
    }
  })
})

describe('the middleware on http2 compat requests', () => {
  it('calls next with 400 request.aborted once a cancelled stream is destroyed, so an error handler that answers at once does not throw', async () => {
    // Between the compat request's 'aborted' and its 'close', the response's end() throws
    // ERR_HTTP2_INVALID_STREAM: an app answering the error there would crash.
    const mw = json()
    let handled: (outcome: unknown) => void = () => {}
    const outcome = new Promise((resolve) => { handled = resolve })
    const server = await startHttp2((req, res) => {
      mw(req, res, (err) => {
        try {
          res.statusCode = err?.status ?? 500
          res.end(err?.type ?? 'ok')
          handled(err?.type)
        } catch (thrown) {
          handled(thrown)
        }
      })
    })
    try {
      const stream = server.client.request({ ':method': 'POST', ':path': '/', ...JSON_HEADERS, 'content-length': 100 })
      stream.on('error', () => {})
      stream.write('{"a":')
      await delay(50)
      stream.close(http2Constants.NGHTTP2_CANCEL)
      assert.equal(await outcome, 'request.aborted')
    } finally {
      await server.close()
    }
  })
})

describe('a client that reset its HTTP/2 stream before the parser ran', () => {
  it('gets 400 request.aborted, whole body or not, and a body read already is still skipped once the client has gone', async () => {
    const first = json()
    const second = json()
    const outcomes: unknown[] = []
    let seen: () => void = () => {}
    const server = await startHttp2((req, res) => {
      const path = req.url
      const done = (err?: { type?: string }): void => { outcomes.push([path, err?.type ?? (req as unknown as WithBody).body]); seen() }
      if (path === '/read-first') {
        // read by a parser, then the client leaves, then a second parser comes
        first(req, res, () => { setTimeout(() => { second(req, res, done) }, 100) })
      } else {
        setTimeout(() => { first(req, res, done) }, 100)
      }
    })
    try {
      for (const [path, length, sent] of [['/cut', 20, '{"a"'], ['/whole', 7, '{"a":1}'], ['/read-first', 7, '{"a":1}']] as const) {
        const settled = new Promise<void>((resolve) => { seen = resolve })
        const stream = server.client.request({ ':method': 'POST', ':path': path, ...JSON_HEADERS, 'content-length': length })
        stream.on('error', () => {})
        if (sent.length === length) stream.end(sent)
        else stream.write(sent)
        await delay(30)
        stream.close(http2Constants.NGHTTP2_CANCEL)
        await within(settled, path)
      }
      assert.deepEqual(outcomes, [['/cut', 'request.aborted'], ['/whole', 'request.aborted'], ['/read-first', { a: 1 }]])
    } finally {
      await server.close()
    }
  })
})

// Type-level checks: this file is type-checked with the rest of the repository.
export async function typeChecks (req: IncomingMessage, h2req: Http2ServerRequest): Promise<unknown[]> {
  const item: { id: number } | undefined = await readJson<{ id: number }>(req)
  const text: string | undefined = await readText(h2req, { defaultCharset: 'latin1' })
  const bytes: Buffer | undefined = await readRaw(req, { verify (r: IncomingMessage, res: ServerResponse | undefined, buf: Buffer) { assert.ok(r !== undefined && res === undefined && buf.length >= 0) } })
  const form: Record<string, unknown> | undefined = await readUrlencoded(req, { extended: true })
  // @ts-expect-error the body is a string, not a number
  const wrong: number | undefined = await readText(req)
  // options written for the middleware fit the reader of a node:http request
  const shared: Parameters<typeof json>[0] = { limit: '1mb' }
  await readJson(req, shared)
  return [item, text, bytes, form, wrong]
}
