// Every error row of SPEC 7: status, statusCode, expose, type, message and the extra properties,
// checked against body-parser wherever it answers the same request.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { gzipSync } from 'node:zlib'
import bodyParser from 'body-parser'
import { json, raw, text, urlencoded } from '../../src/body/index.js'
import type { BodyErrorType } from '../../src/body/index.js'
import { rawSocket } from '../helpers/server.js'
import { compare, requestHead, send, startBodyServer, within } from '../helpers/body-server.js'
import type { Before, BodyServer, Seen } from '../helpers/body-server.js'

const JSON_HEADERS = { 'content-type': 'application/json' }

let server: BodyServer
before(async () => { server = await startBodyServer() })
after(async () => { await server.close() })

const delay = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

function assertError (seen: Seen, status: number, type: BodyErrorType, message: string, props: Record<string, unknown>): void {
  assert.ok(seen.error !== undefined, 'next got an error')
  assert.equal(seen.error.status, status)
  assert.equal(seen.error.statusCode, status)
  assert.equal(seen.error.expose, status < 500)
  assert.equal(seen.error.type, type)
  assert.equal(seen.error.message, message)
  assert.deepEqual(seen.error.props, props)
  assert.equal(seen.listeners, 0)
}

describe('SPEC 7 errors', () => {
  it('415 encoding.unsupported when inflate is false, with the encoding in charset (and encoding)', async () => {
    const seen = await send(server, server.mount(json({ inflate: false })), { headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' }, body: gzipSync('{}') })
    assertError(seen, 415, 'encoding.unsupported', 'content encoding unsupported', { charset: 'gzip', encoding: 'gzip' })
  })

  it('400 entity.parse.failed with the body that failed', async () => {
    const seen = await compare(server, json(), bodyParser.json(), { headers: JSON_HEADERS, body: '{"oops"}' })
    assertError(seen, 400, 'entity.parse.failed', seen.error?.message ?? '', { body: '{"oops"}' })
    assert.equal(seen.error?.name, 'SyntaxError')
  })

  it('403 entity.verify.failed with the body that failed (a Buffer)', async () => {
    const verify = (): void => { throw new Error('bad signature') }
    const seen = await compare(server, text({ verify }), bodyParser.text({ verify }), { headers: { 'content-type': 'text/plain' }, body: 'signed' })
    assertError(seen, 403, 'entity.verify.failed', 'bad signature', { body: { hex: Buffer.from('signed').toString('hex') } })
  })

  it('400 request.aborted with the bytes received and expected, as body-parser reports it', async () => {
    const abort = async (mw: unknown): Promise<Seen> => {
      const path = server.mount(mw)
      const observed = server.observe(path)
      const socket = await rawSocket(server.port)
      socket.write(requestHead(path, { 'content-type': 'application/octet-stream', 'content-length': 50 }) + '0123456789')
      await delay(50)
      socket.destroy()
      return await observed
    }
    const ours = await abort(raw())
    assertError(ours, 400, 'request.aborted', 'request aborted', { code: 'ECONNABORTED', expected: 50, length: 50, received: 10 })
    const theirs = await abort(bodyParser.raw())
    assert.deepEqual(ours.error, theirs.error)
  })

  it('413 entity.too.large with the limit and the length (declared)', async () => {
    const seen = await compare(server, raw({ limit: 8 }), bodyParser.raw({ limit: 8 }), { headers: { 'content-type': 'application/octet-stream' }, body: '0123456789' })
    assertError(seen, 413, 'entity.too.large', 'request entity too large', { expected: 10, length: 10, limit: 8 })
  })

  it('413 entity.too.large with the limit and the bytes received (streamed)', async () => {
    const seen = await send(server, server.mount(raw({ limit: 8 })), { headers: { 'content-type': 'application/octet-stream' }, body: ['01234', '56789'] })
    assertError(seen, 413, 'entity.too.large', 'request entity too large', { limit: 8, received: 10 })
  })

  it('400 request.size.invalid when the body is not the length Content-Length says', async () => {
    const lengthen = (req: IncomingMessage): void => { req.headers['content-length'] = '20' }
    const seen = await compare(server, raw(), bodyParser.raw(), { headers: { 'content-type': 'application/octet-stream' }, body: '0123456789' }, lengthen)
    assertError(seen, 400, 'request.size.invalid', 'request size did not match content length', { expected: 20, length: 20, received: 10 })
  })

  it('500 stream.encoding.set when the stream encoding was set before the parser', async () => {
    const seen = await compare(server, raw(), bodyParser.raw(), { headers: { 'content-type': 'application/octet-stream' }, body: 'x' }, (req) => { req.setEncoding('latin1') })
    assertError(seen, 500, 'stream.encoding.set', 'stream encoding should not be set', {})
  })

  it('500 stream.not.readable when the stream is no longer readable', async () => {
    const seen = await compare(server, raw(), bodyParser.raw(), { headers: { 'content-type': 'application/octet-stream' }, body: 'x' }, (req) => {
      Object.defineProperty(req, 'readable', { value: false })
    })
    assertError(seen, 500, 'stream.not.readable', 'stream is not readable', {})
  })

  it('413 parameters.too.many past parameterLimit', async () => {
    const seen = await compare(server, urlencoded({ parameterLimit: 2 }), bodyParser.urlencoded({ parameterLimit: 2 }), { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=2&c=3' })
    assertError(seen, 413, 'parameters.too.many', 'too many parameters', { body: 'a=1&b=2&c=3' })
  })

  it('415 charset.unsupported with the charset, named in the message', async () => {
    const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': 'text/plain; charset=x-nope' }, body: 'x' })
    assertError(seen, 415, 'charset.unsupported', 'unsupported charset "X-NOPE"', { charset: 'x-nope' })
  })

  it('415 encoding.unsupported with the encoding, named in the message', async () => {
    const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': 'text/plain', 'content-encoding': 'lzma' }, body: 'x' })
    assertError(seen, 415, 'encoding.unsupported', 'unsupported content encoding "lzma"', { encoding: 'lzma' })
  })

  it('400 querystring.parse.rangeError past depth with extended', async () => {
    const body = 'a[b][c][d]=1'
    const seen = await compare(server, urlencoded({ extended: true, depth: 2 }), bodyParser.urlencoded({ extended: true, depth: 2 } as bodyParser.OptionsUrlencoded), { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
    assertError(seen, 400, 'querystring.parse.rangeError', 'The input exceeded the depth', { body })
  })
})

describe('verify errors', () => {
  it('keep the thrown error\'s own type and status', async () => {
    const verify = (): void => { throw Object.assign(new Error('slow down'), { status: 429, type: 'rate.limited' }) }
    const seen = await compare(server, json({ verify }), bodyParser.json({ verify }), { headers: JSON_HEADERS, body: '{}' })
    assert.equal(seen.error?.status, 429)
    assert.equal(seen.error?.type, 'rate.limited')
  })

  it('take a thrown string as the message', async () => {
    const verify = (): void => { throw 'nope' } // eslint-disable-line no-throw-literal
    const seen = await compare(server, json({ verify }), bodyParser.json({ verify }), { headers: JSON_HEADERS, body: '{}' })
    assertError(seen, 403, 'entity.verify.failed', 'nope', { body: { hex: Buffer.from('{}').toString('hex') } })
  })

  it('survive a thrown number, null or undefined (body-parser crashes on these)', async () => {
    for (const thrown of [42, null, undefined]) {
      const verify = (): void => { throw thrown }
      const seen = await send(server, server.mount(json({ verify })), { headers: JSON_HEADERS, body: '{}' })
      assert.equal(seen.error?.status, 403)
      assert.equal(seen.error?.type, 'entity.verify.failed')
    }
  })

  it('survive a thrown error that cannot take a status (frozen, a read-only status, a throwing getter), with a 403 (body-parser crashes on these)', async () => {
    const throwing = [
      Object.freeze(new Error('frozen')),
      Object.defineProperty(new Error('read-only status'), 'status', { value: 422, writable: false }),
      Object.defineProperty(new Error('getter'), 'type', { get () { throw new Error('no type') } }),
      new Proxy(new Error('proxy'), { get () { throw new Error('no access') } })
    ]
    for (const thrown of throwing) {
      const verify = (): void => { throw thrown }
      const seen = await send(server, server.mount(json({ verify })), { headers: JSON_HEADERS, body: '{}' })
      assert.equal(seen.error?.status, 403)
      assert.equal(seen.error?.statusCode, 403)
      assert.equal(seen.error?.type, 'entity.verify.failed')
      assert.deepEqual(seen.error?.props, { body: { hex: Buffer.from('{}').toString('hex') } })
    }
  })

  it('come after the charset check: verify never sees a body in an unknown charset', async () => {
    let called = 0
    const verify = (): void => { called++ }
    const seen = await compare(server, text({ verify }), bodyParser.text({ verify }), { headers: { 'content-type': 'text/plain; charset=Bogus' }, body: 'x' })
    assertError(seen, 415, 'charset.unsupported', 'unsupported charset "BOGUS"', { charset: 'bogus' })
    assert.equal(called, 0)
  })

  it('come before parsing: a body that verify refuses is not parsed', async () => {
    const verify = (): void => { throw new Error('refused') }
    const seen = await compare(server, json({ verify }), bodyParser.json({ verify }), { headers: JSON_HEADERS, body: '{not json' })
    assert.equal(seen.error?.type, 'entity.verify.failed')
  })
})

describe('a req.body the parser cannot set', () => {
  it('is a 400 entity.parse.failed with the body, as in body-parser, for a getter-only or read-only req.body', async () => {
    const getterOnly: Before = (req) => { Object.defineProperty(req, 'body', { get () { return 'fixed' }, configurable: true }) }
    const readOnly: Before = (req) => { Object.defineProperty(req, 'body', { value: 'fixed', writable: false, configurable: true }) }
    const parsers: Array<[unknown, unknown, Record<string, string>, string]> = [
      [json(), bodyParser.json(), JSON_HEADERS, '{"a":1}'],
      [urlencoded(), bodyParser.urlencoded(), { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1'],
      [text(), bodyParser.text(), { 'content-type': 'text/plain' }, 'hello'],
      [raw(), bodyParser.raw(), { 'content-type': 'application/octet-stream' }, 'bytes']
    ]
    for (const before of [getterOnly, readOnly]) {
      for (const [ours, theirs, headers, body] of parsers) {
        const seen = await within(compare(server, ours, theirs, { headers, body }, before), 'an answer, not an uncaught exception')
        assert.equal(seen.error?.status, 400)
        assert.equal(seen.error?.type, 'entity.parse.failed')
        assert.match(seen.error?.message ?? '', /body/)
      }
    }
  })
})

describe('error order when a request has several faults', () => {
  it('a refused charset comes before a refused encoding', async () => {
    await compare(server, json(), bodyParser.json(), { headers: { 'content-type': 'application/json; charset=latin1', 'content-encoding': 'lzma' }, body: 'x' })
  })

  it('an unknown encoding comes before an oversize Content-Length', async () => {
    await compare(server, raw({ limit: 1 }), bodyParser.raw({ limit: 1 }), { headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'lzma' }, body: 'xyz' })
  })

  it('without verify, an oversize Content-Length comes before an unknown charset', async () => {
    await compare(server, text({ limit: 1 }), bodyParser.text({ limit: 1 }), { headers: { 'content-type': 'text/plain; charset=bogus' }, body: 'xyz' })
  })

  it('with verify, an unknown charset comes before an oversize Content-Length', async () => {
    const verify = (): void => {}
    await compare(server, text({ limit: 1, verify }), bodyParser.text({ limit: 1, verify }), { headers: { 'content-type': 'text/plain; charset=bogus' }, body: 'xyz' })
  })
})

describe('BodyErrorType', () => {
  it('lists every type the parsers raise', () => {
    const all = {
      'charset.unsupported': true,
      'encoding.unsupported': true,
      'entity.parse.failed': true,
      'entity.too.large': true,
      'entity.verify.failed': true,
      'parameters.too.many': true,
      'querystring.parse.rangeError': true,
      'request.aborted': true,
      'request.size.invalid': true,
      'stream.encoding.set': true,
      'stream.not.readable': true
    } satisfies Record<BodyErrorType, true>
    assert.equal(Object.keys(all).length, 11)
  })
})
