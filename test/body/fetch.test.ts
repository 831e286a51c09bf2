// The readers on WHATWG Fetch `Request`s: the same limit, inflation, charset, verify and parse
// rules and the same errors as the middleware, with `new Request(...)` in Node.js and in a Hono app
// (through `app.request` and a real server on @hono/node-server).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { json, raw, readJson, readRaw, readText, readUrlencoded, text, urlencoded } from '../../src/body/index.js'
import type { BodyMiddleware, FetchRequest } from '../../src/body/index.js'
import { request as httpRequest } from '../helpers/server.js'
import type { RequestOptions } from '../helpers/server.js'
import { describeError, describeValue, send, startBodyServer, within } from '../helpers/body-server.js'
import { loadCopy } from '../helpers/realm.js'
import type { BodyServer } from '../helpers/body-server.js'

const URL = 'http://localhost/'
const JSON_TYPE = { 'content-type': 'application/json' }
const RAW_TYPE = { 'content-type': 'application/octet-stream' }
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' }

type Body = string | Uint8Array | URLSearchParams | ReadableStream<Uint8Array>

function post (headers: Record<string, string>, body: Body): Request {
  // a stream body needs duplex 'half' (Node.js's fetch insists on it)
  return new Request(URL, { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
}

async function failure (promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise
  } catch (err) {
    return err as Record<string, unknown>
  }
  assert.fail('the promise resolved')
}

/** A body that hands out `chunk` on every pull, forever, and counts what it gave and whether it was cancelled. */
function endless (chunk: Uint8Array): { stream: ReadableStream<Uint8Array>, pulled: () => number, cancelled: () => boolean } {
  let pulled = 0
  let cancelled = false
  const stream = new ReadableStream<Uint8Array>({
    pull (controller) { pulled += chunk.byteLength; controller.enqueue(chunk) },
    cancel () { cancelled = true }
  })
  return { stream, pulled: () => pulled, cancelled: () => cancelled }
}

describe('reading a new Request', () => {
  it('readJson resolves with the parsed body', async () => {
    assert.deepEqual(await readJson(post(JSON_TYPE, '{"a":[1,2]}')), { a: [1, 2] })
  })

  it('readText resolves with the string (a string body is text/plain;charset=UTF-8)', async () => {
    assert.equal(await readText(new Request(URL, { method: 'POST', body: 'héllo' })), 'héllo')
  })

  it('readRaw resolves with a Buffer of the bytes', async () => {
    const body = await readRaw(post(RAW_TYPE, new Uint8Array([0, 1, 254, 255])))
    assert.ok(Buffer.isBuffer(body))
    assert.equal(body.toString('hex'), '0001feff')
  })

  it('readUrlencoded resolves with the form (a URLSearchParams body)', async () => {
    assert.deepEqual(await readUrlencoded(new Request(URL, { method: 'POST', body: new URLSearchParams('a=1&a=2&b=x') })), { a: ['1', '2'], b: 'x' })
    assert.deepEqual(await readUrlencoded(post(FORM_TYPE, 'a[b]=1'), { extended: true }), { a: { b: '1' } })
  })

  it('reads a body that arrives in many chunks, empty ones included', async () => {
    const parts = ['{"a":', '', '[1,', '2]}'].map((p) => new TextEncoder().encode(p))
    const stream = new ReadableStream<Uint8Array>({
      pull (controller) {
        const part = parts.shift()
        if (part === undefined) controller.close()
        else controller.enqueue(part)
      }
    })
    assert.deepEqual(await readJson(post(JSON_TYPE, stream)), { a: [1, 2] })
  })

  it('resolves {} for an empty JSON body, as the middleware does', async () => {
    assert.deepEqual(await readJson(post(JSON_TYPE, '')), {})
  })

  it('gives the value the type asked for, unchecked', async () => {
    const item: { id: number } | undefined = await readJson<{ id: number }>(post(JSON_TYPE, '{"id":"seven"}'))
    assert.equal(item?.id, 'seven')
  })
})

describe('inflation', () => {
  it('inflates gzip and br bodies', async () => {
    assert.deepEqual(await readJson(post({ ...JSON_TYPE, 'content-encoding': 'gzip' }, gzipSync('{"z":1}'))), { z: 1 })
    assert.deepEqual(await readJson(post({ ...JSON_TYPE, 'content-encoding': 'br' }, brotliCompressSync('{"z":2}'))), { z: 2 })
  })

  it('415 encoding.unsupported for an unknown encoding, and with inflate false', async () => {
    let err = await failure(readText(post({ 'content-type': 'text/plain', 'content-encoding': 'lzma' }, 'x')))
    assert.equal(err['status'], 415)
    assert.equal(err['type'], 'encoding.unsupported')
    err = await failure(readJson(post({ ...JSON_TYPE, 'content-encoding': 'gzip' }, gzipSync('{}')), { inflate: false }))
    assert.equal(err['status'], 415)
    assert.equal(err['type'], 'encoding.unsupported')
  })

  it('400 for a corrupt gzip body', async () => {
    const err = await failure(readJson(post({ ...JSON_TYPE, 'content-encoding': 'gzip' }, gzipSync('{"a":1}').subarray(0, 12))))
    assert.equal(err['status'], 400)
  })
})

describe('limit', () => {
  it('413 entity.too.large for a body past the limit', async () => {
    const err = await failure(readRaw(post(RAW_TYPE, '0123456789'), { limit: 8 }))
    assert.equal(err['status'], 413)
    assert.equal(err['type'], 'entity.too.large')
    assert.equal(err['limit'], 8)
    assert.equal(err['received'], 10)
  })

  it('413 from a Content-Length past the limit, before reading: the body is left unread', async () => {
    const request = post({ ...RAW_TYPE, 'content-length': '10' }, '0123456789')
    const err = await failure(readRaw(request, { limit: 8 }))
    assert.equal(err['status'], 413)
    assert.equal(err['length'], 10)
    assert.equal(request.bodyUsed, false)
  })

  it('cancels an endless body once it passes the limit, without buffering the rest', async () => {
    const body = endless(new Uint8Array(16 * 1024))
    const err = await failure(readRaw(post(RAW_TYPE, body.stream), { limit: '100kb' }))
    assert.equal(err['status'], 413)
    assert.ok(body.cancelled(), 'the stream was cancelled')
    await new Promise((resolve) => setTimeout(resolve, 50))
    // the limit plus what the stream queued ahead: a few chunks, never the endless rest
    assert.ok(body.pulled() < 1024 * 1024, `${body.pulled()} bytes pulled`)
  })

  it('counts inflated bytes: a small gzip body that inflates past the limit is refused', async () => {
    const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024, 0x20))
    const err = await failure(readJson(post({ ...JSON_TYPE, 'content-encoding': 'gzip' }, bomb), { limit: '100kb' }))
    assert.equal(err['status'], 413)
    assert.equal(err['type'], 'entity.too.large')
  })

  it('400 request.size.invalid when the body is not the length its Content-Length says', async () => {
    const err = await failure(readRaw(post({ ...RAW_TYPE, 'content-length': '20' }, '0123456789')))
    assert.equal(err['status'], 400)
    assert.equal(err['type'], 'request.size.invalid')
  })
})

describe('charset', () => {
  it('decodes the charset Content-Type names', async () => {
    assert.equal(await readText(post({ 'content-type': 'text/plain; charset=iso-8859-1' }, Buffer.from('café', 'latin1'))), 'café')
    assert.deepEqual(await readJson(post({ 'content-type': 'application/json; charset=utf-16le' }, Buffer.from('{"a":"é"}', 'utf16le'))), { a: 'é' })
  })

  it('415 charset.unsupported for a charset the parser refuses, leaving the body unread', async () => {
    const request = post({ 'content-type': 'application/json; charset=latin1' }, '{}')
    const err = await failure(readJson(request))
    assert.equal(err['status'], 415)
    assert.equal(err['type'], 'charset.unsupported')
    assert.equal(err['charset'], 'latin1')
    assert.equal(request.bodyUsed, false)
  })

  it('415 charset.unsupported for a charset the decoder does not know', async () => {
    const err = await failure(readText(post({ 'content-type': 'text/plain; charset=x-nope' }, 'x')))
    assert.equal(err['status'], 415)
    assert.equal(err['message'], 'unsupported charset "X-NOPE"')
  })
})

describe('verify', () => {
  it('is called with the request, undefined, the bytes and the charset', async () => {
    const request = post({ 'content-type': 'text/plain; charset=utf-8' }, 'signed')
    const calls: unknown[][] = []
    const body = await readText(request, {
      verify (req, res, buf, encoding) { calls.push([req === request, res, buf.toString(), encoding]) }
    })
    assert.equal(body, 'signed')
    assert.deepEqual(calls, [[true, undefined, 'signed', 'utf-8']])
  })

  it('gets null for the encoding of a raw body', async () => {
    const encodings: unknown[] = []
    await readRaw(post(RAW_TYPE, 'x'), { verify (_req, _res, _buf, encoding) { encodings.push(encoding) } })
    assert.deepEqual(encodings, [null])
  })

  it('403 entity.verify.failed with the body when it throws', async () => {
    const err = await failure(readJson(post(JSON_TYPE, '{}'), { verify () { throw new Error('bad signature') } }))
    assert.equal(err['status'], 403)
    assert.equal(err['type'], 'entity.verify.failed')
    assert.equal(err['message'], 'bad signature')
    assert.deepEqual(err['body'], Buffer.from('{}'))
  })
})

describe('options used for many requests', () => {
  it('show each call its own request, in type and verify', async () => {
    const seen: string[] = []
    const options = {
      type: (req: FetchRequest) => { seen.push(`type ${String(req.headers.get('x-n'))}`); return true },
      verify: (req: FetchRequest) => { seen.push(`verify ${String(req.headers.get('x-n'))}`) }
    }
    for (const n of ['1', '2', '3']) {
      assert.deepEqual(await readJson(post({ 'content-type': 'application/x-anything', 'x-n': n }, `[${n}]`), options), [Number(n)])
    }
    assert.deepEqual(seen, ['type 1', 'verify 1', 'type 2', 'verify 2', 'type 3', 'verify 3'])
  })
})

describe('type', () => {
  it('a type function receives the request', async () => {
    const request = post({ 'content-type': 'application/x-anything' }, '[1]')
    const seen: unknown[] = []
    assert.deepEqual(await readJson(request, { type: (req) => { seen.push(req === request); return true } }), [1])
    assert.deepEqual(seen, [true])
  })

  it('resolves undefined when the type does not match, leaving the body to the next reader', async () => {
    const request = post({ 'content-type': 'text/plain' }, '{"a":1}')
    assert.equal(await readJson(request), undefined)
    assert.equal(request.bodyUsed, false)
    assert.equal(await readText(request), '{"a":1}')
  })

  it('matches with type-is, as the middleware does', async () => {
    assert.equal(await readText(post({ 'content-type': 'text/html' }, '<p>'), { type: 'text/*' }), '<p>')
    assert.deepEqual(await readJson(post({ 'content-type': 'application/vnd.api+json' }, '{}'), { type: '+json' }), {})
  })
})

describe('bodies that cannot be read', () => {
  it('resolves undefined for a Request without a body', async () => {
    assert.equal(await readJson(new Request(URL, { headers: JSON_TYPE })), undefined)
    assert.equal(await readRaw(new Request(URL, { method: 'DELETE' })), undefined)
  })

  it('500 stream.not.readable for a body already used', async () => {
    const request = post(JSON_TYPE, '{"a":1}')
    await request.json()
    const err = await failure(readJson(request))
    assert.equal(err['status'], 500)
    assert.equal(err['type'], 'stream.not.readable')
    assert.equal(err['message'], 'stream is not readable')
  })

  it('500 stream.not.readable for a body another reader holds', async () => {
    const request = post(JSON_TYPE, '{"a":1}')
    request.body?.getReader()
    const err = await failure(readJson(request))
    assert.equal(err['type'], 'stream.not.readable')
  })

  it('a second read of the same Request gives 500 stream.not.readable', async () => {
    const request = post(JSON_TYPE, '{"a":1}')
    assert.deepEqual(await readJson(request), { a: 1 })
    assert.equal((await failure(readJson(request)))['type'], 'stream.not.readable')
  })

  it('takes the body at the call: a reader started in the same tick finds it locked', async () => {
    const request = post(JSON_TYPE, '{"a":1}')
    const ours = readJson(request)
    await assert.rejects(request.json(), TypeError)
    assert.deepEqual(await ours, { a: 1 })
  })

  it('a body refused by its headers is never taken, nor its signal read, and stays for another reader', async () => {
    const refusals: Array<[Record<string, string>, (request: Request) => Promise<unknown>, string]> = [
      [{ 'content-type': 'text/plain; charset=bogus' }, (r) => readText(r), 'charset.unsupported'],
      [{ 'content-type': 'text/plain', 'content-encoding': 'lzma' }, (r) => readText(r), 'encoding.unsupported'],
      [{ 'content-type': 'text/plain', 'content-encoding': 'gzip' }, (r) => readText(r, { inflate: false }), 'encoding.unsupported'],
      [{ 'content-type': 'text/plain', 'content-length': '5' }, (r) => readText(r, { limit: 4 }), 'entity.too.large'],
      [{ 'content-type': 'application/json; charset=latin1' }, (r) => readJson(r), 'charset.unsupported']
    ]
    for (const [headers, read, type] of refusals) {
      const request = post(headers, 'hello')
      // (Bun marks a body whose reader was taken and released as used: it must not be taken)
      let taken = 0
      const body = request.body as ReadableStream<Uint8Array>
      const getReader = body.getReader.bind(body)
      Object.defineProperty(body, 'getReader', { value: (...args: []) => { taken++; return getReader(...args) } })
      // (Deno warns once about its signal's semantics when a request's signal is read)
      let signalRead = 0
      const signal = request.signal
      Object.defineProperty(request, 'signal', { get: () => { signalRead++; return signal } })
      assert.equal((await failure(read(request)))['type'], type)
      assert.deepEqual({ taken, signalRead, bodyUsed: request.bodyUsed }, { taken: 0, signalRead: 0, bodyUsed: false }, type)
      assert.equal(await request.text(), 'hello')
    }
    const other = post({ 'content-type': 'text/plain' }, 'hello')
    Object.defineProperty(other, 'signal', { get: () => { throw new Error('the signal was read') } })
    assert.equal(await readJson(other), undefined)
  })

  /** A request whose body gives five bytes and then never ends, with the controller of its signal. */
  function stalled (): { request: Request, controller: AbortController, cancelled: () => boolean } {
    let cancelled = false
    const stream = new ReadableStream<Uint8Array>({
      start (controller) { controller.enqueue(new TextEncoder().encode('{"a":')) },
      cancel () { cancelled = true }
    })
    const controller = new AbortController()
    const request = new Request(URL, { method: 'POST', headers: JSON_TYPE, body: stream, duplex: 'half', signal: controller.signal } as RequestInit)
    return { request, controller, cancelled: () => cancelled }
  }

  it('400 request.aborted when the request\'s signal aborts a body that never ends, and the body is cancelled', async () => {
    const { request, controller, cancelled } = stalled()
    setTimeout(() => { controller.abort() }, 30)
    const err = await failure(readJson(request))
    assert.equal(err['status'], 400)
    assert.equal(err['type'], 'request.aborted')
    assert.equal(err['received'], 5)
    assert.equal(cancelled(), true)
  })

  it('400 request.aborted when the request\'s signal aborted before the read, and the body is cancelled', async () => {
    const { request, controller, cancelled } = stalled()
    controller.abort()
    const err = await failure(readJson(request))
    assert.equal(err['status'], 400)
    assert.equal(err['type'], 'request.aborted')
    assert.equal(cancelled(), true)
  })

  it('400 request.aborted for a signal aborted before the read while a test\'s fake timers hold process.nextTick', async () => {
    // Jest gives the modules of a test file a `process` of its own, whose nextTick its fake timers
    // replace by default: a callback given to it waits for the test to advance the clock.
    const held: Array<() => void> = []
    const jestProcess = Object.create(process, { nextTick: { value: (fn: () => void) => { held.push(fn) } } }) as NodeJS.Process
    const copy = loadCopy('src/body/index.ts', true, { process: jestProcess }) as { readJson: typeof readJson }
    const { request, controller, cancelled } = stalled()
    controller.abort()
    const err = await within(failure(copy.readJson(request)), 'readJson')
    assert.equal(err['type'], 'request.aborted')
    assert.equal(cancelled(), true)
  })

  it('with a signal aborted before the read, still settles a body refused by its headers alone', async () => {
    const controller = new AbortController()
    controller.abort()
    const mismatch = new Request(URL, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello', signal: controller.signal })
    assert.equal(await readJson(mismatch), undefined)
    assert.equal(await mismatch.text(), 'hello')
    const bogus = new Request(URL, { method: 'POST', headers: { 'content-type': 'text/plain; charset=bogus' }, body: 'hello', signal: controller.signal })
    assert.equal((await failure(readText(bogus)))['type'], 'charset.unsupported')
    assert.equal(await bogus.text(), 'hello')
  })

  it('400 request.aborted when the body stream fails mid-way', async () => {
    let sent = false
    const stream = new ReadableStream<Uint8Array>({
      pull (controller) {
        if (!sent) { sent = true; controller.enqueue(new TextEncoder().encode('{"a":')); return }
        controller.error(new Error('connection reset'))
      }
    })
    const err = await failure(readJson(post(JSON_TYPE, stream)))
    assert.equal(err['status'], 400)
    assert.equal(err['type'], 'request.aborted')
    assert.equal(err['received'], 5)
  })

  it('passes on the error a body stream fails with when it carries a status or type of its own, as from a Node.js stream', async () => {
    for (const own of [{ status: 502, type: 'upstream.failed' }, { status: 503 }, { type: 'upstream.failed' }]) {
      const raised = Object.assign(new Error('upstream broke'), own)
      const stream = new ReadableStream<Uint8Array>({ pull (controller) { controller.error(raised) } })
      const err = await failure(readJson(post(JSON_TYPE, stream)))
      assert.equal(err, raised, JSON.stringify(own))
      assert.equal(err['status'], own.status ?? 400)
      assert.equal(err['type'], own.type ?? 'entity.parse.failed')
      assert.equal(err['message'], 'upstream broke')
    }
  })

  it('passes on a value other than an Error a body stream fails with, carrying a status or type, as from a Node.js stream', async () => {
    for (const own of [{ status: 503, type: 'upstream.failed', message: 'upstream failed' }, { type: 'upstream.failed' }, { status: 502 }]) {
      const fromFetch = new ReadableStream<Uint8Array>({
        start (controller) { controller.enqueue(new TextEncoder().encode('{"a":')) },
        pull (controller) { controller.error(own) }
      })
      const fetchErr = await within(failure(readJson(post(JSON_TYPE, fromFetch))), 'the read settles')
      const fromNode = Object.assign(new Readable({ read () {} }), { headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } })
      fromNode.push('{"a":')
      setImmediate(() => { fromNode.destroy(own as unknown as Error) })
      const nodeErr = await within(failure(readJson(fromNode as unknown as IncomingMessage)), 'the read settles')
      assert.deepEqual(describeError(fetchErr), describeError(nodeErr), JSON.stringify(own))
      assert.equal(fetchErr['type'], own.type ?? 'entity.parse.failed')
      assert.notEqual(fetchErr['type'], 'request.aborted')
    }
  })

  it('settles at once when the body cannot be cancelled at once (a branch of a body split in two, as request.clone() splits it, or a cancel that never settles)', async () => {
    const bytes = new TextEncoder().encode('{"a":')
    const never = (): Promise<void> => new Promise<void>(() => {})
    for (const split of [true, false]) {
      const cancel = split ? undefined : never
      const bodies: Array<{ name: string, stream: () => ReadableStream<Uint8Array>, abort: 'before' | 'during' | undefined, type: string }> = [
        { name: 'aborted during the read', stream: () => new ReadableStream<Uint8Array>({ start (c) { c.enqueue(bytes) }, ...(cancel === undefined ? {} : { cancel }) }), abort: 'during', type: 'request.aborted' },
        { name: 'aborted before the read', stream: () => new ReadableStream<Uint8Array>({ start (c) { c.enqueue(bytes) }, ...(cancel === undefined ? {} : { cancel }) }), abort: 'before', type: 'request.aborted' },
        { name: 'a chunk that is not bytes', stream: () => new ReadableStream<unknown>({ start (c) { c.enqueue('{"a":1}') }, ...(cancel === undefined ? {} : { cancel }) }) as ReadableStream<Uint8Array>, abort: undefined, type: 'stream.not.readable' }
      ]
      for (const { name, stream, abort, type } of bodies) {
        // The other branch is kept and never read (a logging middleware's copy, say): cancelling
        // one branch settles only once the other is cancelled or read too. (Request.clone() itself
        // leaves Node.js 20.11's event loop running, so the test splits the body as it does.)
        let body = stream()
        let other: ReadableStream<Uint8Array> | undefined
        if (split) [body, other] = body.tee()
        const controller = new AbortController()
        const request = new Request(URL, { method: 'POST', headers: JSON_TYPE, body, duplex: 'half', signal: controller.signal } as RequestInit)
        if (abort === 'before') controller.abort()
        if (abort === 'during') setTimeout(() => { controller.abort() }, 20)
        const err = await within(failure(readJson(request)), `${name}${split ? ', split' : ''}`)
        assert.equal(err['type'], type, name)
        assert.equal(other === undefined || !other.locked, true)
      }
    }
  })

  it('400 request.aborted when the body stream fails with a value that cannot be made into text (no prototype), or whose status cannot be read', async () => {
    const unreadable = Object.defineProperty(new Error('broken'), 'status', { get () { throw new Error('no status') } })
    const trap = new Proxy(new Error('trapped'), { get () { throw new Error('no property') } })
    for (const raised of [Object.create(null), unreadable, trap]) {
      const stream = new ReadableStream<Uint8Array>({ pull (controller) { controller.error(raised) } })
      const err = await within(failure(readJson(post(JSON_TYPE, stream))), 'the read settles')
      assert.equal(err['status'], 400)
      assert.equal(err['type'], 'request.aborted')
    }
  })

  it('500 stream.not.readable for a body stream that gives something other than bytes, and the stream is cancelled', async () => {
    for (const chunk of ['{"a":1}', new TextEncoder().encode('{"a":1}').buffer, 7]) {
      let cancelled = false
      const stream = new ReadableStream({
        start (controller) { controller.enqueue(chunk) },
        cancel () { cancelled = true }
      })
      const err = await failure(readJson(post(JSON_TYPE, stream as ReadableStream<Uint8Array>)))
      assert.equal(err['status'], 500, typeof chunk)
      assert.equal(err['type'], 'stream.not.readable')
      assert.equal(cancelled, true)
    }
  })

  it('500 stream.not.readable for a body stream that gives a chunk with no value, as Node.js\'s request.text() rejects it', async () => {
    const withNoValue = (): ReadableStream<Uint8Array> => new ReadableStream<unknown>({
      start (controller) {
        controller.enqueue(undefined)
        controller.enqueue(new TextEncoder().encode('{"a":1}'))
        controller.close()
      }
    }) as ReadableStream<Uint8Array>
    await assert.rejects(post(JSON_TYPE, withNoValue()).text(), TypeError)
    const err = await failure(readJson(post(JSON_TYPE, withNoValue())))
    assert.equal(err['status'], 500)
    assert.equal(err['type'], 'stream.not.readable')
  })

  it('rejects bad options with a TypeError', async () => {
    await assert.rejects(readJson(post(JSON_TYPE, '{}'), { limit: 'lots' }), TypeError)
    await assert.rejects(readUrlencoded(post(FORM_TYPE, 'a=1'), { parameterLimit: 0 }), TypeError)
  })

  it('accepts any object shaped like a Request', async () => {
    const bytes = new TextEncoder().encode('{"shape":true}')
    let done = false
    const request: FetchRequest = {
      headers: { get: (name) => name === 'content-type' ? 'application/json' : null },
      bodyUsed: false,
      body: {
        locked: false,
        getReader: () => ({
          read: async () => done ? { done: true } : ((done = true), { done: false, value: bytes }),
          cancel: async () => {}
        })
      }
    }
    assert.deepEqual(await readJson(request), { shape: true })
  })

  it('settles for an object shaped like a Request whose reader throws, answers oddly or cancels by throwing', async () => {
    const bytes = new TextEncoder().encode('{"shape":true}')
    const shaped = (reader: Record<string, unknown>, signal?: AbortSignal): FetchRequest => ({
      headers: { get: (name) => name === 'content-type' ? 'application/json' : null },
      bodyUsed: false,
      body: { locked: false, getReader: () => reader as never },
      ...(signal === undefined ? {} : { signal })
    })
    let given = false
    const once = (): unknown => given ? { done: true } : ((given = true), { done: false, value: bytes })
    // a read that is not a promise, and a cancel that is not one either
    assert.deepEqual(await within(readJson(shaped({ read: once, cancel: () => undefined })), 'plain values'), { shape: true })
    const cases: Array<{ name: string, reader: Record<string, unknown>, type: string, limit?: number }> = [
      { name: 'a read that throws', reader: { read: () => { throw new Error('broken reader') }, cancel: async () => {} }, type: 'request.aborted' },
      { name: 'a read giving no result', reader: { read: async () => undefined, cancel: async () => {} }, type: 'stream.not.readable' },
      { name: 'a result whose value throws', reader: { read: async () => ({ done: false, get value () { throw new Error('no value') } }), cancel: async () => {} }, type: 'request.aborted' },
      { name: 'a cancel that throws, past the limit', reader: { read: async () => ({ done: false, value: new Uint8Array(64) }), cancel: () => { throw new Error('no cancel') } }, type: 'entity.too.large', limit: 100 },
      { name: 'a cancel that throws, for a chunk that is not bytes', reader: { read: async () => ({ done: false, value: 'text' }), cancel: () => { throw new Error('no cancel') } }, type: 'stream.not.readable' }
    ]
    for (const { name, reader, type, limit } of cases) {
      const err = await within(failure(readJson(shaped(reader), limit === undefined ? {} : { limit })), name)
      assert.equal(err['type'], type, name)
    }
    const controller = new AbortController()
    const stalled = shaped({ read: async () => await new Promise(() => {}), cancel: () => { throw new Error('no cancel') } }, controller.signal)
    setTimeout(() => { controller.abort() }, 20)
    assert.equal((await within(failure(readJson(stalled)), 'aborted, a cancel that throws'))['type'], 'request.aborted')
    // a value that is bytes when checked and something else when read again: what was checked is pushed
    let looks = 0
    let sent = false
    const changing = shaped({ read: async () => sent ? { done: true } : ((sent = true), { done: false, get value () { return ++looks > 1 ? 'text' : bytes } }), cancel: async () => {} })
    assert.deepEqual(await within(readJson(changing), 'a value that changes'), { shape: true })
  })

  it('settles for an object shaped like a Request whose reader, or its signal, fails when the body is let go', async () => {
    const bytes = new TextEncoder().encode('{"shape":true}')
    const shaped = (headers: Record<string, string>, getReader: () => unknown, signal?: unknown): FetchRequest => ({
      headers: { get: (name) => headers[name] ?? null },
      bodyUsed: false,
      body: { locked: false, getReader: getReader as never },
      ...(signal === undefined ? {} : { signal: signal as AbortSignal })
    })
    const refused = { 'content-type': 'application/json', 'content-encoding': 'zz' }
    const reader = (extra: object): object => Object.assign({ read: async () => ({ done: true }), cancel: async () => {} }, extra)
    const cancelThrows = Object.defineProperty(reader({ read: async () => { throw new Error('gone') } }), 'cancel', { get () { throw new Error('no cancel') } })
    assert.equal((await within(failure(readJson(shaped({ 'content-type': 'application/json' }, () => cancelThrows))), 'cancel'))['type'], 'request.aborted')
    assert.equal((await within(failure(readJson(shaped({ 'content-type': 'application/json' }, () => null))), 'no reader'))['type'], 'stream.not.readable')
    assert.equal((await within(failure(readJson(shaped(refused, () => { throw new Error('taken') }))), 'refused'))['type'], 'encoding.unsupported')
    let given = false
    const once = reader({ read: async () => given ? { done: true } : ((given = true), { done: false, value: bytes }) })
    const badSignal = { aborted: false, addEventListener () {}, removeEventListener () { throw new Error('no removeEventListener') } }
    assert.deepEqual(await within(readJson(shaped({ 'content-type': 'application/json' }, () => once, badSignal)), 'removeEventListener'), { shape: true })
    const deafSignal = { aborted: false, addEventListener () { throw new Error('no addEventListener') }, removeEventListener () {} }
    given = false
    assert.deepEqual(await within(readJson(shaped({ 'content-type': 'application/json' }, () => once, deafSignal)), 'addEventListener'), { shape: true })
  })
})

describe('the same errors as the middleware', () => {
  let server: BodyServer
  before(async () => { server = await startBodyServer() })
  after(async () => { await server.close() })

  const cases: Array<[string, (request: Request) => Promise<unknown>, BodyMiddleware, Record<string, string>, string | Buffer]> = [
    ['400 entity.parse.failed', (r) => readJson(r), json(), JSON_TYPE, '{"oops"}'],
    ['400 entity.parse.failed in strict mode', (r) => readJson(r), json(), JSON_TYPE, ' "x"'],
    ['400 entity.parse.failed for a poisoned key', (r) => readJson(r), json(), JSON_TYPE, '{"a":{"__proto__":{}}}'],
    ['400 entity.parse.failed for corrupt gzip', (r) => readJson(r), json(), { ...JSON_TYPE, 'content-encoding': 'gzip' }, gzipSync('{"a":1}').subarray(0, 12)],
    ['403 entity.verify.failed', (r) => readText(r, { verify: () => { throw new Error('no') } }), text({ verify: () => { throw new Error('no') } }), { 'content-type': 'text/plain' }, 'signed'],
    ['413 entity.too.large', (r) => readRaw(r, { limit: 8 }), raw({ limit: 8 }), RAW_TYPE, '0123456789'],
    ['413 entity.too.large after inflation', (r) => readJson(r, { limit: 64 }), json({ limit: 64 }), { ...JSON_TYPE, 'content-encoding': 'gzip' }, gzipSync(`[${'0,'.repeat(60)}0]`)],
    ['413 parameters.too.many', (r) => readUrlencoded(r, { parameterLimit: 2 }), urlencoded({ parameterLimit: 2 }), FORM_TYPE, 'a=1&b=2&c=3'],
    ['400 querystring.parse.rangeError', (r) => readUrlencoded(r, { extended: true, depth: 1 }), urlencoded({ extended: true, depth: 1 }), FORM_TYPE, 'a[b][c]=1'],
    ['415 charset.unsupported', (r) => readJson(r), json(), { 'content-type': 'application/json; charset=latin1' }, '{}'],
    ['415 charset.unsupported from the decoder', (r) => readText(r), text(), { 'content-type': 'text/plain; charset=x-nope' }, 'x'],
    ['415 encoding.unsupported', (r) => readText(r), text(), { 'content-type': 'text/plain', 'content-encoding': 'lzma' }, 'x'],
    ['415 encoding.unsupported with inflate false', (r) => readJson(r, { inflate: false }), json({ inflate: false }), { ...JSON_TYPE, 'content-encoding': 'gzip' }, gzipSync('{}')]
  ]

  for (const [name, read, mw, headers, body] of cases) {
    it(`${name}: same status, type, message and properties`, async () => {
      const input: RequestOptions = { headers, body }
      const theirs = await send(server, server.mount(mw), input)
      // the middleware's request had a Content-Length: so does this one
      const err = await failure(read(post({ ...headers, 'content-length': String(Buffer.byteLength(body)) }, body)))
      assert.deepEqual(describeError(err), theirs.error)
      const [status, type] = name.split(' ')
      assert.equal(err['status'], Number(status))
      assert.equal(err['type'], type)
    })
  }

  it('the same value for the same body', async () => {
    const body = '{"a":[1,{"b":null}],"c":"é"}'
    const theirs = await send(server, server.mount(json()), { headers: JSON_TYPE, body })
    assert.deepEqual(describeValue(await readJson(post(JSON_TYPE, body))), theirs.body)
  })
})

describe('Hono', () => {
  function app (): Hono {
    const hono = new Hono()
    hono.post('/items', async (c) => {
      const item = await readJson<{ name?: unknown }>(c.req.raw, { limit: '1kb' })
      return c.json({ item: item ?? null })
    })
    hono.post('/form', async (c) => c.json({ form: await readUrlencoded(c.req.raw) ?? null }))
    hono.onError((err, c) => {
      const e = err as Error & { status?: number, type?: string }
      return c.json({ type: e.type ?? 'internal' }, (e.status ?? 500) as 400)
    })
    return hono
  }

  it('reads bodies through app.request', async () => {
    const hono = app()
    let res = await hono.request('/items', { method: 'POST', headers: JSON_TYPE, body: '{"name":"tea"}' })
    assert.deepEqual(await res.json(), { item: { name: 'tea' } })
    res = await hono.request('/items', { method: 'POST', headers: { ...JSON_TYPE, 'content-encoding': 'gzip' }, body: gzipSync('{"name":"zip"}') })
    assert.deepEqual(await res.json(), { item: { name: 'zip' } })
    res = await hono.request('/form', { method: 'POST', body: new URLSearchParams('a=1') })
    assert.deepEqual(await res.json(), { form: { a: '1' } })
    res = await hono.request('/items', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' })
    assert.deepEqual(await res.json(), { item: null })
  })

  it('answers parser errors with their status and type through app.request', async () => {
    const hono = app()
    let res = await hono.request('/items', { method: 'POST', headers: JSON_TYPE, body: '{' })
    assert.equal(res.status, 400)
    assert.deepEqual(await res.json(), { type: 'entity.parse.failed' })
    res = await hono.request('/items', { method: 'POST', headers: JSON_TYPE, body: `"${'x'.repeat(2000)}"` })
    assert.equal(res.status, 413)
    assert.deepEqual(await res.json(), { type: 'entity.too.large' })
  })

  it('reads bodies on a real server (@hono/node-server), and a 413 mid-stream reaches the client', async () => {
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: app().fetch, port: 0, hostname: '127.0.0.1' }, () => { resolve(s) })
    })
    try {
      const port = (server.address() as AddressInfo).port
      let reply = await httpRequest(port, { path: '/items', headers: JSON_TYPE, body: '{"name":"tea"}' })
      assert.deepEqual(JSON.parse(reply.body), { item: { name: 'tea' } })
      reply = await httpRequest(port, { path: '/items', headers: { ...JSON_TYPE, 'transfer-encoding': 'chunked' }, body: ['{"name":"', 'x'.repeat(700), 'x'.repeat(700), '"}'] })
      assert.equal(reply.status, 413)
      assert.deepEqual(JSON.parse(reply.body), { type: 'entity.too.large' })
      reply = await httpRequest(port, { path: '/items', headers: { ...JSON_TYPE, 'content-length': '5000' }, body: 'x'.repeat(5000) })
      assert.equal(reply.status, 413)
    } finally {
      server.close()
    }
  })
})
