// The public surface: the four factories, body-parser's removed generic, the CommonJS entry, and
// use in Express 5 and Connect apps without casts (this file is type-checked).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import bodyParserReference from 'body-parser'
import connect from 'connect'
import express from 'express'
import type { ErrorRequestHandler, Request, RequestHandler } from 'express'
import { bodyParser, json, raw, text, urlencoded } from '../../src/body/index.js'
import type { BodyErrorType, BodyMiddleware, BodyOptions, JsonOptions, RawOptions, TextOptions, UrlencodedOptions } from '../../src/body/index.js'
import * as root from '../../src/index.js'
import { request, startServer } from '../helpers/server.js'

describe('exports', () => {
  it('json, raw, text and urlencoded each make a (req, res, next) middleware', () => {
    for (const factory of [json, raw, text, urlencoded]) {
      const mw = factory()
      assert.equal(typeof mw, 'function')
      assert.equal(mw.length, 3)
    }
  })

  it('the middlewares and bodyParser have body-parser\'s function names, which Express shows for each layer', () => {
    const names = (make: (f: typeof bodyParserReference) => Array<{ name: string }>): string[] => make(bodyParserReference).map((fn) => fn.name)
    assert.deepEqual([json(), raw(), text(), urlencoded(), bodyParser].map((fn) => fn.name), names((b) => [b.json(), b.raw(), b.text(), b.urlencoded(), b]))
    assert.deepEqual([json(), bodyParser].map((fn) => fn.name), ['jsonParser', 'bodyParser'])
  })

  it('the package root exports the same four', () => {
    assert.equal(root.json, json)
    assert.equal(root.raw, raw)
    assert.equal(root.text, text)
    assert.equal(root.urlencoded, urlencoded)
  })

  it('bodyParser carries the four, and calling it throws body-parser\'s own Error', () => {
    assert.equal(bodyParser.json, json)
    assert.equal(bodyParser.urlencoded, urlencoded)
    let expected: unknown
    try { (bodyParserReference as unknown as () => void)() } catch (err) { expected = err }
    assert.throws(() => bodyParser(), (err: unknown) => {
      assert.ok(err instanceof Error && expected instanceof Error)
      assert.equal(err.constructor, expected.constructor)
      assert.equal(err.message, expected.message)
      return true
    })
  })

  it('the CommonJS entry is that same bodyParser (what require(\'foyer/body\') returns)', async () => {
    const entry = (await import('../../src/entries/body.js')).default
    assert.equal(entry, bodyParser)
    assert.equal(typeof entry.json, 'function')
  })

  it('the option types accept what body-parser users write', () => {
    const base: BodyOptions = { limit: '1mb', inflate: true, type: ['application/json'], verify: (_req, _res, buf, encoding) => { assert.ok(buf.length >= 0 && encoding.length >= 0) } }
    const j: JsonOptions = { ...base, strict: false, reviver: (_key, value) => value, defaultCharset: 'utf-8', onProtoPoisoning: 'remove' }
    const r: RawOptions = { limit: 1024, type: (req: IncomingMessage) => req.headers['x-raw'] !== undefined, verify: (_req, _res, _buf, encoding) => { assert.equal(encoding, null) } }
    const t: TextOptions = { defaultCharset: 'latin1', type: 'text/*' }
    const u: UrlencodedOptions = { extended: true, parameterLimit: 10, depth: 3, charsetSentinel: true, interpretNumericEntities: true, defaultCharset: 'iso-8859-1' }
    const type: BodyErrorType = 'entity.too.large'
    for (const mw of [json(j), raw(r), text(t), urlencoded(u)]) assert.equal(typeof mw, 'function')
    assert.equal(type, 'entity.too.large')
  })
})

describe('in an Express 5 app', () => {
  it('parses bodies for routes and hands errors to the error handler', async () => {
    const app = express()
    // assignable to Express's own types, no casts
    const parseJson: RequestHandler = json({ limit: '1kb' })
    app.post('/json', parseJson, (req, res) => { res.json({ got: req.body as unknown }) })
    app.post('/form', urlencoded({ extended: true, verify: (req: Request) => { assert.equal(typeof req.headers, 'object') } }), (req, res) => { res.json({ got: req.body as unknown }) })
    app.use(text())
    app.post('/text', (req, res) => { res.json({ got: req.body as unknown }) })
    const onError: ErrorRequestHandler = (err: { status: number, type: string }, _req, res, _next) => { res.status(err.status).json({ type: err.type }) }
    app.use(onError)
    const server = await startServer(app)
    try {
      const post = async (path: string, type: string, body: string): Promise<[number, string]> => {
        const reply = await request(server.port, { path, headers: { 'content-type': type }, body })
        return [reply.status, reply.body]
      }
      assert.deepEqual(await post('/json', 'application/json', '{"a":[1]}'), [200, '{"got":{"a":[1]}}'])
      assert.deepEqual(await post('/json', 'application/json', '{"a":'), [400, '{"type":"entity.parse.failed"}'])
      assert.deepEqual(await post('/json', 'application/json', JSON.stringify({ big: 'x'.repeat(2000) })), [413, '{"type":"entity.too.large"}'])
      assert.deepEqual(await post('/form', 'application/x-www-form-urlencoded', 'a[b]=c'), [200, '{"got":{"a":{"b":"c"}}}'])
      assert.deepEqual(await post('/text', 'text/plain', 'hello'), [200, '{"got":"hello"}'])
    } finally {
      await server.close()
    }
  })
})

describe('parsers one after another', () => {
  it('each reads the bodies of its own type when several are mounted at the top level, as with body-parser', async () => {
    const served = async (parsers: { json: typeof json, raw: typeof raw, text: typeof text }): Promise<string[]> => {
      const app = express()
      app.use(parsers.json({ type: 'application/*+json' }))
      app.use(parsers.raw({ type: 'application/vnd.custom' }))
      app.use(parsers.text({ type: 'text/html' }))
      app.post('/', (req: Request, res) => {
        const body: unknown = req.body
        res.send(Buffer.isBuffer(body) ? `a Buffer of ${body.length}` : `${typeof body} ${JSON.stringify(body)}`)
      })
      const server = await startServer(app)
      try {
        const answers: string[] = []
        const sent: Array<[string, string]> = [['application/ld+json', '{"a":1}'], ['application/vnd.custom', 'bytes'], ['text/html', '<p>hi</p>'], ['application/json', '{"a":1}']]
        for (const [type, body] of sent) {
          answers.push((await request(server.port, { headers: { 'content-type': type }, body })).body)
        }
        return answers
      } finally {
        await server.close()
      }
    }
    const theirs = await served(bodyParserReference as unknown as { json: typeof json, raw: typeof raw, text: typeof text })
    assert.deepEqual(theirs, ['object {"a":1}', 'a Buffer of 5', 'string "<p>hi</p>"', 'undefined undefined'])
    assert.deepEqual(await served({ json, raw, text }), theirs)
  })

  /** What an app sees when its error handler passes a parser's error over and a later parser runs. */
  async function afterPassedOver (parsers: { json: (o: { limit: number }) => RequestHandler, text: (o: { type: string, limit: string }) => RequestHandler }, chunked: boolean): Promise<string> {
    const app = express()
    app.use(parsers.json({ limit: 1000 }))
    const passOver: ErrorRequestHandler = (_err, _req, _res, next) => { next() }
    app.use(passOver)
    app.use(parsers.text({ type: '*/*', limit: '1mb' }))
    app.post('/', (req, res) => { res.json({ body: typeof req.body === 'string' ? `a string of ${req.body.length}` : typeof req.body }) })
    const server = await startServer(app)
    try {
      const body = JSON.stringify({ big: 'x'.repeat(5000) })
      const reply = await request(server.port, { headers: { 'content-type': 'application/json' }, body: chunked ? [body.slice(0, 1400), body.slice(1400)] : body })
      return reply.body
    } finally {
      await server.close()
    }
  }

  for (const chunked of [false, true]) {
    it(`a later parser does not read the rest of a body an earlier one refused (${chunked ? 'chunked' : 'Content-Length'}), as with body-parser`, async () => {
      const ours = await afterPassedOver({ json, text }, chunked)
      const theirs = await afterPassedOver(bodyParserReference, chunked)
      assert.equal(theirs, '{"body":"undefined"}')
      assert.equal(ours, theirs)
    })
  }

  it('type and verify see req.body already there (undefined), as with body-parser', async () => {
    const seenBy = async (make: typeof json): Promise<string[]> => {
      const seen: string[] = []
      const mw = make({
        type: (req: IncomingMessage) => { seen.push(`type ${String('body' in req)}`); return true },
        verify: (req: IncomingMessage) => { seen.push(`verify ${String('body' in req)}`) }
      })
      const server = await startServer((req, res) => { mw(req, res, () => { res.end() }) })
      try {
        await request(server.port, { headers: { 'content-type': 'application/json' }, body: '{}' })
      } finally {
        await server.close()
      }
      return seen
    }
    const theirs = await seenBy(bodyParserReference.json as unknown as typeof json)
    assert.deepEqual(theirs, ['type true', 'verify true'])
    assert.deepEqual(await seenBy(json), theirs)
  })
})

describe('in a Connect app', () => {
  it('parses bodies as middleware', async () => {
    const app = connect()
    const mw: connect.NextHandleFunction = raw({ type: '*/*' })
    app.use(mw)
    app.use((req: IncomingMessage, res: ServerResponse) => { res.end(`${String(Buffer.isBuffer((req as IncomingMessage & { body?: unknown }).body))}`) })
    const server = await startServer(app)
    try {
      const reply = await request(server.port, { headers: { 'content-type': 'application/anything' }, body: 'bytes' })
      assert.equal(reply.body, 'true')
    } finally {
      await server.close()
    }
  })

  it('a BodyMiddleware is a plain node:http (req, res, next) function', () => {
    const mw: BodyMiddleware = json()
    const asConnect: (req: IncomingMessage, res: ServerResponse, next: (err?: Error) => void) => void = mw
    assert.equal(asConnect, mw)
  })
})
