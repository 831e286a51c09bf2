// The predefined formats, registered through the public `format()`.
import type { ServerResponse } from 'node:http'
import { declareUses, parseFormat } from './compile.js'
import type { TokenCall, Unwrapping } from './compile.js'
import { compileJson, JSON_FORMAT } from './json.js'
import { headersSent } from './tokens.js'

type Format = string | ((tokens: never, req: never, res: ServerResponse) => unknown)
type Compile = (format: string) => (tokens: never, req: never, res: ServerResponse) => string

/** The predefined format strings, as morgan 1.12 defines them. */
export const FORMATS: Readonly<Record<string, string>> = {
  combined: ':remote-addr - :remote-user [:date[clf]] ":method :url HTTP/:http-version" :status :res[content-length] ":referrer" ":user-agent"',
  common: ':remote-addr - :remote-user [:date[clf]] ":method :url HTTP/:http-version" :status :res[content-length]',
  // morgan's legacy default: `combined` with the date in the web format. Deprecated there too.
  default: ':remote-addr - :remote-user [:date] ":method :url HTTP/:http-version" :status :res[content-length] ":referrer" ":user-agent"',
  short: ':remote-addr :remote-user :method :url HTTP/:http-version :status :res[content-length] - :response-time ms',
  tiny: ':method :url :status :res[content-length] - :response-time ms'
}

/** The ANSI colour of a status: red 5xx, yellow 4xx, cyan 3xx, green 2xx, none otherwise. */
export function statusColor (status: number | undefined): number {
  if (status === undefined) return 0
  return status >= 500 ? 31 : status >= 400 ? 33 : status >= 300 ? 36 : status >= 200 ? 32 : 0
}

/**
 * The dev format: `:status` coloured by class, each colour's format compiled once. With
 * NO_COLOR set to a non-empty value when the module loads (https://no-color.org), as in morgan,
 * a plain format without escape sequences, compiled: `logger.dev` is a function either way, as
 * `morgan.dev` is.
 */
export function devFormat (compile: Compile, noColor: boolean): Format {
  if (noColor) return compile(':method :url :status :response-time ms - :res[content-length]')
  const byColor = new Map<number, (tokens: never, req: never, res: ServerResponse) => string>()
  const dev = function developmentFormatLine (tokens: never, req: never, res: ServerResponse): string {
    const color = statusColor(headersSent(res) ? res.statusCode : undefined)
    let fn = byColor.get(color)
    if (fn === undefined) {
      fn = compile('\x1b[0m:method :url \x1b[' + String(color) + 'm:status\x1b[0m :response-time ms - :res[content-length]\x1b[0m')
      byColor.set(color, fn)
    }
    return fn(tokens, req, res as never)
  }
  // Every colour's format calls the same tokens.
  const calls = parseFormat(':method :url :status :response-time :res[content-length]').filter((part): part is TokenCall => typeof part !== 'string')
  return declareUses(dev, calls)
}

/** Registers every predefined format through `format`. */
export function registerFormats (format: (name: string, fmt: Format) => unknown, compile: Compile, unwrapped: Unwrapping): void {
  for (const name of Object.keys(FORMATS)) format(name, FORMATS[name] as string)
  format('dev', devFormat(compile, Boolean(process.env.NO_COLOR)))
  format('json', compileJson(JSON_FORMAT, unwrapped) as unknown as Format)
}
