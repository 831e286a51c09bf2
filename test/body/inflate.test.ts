import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import zlib from 'node:zlib'
import bodyParser from 'body-parser'
import { json, raw, text, urlencoded } from '../../src/body/index.js'
import { rawSocket } from '../helpers/server.js'
import { compare, requestHead, send, startBodyServer } from '../helpers/body-server.js'
import type { BodyServer } from '../helpers/body-server.js'

const JSON_HEADERS = { 'content-type': 'application/json' }
const DOC = '{"name":"foyer","list":[1,2,3],"text":"' + 'compressible '.repeat(50) + '"}'

const zstdCompress = (zlib as { zstdCompressSync?: (buf: Buffer) => Buffer }).zstdCompressSync

let server: BodyServer
before(async () => { server = await startBodyServer() })
after(async () => { await server.close() })

const delay = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

describe('inflation', () => {
  const encodings: Array<[string, (buf: Buffer) => Buffer]> = [
    ['gzip', zlib.gzipSync],
    ['deflate', zlib.deflateSync],
    ['br', zlib.brotliCompressSync]
  ]
  for (const [encoding, compress] of encodings) {
    it(`inflates a ${encoding} body, as body-parser does`, async () => {
      const body = compress(Buffer.from(DOC))
      const seen = await compare(server, json(), bodyParser.json(), { headers: { ...JSON_HEADERS, 'content-encoding': encoding }, body })
      assert.deepEqual(seen.body, JSON.parse(DOC))
    })

    it(`inflates a ${encoding} body for text, raw and urlencoded too, as body-parser does`, async () => {
      const form = 'name=foyer&text=' + 'compressible+'.repeat(50)
      const parsers: Array<[string, unknown, unknown, string, string, unknown]> = [
        ['text', text(), bodyParser.text(), 'text/plain', DOC, DOC],
        ['raw', raw(), bodyParser.raw(), 'application/octet-stream', DOC, { hex: Buffer.from(DOC).toString('hex') }],
        ['urlencoded', urlencoded(), bodyParser.urlencoded(), 'application/x-www-form-urlencoded', form, { name: 'foyer', text: 'compressible '.repeat(50) }]
      ]
      for (const [name, ours, theirs, type, plain, parsed] of parsers) {
        const seen = await compare(server, ours, theirs, { headers: { 'content-type': type, 'content-encoding': encoding }, body: compress(Buffer.from(plain)) })
        assert.deepEqual(seen.body, parsed, name)
      }
    })
  }

  it('reads the encoding in any case', async () => {
    const seen = await compare(server, json(), bodyParser.json(), { headers: { ...JSON_HEADERS, 'content-encoding': 'GZip' }, body: zlib.gzipSync(DOC) })
    assert.deepEqual(seen.body, JSON.parse(DOC))
  })

  it('treats x-gzip as gzip (RFC 9110 8.4.1.3)', async () => {
    const seen = await send(server, server.mount(json()), { headers: { ...JSON_HEADERS, 'content-encoding': 'x-gzip' }, body: zlib.gzipSync(DOC) })
    assert.deepEqual(seen.body, JSON.parse(DOC))
  })

  it('reads identity as no encoding', async () => {
    const seen = await compare(server, json(), bodyParser.json(), { headers: { ...JSON_HEADERS, 'content-encoding': 'identity' }, body: DOC })
    assert.deepEqual(seen.body, JSON.parse(DOC))
  })

  it('inflates a body sent in many small chunks', async () => {
    const packed = zlib.gzipSync(DOC)
    const chunks: Buffer[] = []
    for (let i = 0; i < packed.length; i += 7) chunks.push(packed.subarray(i, i + 7))
    const seen = await compare(server, text({ type: '*/*' }), bodyParser.text({ type: '*/*' }), { headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, body: chunks })
    assert.equal(seen.body, DOC)
  })

  it('hands verify the inflated bytes', async () => {
    const seenBytes: string[] = []
    const verify = (_req: unknown, _res: unknown, buf: Buffer): void => { seenBytes.push(buf.toString()) }
    await send(server, server.mount(json({ verify })), { headers: { ...JSON_HEADERS, 'content-encoding': 'deflate' }, body: zlib.deflateSync(DOC) })
    assert.deepEqual(seenBytes, [DOC])
  })

  if (zstdCompress !== undefined) {
    it('inflates zstd where Node.js has it', async () => {
      const seen = await compare(server, json(), bodyParser.json(), { headers: { ...JSON_HEADERS, 'content-encoding': 'zstd' }, body: zstdCompress(Buffer.from(DOC)) })
      assert.deepEqual(seen.body, JSON.parse(DOC))
    })
  } else {
    it('answers zstd with a 415 where Node.js lacks it, as body-parser does', async () => {
      const seen = await compare(server, json(), bodyParser.json(), { headers: { ...JSON_HEADERS, 'content-encoding': 'zstd' }, body: 'x' })
      assert.equal(seen.error?.status, 415)
      assert.equal(seen.error?.message, 'unsupported content encoding "zstd"')
    })
  }
})

describe('inflate: false', () => {
  it('refuses an encoded body with a 415 encoding.unsupported', async () => {
    const seen = await send(server, server.mount(json({ inflate: false })), { headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' }, body: zlib.gzipSync(DOC) })
    assert.equal(seen.error?.status, 415)
    assert.equal(seen.error?.type, 'encoding.unsupported')
    assert.equal(seen.error?.message, 'content encoding unsupported')
    // body-parser sets `encoding`; SPEC 7 calls it `charset`: both hold the encoding
    assert.deepEqual(seen.error?.props, { encoding: 'gzip', charset: 'gzip' })
  })

  it('still reads identity bodies', async () => {
    const seen = await compare(server, json({ inflate: false }), bodyParser.json({ inflate: false }), { headers: { ...JSON_HEADERS, 'content-encoding': 'identity' }, body: DOC })
    assert.deepEqual(seen.body, JSON.parse(DOC))
  })

  it('refuses any other encoding too, unknown ones included', async () => {
    const seen = await send(server, server.mount(raw({ inflate: false })), { headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'compress' }, body: 'x' })
    assert.equal(seen.error?.message, 'content encoding unsupported')
  })
})

describe('unsupported encodings', () => {
  for (const encoding of ['compress', 'gzip, gzip', 'gzip, identity', 'snappy', 'Deflate, BR']) {
    it(`415 encoding.unsupported for ${JSON.stringify(encoding)}, as body-parser reports it`, async () => {
      const seen = await compare(server, json(), bodyParser.json(), { headers: { ...JSON_HEADERS, 'content-encoding': encoding }, body: zlib.gzipSync(DOC) })
      assert.equal(seen.error?.status, 415)
      assert.equal(seen.error?.type, 'encoding.unsupported')
      assert.equal(seen.error?.message, `unsupported content encoding "${encoding.toLowerCase()}"`)
      assert.deepEqual(seen.error?.props, { encoding: encoding.toLowerCase() })
    })
  }
})

describe('corrupt compressed data', () => {
  const good = zlib.gzipSync(DOC)
  const cases: Array<[string, string, Buffer]> = [
    ['truncated gzip', 'gzip', good.subarray(0, good.length - 10)],
    ['not gzip at all', 'gzip', Buffer.from('this is not gzip')],
    ['garbage deflate', 'deflate', Buffer.from('nope')],
    ['raw deflate without the zlib wrapper', 'deflate', zlib.deflateRawSync(DOC)],
    ['garbage brotli', 'br', Buffer.from([0xff, 0xff, 0xff, 0xff])]
  ]
  for (const [name, encoding, body] of cases) {
    it(`400 for ${name}, with zlib's message and code as body-parser gives them`, async () => {
      const headers = { ...JSON_HEADERS, 'content-encoding': encoding }
      const ours = await send(server, server.mount(json()), { headers, body })
      const theirs = await send(server, server.mount(bodyParser.json()), { headers, body })
      assert.equal(ours.error?.status, 400)
      assert.equal(ours.error?.expose, true)
      assert.equal(ours.error?.message, theirs.error?.message)
      assert.equal(ours.error?.props['code'], theirs.error?.props['code'])
      // body-parser leaves `type` unset here; foyer gives every error a type
      assert.equal(theirs.error?.type, undefined)
      assert.equal(ours.error?.type, 'entity.parse.failed')
      assert.equal(ours.listeners, 0)
    })
  }
})

describe('limit on inflated bytes', () => {
  it('413 when the inflated body passes the limit, however small the compressed one', async () => {
    const inflated = Buffer.alloc(300 * 1024, 0x20)
    const body = zlib.gzipSync(inflated)
    assert.ok(body.length < 2048)
    const seen = await send(server, server.mount(raw()), { headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' }, body })
    assert.equal(seen.error?.type, 'entity.too.large')
    assert.equal(seen.error?.props['limit'], 102400)
    assert.ok((seen.error?.props['received'] as number) > 102400)
    assert.equal(seen.listeners, 0)
  })

  it('stops a bomb at the limit: 16 MiB of zeros never get inflated whole', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(16 * 1024 * 1024), { level: 9 })
    const path = server.mount(raw({ limit: '1mb' }))
    const before = process.memoryUsage().arrayBuffers
    const seen = await send(server, path, { headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' }, body: bomb })
    assert.equal(seen.error?.type, 'entity.too.large')
    const received = seen.error?.props['received'] as number
    assert.ok(received > 1024 * 1024 && received < 2 * 1024 * 1024, `stopped near the limit, at ${received}`)
    assert.ok(process.memoryUsage().arrayBuffers - before < 12 * 1024 * 1024, 'memory stayed well under the inflated size')
  })

  it('does not apply the declared Content-Length to encoded bodies (it counts compressed bytes)', async () => {
    const body = zlib.gzipSync(DOC)
    const seen = await compare(server, json({ limit: DOC.length + 10 }), bodyParser.json({ limit: DOC.length + 10 }), { headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' }, body })
    assert.deepEqual(seen.body, JSON.parse(DOC))
  })
})

describe('aborted encoded bodies', () => {
  it('400 request.aborted when the client closes mid-way through a gzip body', async () => {
    const path = server.mount(json())
    const observed = server.observe(path)
    const packed = zlib.gzipSync(DOC)
    const socket = await rawSocket(server.port)
    socket.write(requestHead(path, { ...JSON_HEADERS, 'content-encoding': 'gzip', 'content-length': packed.length }))
    socket.write(packed.subarray(0, 20))
    await delay(50)
    socket.destroy()
    const seen = await observed
    assert.equal(seen.error?.type, 'request.aborted')
    assert.equal(seen.error?.props['received'], 20)
    assert.equal(seen.listeners, 0)
  })
})
