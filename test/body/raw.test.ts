import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import bodyParser from 'body-parser'
import { raw } from '../../src/body/index.js'
import { compare, send, startBodyServer } from '../helpers/body-server.js'
import type { BodyServer } from '../helpers/body-server.js'

const OCTETS = { 'content-type': 'application/octet-stream' }

let server: BodyServer
before(async () => { server = await startBodyServer() })
after(async () => { await server.close() })

describe('raw()', () => {
  it('reads the body into req.body as a Buffer, byte for byte', async () => {
    const body = randomBytes(5000)
    const seen = await compare(server, raw(), bodyParser.raw(), { headers: OCTETS, body })
    assert.deepEqual(seen.body, { hex: body.toString('hex') })
  })

  it('joins a body sent in many chunks', async () => {
    const chunks = Array.from({ length: 20 }, (_, i) => Buffer.from([i, 255 - i]))
    const seen = await compare(server, raw(), bodyParser.raw(), { headers: OCTETS, body: chunks })
    assert.deepEqual(seen.body, { hex: Buffer.concat(chunks).toString('hex') })
  })

  it('gives an empty Buffer for an empty body', async () => {
    const seen = await compare(server, raw(), bodyParser.raw(), { headers: OCTETS, body: '' })
    assert.deepEqual(seen.body, { hex: '' })
  })

  it('ignores the charset parameter entirely, unknown names included', async () => {
    const seen = await compare(server, raw(), bodyParser.raw(), { headers: { 'content-type': 'application/octet-stream; charset=bogus' }, body: 'x' })
    assert.deepEqual(seen.body, { hex: '78' })
  })

  it('skips other types by default and takes them with type', async () => {
    const headers = { 'content-type': 'application/vnd.custom-type' }
    assert.deepEqual((await compare(server, raw(), bodyParser.raw(), { headers, body: 'x' })).body, { undefined: true })
    const seen = await compare(server, raw({ type: 'application/vnd.custom-type' }), bodyParser.raw({ type: 'application/vnd.custom-type' }), { headers, body: 'x' })
    assert.deepEqual(seen.body, { hex: '78' })
  })

  it('hands verify null for the encoding', async () => {
    const encodings: unknown[] = []
    const verify = (_req: unknown, _res: unknown, _buf: Buffer, encoding: null): void => { encodings.push(encoding) }
    await send(server, server.mount(raw({ verify })), { headers: OCTETS, body: 'x' })
    assert.deepEqual(encodings, [null])
  })
})
