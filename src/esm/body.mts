// ESM entry of `foyer/body`: the same parsers `require('foyer/body')` returns, and the type names
// its declarations carry (foyer's and @types/body-parser's), for `import * as`.
import type { IncomingMessage, ServerResponse } from 'node:http'
import bodyParser from '../entries/body.js'

export { json, raw, text, urlencoded } from '../body/index.js'
export type { BodyError, BodyErrorType, BodyMiddleware, BodyOptions, BodyParser, JsonOptions, RawOptions, TextOptions, UrlencodedOptions } from '../body/index.js'
export type { JsonOptions as OptionsJson, TextOptions as OptionsText, UrlencodedOptions as OptionsUrlencoded } from '../body/index.js'
/** @types/body-parser's name for the options every parser takes (`verify` gets null from `raw()`). */
export type Options<Req = IncomingMessage, Res = ServerResponse> = bodyParser.Options<Req, Res>
export default bodyParser

// What require() gives when it loads this file (require(esm), with the 'import' condition): the
// object of the CommonJS entry, as `require('body-parser')` gives its own, which an app may wrap
// or stub a parser on, rather than this module's read-only namespace. Left out of the
// declarations: TypeScript reads a string as an export's name only from 5.6.
/** @internal */
export { bodyParser as 'module.exports' }
