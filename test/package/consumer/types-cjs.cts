// Type-level drop-in check for CommonJS consumers: the morgan and body-parser idioms compile.
import logger = require('foyer/logger')
import bodyParser = require('foyer/body')
import foyer = require('foyer')
import { compile, format, token } from 'foyer/logger'
import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'

type Mw = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void

logger.token('id', (req: IncomingMessage) => String(req.headers['x-id']))
const combined: Mw = logger('combined', { skip: (_req, res) => res.statusCode < 400 })
const parsers: Mw[] = [
  bodyParser.json({ limit: '1mb', strict: false }),
  bodyParser.urlencoded({ extended: true, parameterLimit: 10 }),
  bodyParser.text({ type: 'text/*' }),
  bodyParser.raw({ type: () => true }),
  foyer.json()
]

// morgan's functions taken off the logger function.
token('named', () => 'named')
format('named', ':named')
const named: Mw = logger(compile(':named'))

// A custom token called through `tokens` in a format function.
const custom: Mw = logger((tokens, req, res) => `${tokens.id(req, res)} ${tokens['user-agent'](req, res)}`)

// A token may give a number or a boolean, which a json line keeps; the built-in tokens give text.
logger.token('bytes-in', (req) => req.socket.bytesRead)
logger.token('cached', (_req, res) => res.getHeader('x-cache') === 'HIT')
const structured: Mw = logger(logger.json({ bytesIn: ':bytes-in', cached: ':cached' }))
const timed: Mw = logger((tokens, req, res) => `${tokens['response-time'](req, res, 0)} ${tokens['total-time'](req, res, 2)} ${tokens.date(req, res, 'iso')}`)
const methodOnly: Mw = logger((tokens, req, res): string | undefined | null => req.url === '/health' ? null : tokens.method(req, res))

// A verify shared by every parser takes the null raw() passes as the encoding.
const saveRawBody = (req: IncomingMessage & { rawBody?: string }, _res: ServerResponse, buf: Buffer, encoding: string | null): void => {
  req.rawBody = buf.toString(encoding === null ? 'latin1' : encoding as BufferEncoding)
}
const saving: Mw[] = [bodyParser.json({ verify: saveRawBody }), bodyParser.urlencoded({ verify: saveRawBody }), bodyParser.raw({ verify: saveRawBody })]

// The README's node:http example: the error a parser passes to next has `status` and `type`.
const parseJson = bodyParser.json({ limit: '1mb' })
const server = createServer((req, res) => {
  parseJson(req, res, (err) => {
    if (err) {
      res.statusCode = err.status ?? 500
      res.end(`${err.type}\n`)
      return
    }
    res.end('ok')
  })
})
function answer (res: ServerResponse, err: foyer.BodyError): void {
  res.statusCode = err.statusCode
  res.end(err.type)
}

// The type names of @types/morgan's and @types/body-parser's namespaces, and foyer's own, on the
// imported function and object.
const formatFn: logger.FormatFn<IncomingMessage, ServerResponse> = (tokens, req, res) => `${tokens.method(req, res)} ${tokens.url(req, res)}`
const loggerOptions: logger.Options<IncomingMessage, ServerResponse> = { immediate: true, stream: process.stderr }
const streamOptions: logger.StreamOptions = process.stdout
const callback: logger.TokenCallbackFn<IncomingMessage, ServerResponse> = (req) => req.url
const indexed = (tokens: logger.TokenIndexer, req: IncomingMessage, res: ServerResponse): string | undefined => tokens.status(req, res)
const morgan: logger.Morgan<IncomingMessage, ServerResponse> = logger.token('callback', callback)
const loggerNames: [logger.Logger, logger.LoggerOptions, logger.LoggerStream, logger.TokenFn] = [logger, loggerOptions, streamOptions, callback]
const bodyOptions: [bodyParser.Options, bodyParser.OptionsJson, bodyParser.OptionsText, bodyParser.OptionsUrlencoded] =
  [{ inflate: false }, { strict: false }, { defaultCharset: 'latin1' }, { extended: true }]
const bodyNames: [bodyParser.BodyParser, bodyParser.JsonOptions, bodyParser.RawOptions, bodyParser.BodyMiddleware] =
  [bodyParser, bodyOptions[1], bodyOptions[0], bodyParser.raw(bodyOptions[0])]
const errorHandler = (err: bodyParser.BodyError): bodyParser.BodyErrorType | string => err.type

// Patterns of @types/morgan's own tests and of code typed against it: a cached compiled format
// whose line is text, middleware slots typed with `next: (err?: Error) => void`, and a `skip`
// written for a narrower request type.
const cache: Record<number, logger.FormatFn | undefined> = {}
logger.format('dev-cached', function devLine (tokens, req, res): string | undefined | null {
  let fn = cache[32]
  if (fn === undefined) fn = cache[32] = logger.compile(':method :url :status')
  return fn(tokens, req, res)
})
const base: logger.FormatFn = logger.compile(':method :url')
const trimmed: Mw = logger((tokens, req, res) => base(tokens, req, res)?.trim())
type ErrorMw = (req: IncomingMessage, res: ServerResponse, next: (err?: Error) => void) => void
const chain: ErrorMw[] = [logger('tiny'), bodyParser.json()]
interface AppRequest extends IncomingMessage { path: string }
const skipping: logger.Options<IncomingMessage, ServerResponse> = { skip: (req: AppRequest, _res: ServerResponse) => req.path === '/health' }
// An object-mode stream may get an object from the format.
const objects: Mw = logger((tokens, req, res) => ({ method: tokens.method(req, res) }), { stream: { write: (_line: string | object) => true, writableObjectMode: true } })

export { answer, bodyNames, chain, combined, custom, errorHandler, formatFn, indexed, loggerNames, methodOnly, morgan, named, objects, parsers, saving, server, skipping, structured, timed, trimmed }
