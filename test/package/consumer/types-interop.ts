// Type-level drop-in check for `import x from` with esModuleInterop (CommonJS output, node10
// resolution through typesVersions) and for bundlers (module preserve): the type names of
// @types/morgan's and @types/body-parser's namespaces, and foyer's own, on the default imports.
import logger from 'foyer/logger'
import bodyParser from 'foyer/body'
import type { IncomingMessage, ServerResponse } from 'node:http'

const format: logger.FormatFn<IncomingMessage, ServerResponse> = (tokens, req, res) => `${tokens.method(req, res)} ${tokens.url(req, res)}`
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

export { bodyNames, errorHandler, format, indexed, loggerNames, morgan }
