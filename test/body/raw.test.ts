import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { IncomingMessage, ServerResponse } from 'node:http'
import { PassThrough } from 'node:stream'
import bodyParser from 'body-parser'
import { raw } from '../../src/body/index.js'
import { compare, send, startBodyServer, within } from '../helpers/body-server.js'
import { request, startServer } from '../helpers/server.js'
import type { BodyServer } from '../helpers/body-server.js'

type WithBody = IncomingMessage & { body?: unknown }

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

  it('takes a body node:http read in one piece as that piece, whose bytes are its own', async () => {
    const body = randomBytes(1000)
    const read: { piece: Buffer | undefined } = { piece: undefined }
    const kept: Array<{ body: unknown, verified: Buffer | undefined }> = []
    let verified: Buffer | undefined
    const verify = (_req: unknown, _res: unknown, buf: Buffer): void => { verified = buf }
    for (const mw of [raw(), raw({ verify })]) {
      const path = server.mount((req: WithBody, res: ServerResponse, next: (err?: unknown) => void) => {
        mw(req, res, (err?: unknown) => {
          kept.push({ body: req.body, verified })
          next(err)
        })
      }, (req) => { req.on('data', (chunk: Buffer) => { read.piece = chunk }) })
      read.piece = undefined
      verified = undefined
      const seen = await send(server, path, { headers: OCTETS, body })
      assert.deepEqual(seen.body, { hex: body.toString('hex') })
      // node:http copies each piece of a body out of the connection's read buffer
      const piece = read.piece as Buffer | undefined
      assert.ok(piece !== undefined && piece.byteOffset === 0 && piece.byteLength === piece.buffer.byteLength, 'the body came in one piece of its own')
      assert.equal(kept.at(-1)?.body, piece, 'req.body is the piece, not a copy of it')
    }
    assert.equal(kept[1]?.verified, kept[1]?.body, 'verify is given req.body')
  })

  it('copies a body a request made by hand was given, as body-parser does', async () => {
    // as a serverless adapter or a test injector under Express fills a request (on a stand-in for
    // a connection), or a middleware hands on a body it read itself (on the connection itself): a
    // Buffer its maker still holds, pushed as the whole body
    const outcomes: Array<Promise<string[]>> = []
    const { port, close } = await startServer((original, res) => {
      original.resume()
      outcomes.push(new Promise<string[]>((resolve) => {
        original.on('end', () => {
          const seen: string[] = []
          const parseAll = async (): Promise<void> => {
            for (const socket of [new PassThrough(), original.socket]) {
              for (const parser of [raw(), raw({ verify: () => {} })]) {
                const given = Buffer.alloc(5000, 'a')
                assert.equal(given.byteLength, given.buffer.byteLength, 'a Buffer that has its memory to itself')
                const req = new IncomingMessage(socket as never) as WithBody
                req.headers = { 'content-type': 'application/octet-stream', 'content-length': String(given.length) }
                // (read whole: node closes the connection under a request destroyed unfinished)
                req.complete = true
                req.push(given)
                req.push(null)
                await new Promise<void>((resolve, reject) => {
                  parser(req, new ServerResponse(req), (err?: unknown) => { if (err === undefined) resolve(); else reject(err instanceof Error ? err : new Error(String(err))) })
                })
                given.fill('z')
                seen.push(req.body === given ? 'the same Buffer' : Buffer.isBuffer(req.body) ? req.body.toString('latin1', 0, 4) : typeof req.body)
              }
            }
          }
          parseAll().catch((err: unknown) => { seen.push(String(err)) }).finally(() => {
            res.end()
            resolve(seen)
          })
        })
      }))
    })
    try {
      await request(port, { method: 'POST', path: '/', headers: OCTETS, body: 'x' })
      assert.deepEqual(await within(outcomes[0] as Promise<string[]>, 'the parsers call next'), ['aaaa', 'aaaa', 'aaaa', 'aaaa'])
    } finally {
      await close()
    }
  })

  it('copies a body a middleware passed on through a push() of its own, from a buffer it reuses', async () => {
    // a middleware transforming the body on its way in: node:http's parser pushes each piece
    // through the request's push(), which hands on the piece made in the middleware's own buffer
    // (as long as the body: a piece with the whole of its memory)
    const scratch = Buffer.alloc('hello'.length)
    const upper = (req: IncomingMessage): void => {
      const push = req.push
      req.push = function (this: IncomingMessage, chunk: unknown, encoding?: BufferEncoding): boolean {
        if (!Buffer.isBuffer(chunk)) return push.call(this, chunk, encoding)
        chunk.copy(scratch)
        for (let i = 0; i < chunk.length; i++) scratch[i] = (scratch[i] as number) & 0xdf
        return push.call(this, scratch.subarray(0, chunk.length), encoding)
      }
    }
    const seen: string[] = []
    for (const mw of [raw(), raw({ verify: () => {} })]) {
      const path = server.mount((req: WithBody, res: ServerResponse, next: (err?: unknown) => void) => {
        mw(req, res, (err?: unknown) => {
          scratch.fill('z')
          seen.push(Buffer.isBuffer(req.body) ? req.body.toString('latin1') : typeof req.body)
          next(err)
        })
      }, upper)
      await send(server, path, { headers: OCTETS, body: 'hello' })
    }
    assert.deepEqual(seen, ['HELLO', 'HELLO'])
  })

  it('hands verify null for the encoding', async () => {
    const encodings: unknown[] = []
    const verify = (_req: unknown, _res: unknown, _buf: Buffer, encoding: null): void => { encodings.push(encoding) }
    await send(server, server.mount(raw({ verify })), { headers: OCTETS, body: 'x' })
    assert.deepEqual(encodings, [null])
  })
})
