// Type-level drop-in check for ESM consumers, including the public option types.
import logger, { compile, format, json as jsonFormat, token } from 'foyer/logger'
import * as loggerModule from 'foyer/logger'
import bodyParser, { json, urlencoded } from 'foyer/body'
import * as bodyModule from 'foyer/body'
import { logger as named, readJson, readUrlencoded } from 'foyer'
import type { BodyError, BodyErrorType, JsonOptions, LoggerOptions, LoggerStream, NodeRequest, UrlencodedOptions } from 'foyer'
import { createWriteStream } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer as createHttp2Server } from 'node:http2'
import { Writable } from 'node:stream'

const loggerOptions: LoggerOptions = { immediate: true }
const jsonOptions: JsonOptions = { limit: 1024, reviver: (_key, value: unknown) => value }
const formOptions: UrlencodedOptions = { extended: false }
// A reviver annotated for the values it expects, or written as a method.
const annotatedReviver = json({ reviver: (_key: string, value: string) => value })
const methodReviver = json({ reviver (key, value) { return key.startsWith('_') ? undefined : value } })
const a = logger('dev', loggerOptions)
const b = named(':method :url')
const c = json(jsonOptions)
const d = urlencoded(formOptions)
const e: Promise<{ id: number } | undefined> = readJson<{ id: number }>(new Request('http://localhost/', { method: 'POST', body: '{}' }), { limit: 1024 })

// A reader's rejection is the error the middleware would pass to next: a BodyError.
async function readOrAnswer (req: IncomingMessage): Promise<[number, string]> {
  try {
    await readJson(req)
    return [200, 'ok']
  } catch (err) {
    const refused = err as BodyError
    const limit: number | undefined = refused.limit
    const received: number | undefined = refused.received
    const expected: number | null | undefined = refused.expected
    const body: string | Buffer | undefined = refused.body
    void [limit, received, expected, body, refused.charset, refused.encoding, refused.length, refused.code]
    return [refused.status, refused.expose ? refused.message : refused.type]
  }
}
const everyType: BodyError['type'] = 'entity.too.large' satisfies BodyErrorType
const ownType: BodyError['type'] = 'rate.limited'

// The body's type given with the request's, which then types `req` in `type` and `verify`; a
// middleware's verify given to a reader of any Node.js request; a reader chosen at run time; a
// reader passed through a generic wrapper, its type parameters kept.
async function readTyped (req: IncomingMessage, request: Request, nodeRequest: NodeRequest, form: boolean): Promise<unknown[]> {
  const verifyForMiddleware = (_req: IncomingMessage, res: ServerResponse, buf: Buffer): void => { if (buf.length === 0) res.setHeader('x-empty', '1') }
  const read = form ? readUrlencoded : readJson
  const logged = <A extends unknown[], V>(fn: (...args: A) => Promise<V>) => async (...args: A): Promise<V> => await fn(...args)
  const readJsonLogged = logged(readJson)
  const item: { id: number } | undefined = await readJsonLogged<{ id: number }, IncomingMessage>(req)
  return [
    item,
    await readJson<{ id: number }, IncomingMessage>(req, { type: (r) => r.headers['content-type'] === 'application/json' }),
    await readJson<{ id: number }, Request>(request, { type: (r) => r.headers.get('content-type') === 'application/json' }),
    // @ts-expect-error a reader has no response to give verify for a Fetch Request
    await readJson<{ id: number }, Request>(request, { verify (_r, res: ServerResponse) { res.setHeader('x-seen', '1') } }),
    await readJson(nodeRequest, { verify: verifyForMiddleware }),
    await readUrlencoded(nodeRequest, { verify: verifyForMiddleware }),
    await read(req)
  ]
}

// Options objects shared between parsers, as apps keep them: a common defaultCharset (a string
// once the object is not a literal in the call), and text() options given to raw().
const sharedOptions = { limit: '1mb', defaultCharset: 'utf-8' }
const sharedForm = urlencoded({ ...sharedOptions, extended: true })
const textLimits: bodyParser.OptionsText = { limit: '5mb', inflate: false }
const rawLimits = bodyParser.raw(textLimits)

// The parsers on node:http2's compatibility API.
const http2Server = createHttp2Server((req, res) => { json()(req, res, () => { res.end() }) })

// Options that may be undefined, under exactOptionalPropertyTypes, verify and reviver included.
const maybeVerify = process.env.VERIFY === undefined ? undefined : (_req: IncomingMessage, _res: ServerResponse, buf: Buffer): void => { if (buf.length === 0) throw new Error('empty') }
const maybeOptions = json({ limit: process.env.LIMIT, verify: maybeVerify, reviver: process.env.REVIVE === undefined ? undefined : (_key, value) => value })

// morgan's named exports, imported or through `import * as`.
token('named', () => 'named')
format('named', ':named')
loggerModule.token('through-module', (req) => req.url).format('through-module', ':through-module')
const h = logger(compile(':named :through-module'))
const i = loggerModule.default(loggerModule.compile(':named'))
// and foyer's json(), which the CommonJS entry's types also let code import by name
const structured = logger(jsonFormat({ status: ':status', url: ':url' }))

// Streams: a writer's line is a string (the winston idiom), and every kind of stream still fits.
declare const winston: { info: (message: string) => void }
const streams: LoggerStream[] = [
  { write: (message) => winston.info(message.trim()) },
  { write: (line: string) => line.length },
  { writableObjectMode: true, write (entry: string | object) { return entry } },
  createWriteStream('access.log', { flags: 'a' }),
  process.stdout,
  new Writable({ objectMode: true, write (_entry, _encoding, done) { done() } })
]
class WinstonStream implements LoggerStream {
  write (line: string): void { winston.info(line) }
}
const f = logger('combined', { stream: { write: (message) => winston.info(message.trim()) } })
const g = logger('combined', { stream: new WinstonStream() })

export { a, annotatedReviver, b, c, d, e, everyType, f, g, h, http2Server, i, maybeOptions, structured, methodReviver, ownType, rawLimits, readOrAnswer, readTyped, sharedForm, streams }

// The type names of @types/morgan's and @types/body-parser's namespaces, and foyer's own, on the
// default imports and on `import * as`.
export type DefaultImportNames = [
  logger.FormatFn<IncomingMessage, ServerResponse>, logger.Options<IncomingMessage, ServerResponse>, logger.StreamOptions,
  logger.TokenCallbackFn<IncomingMessage, ServerResponse>, logger.TokenIndexer<IncomingMessage, ServerResponse>,
  logger.Morgan<IncomingMessage, ServerResponse>, logger.Logger, logger.LoggerOptions, logger.LoggerStream, logger.TokenFn,
  bodyParser.Options, bodyParser.OptionsJson, bodyParser.OptionsText, bodyParser.OptionsUrlencoded, bodyParser.BodyParser,
  bodyParser.BodyError, bodyParser.BodyErrorType, bodyParser.BodyMiddleware, bodyParser.JsonOptions
]
export type StarImportNames = [
  loggerModule.FormatFn<IncomingMessage, ServerResponse>, loggerModule.Options<IncomingMessage, ServerResponse>, loggerModule.StreamOptions,
  loggerModule.TokenCallbackFn<IncomingMessage, ServerResponse>, loggerModule.TokenIndexer<IncomingMessage, ServerResponse>,
  loggerModule.Morgan<IncomingMessage, ServerResponse>, loggerModule.Logger, loggerModule.LoggerOptions, loggerModule.LoggerStream, loggerModule.TokenFn,
  bodyModule.Options, bodyModule.OptionsJson, bodyModule.OptionsText, bodyModule.OptionsUrlencoded, bodyModule.BodyParser,
  bodyModule.BodyError, bodyModule.BodyErrorType, bodyModule.BodyMiddleware, bodyModule.JsonOptions
]
