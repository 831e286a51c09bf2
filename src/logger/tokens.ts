// The built-in tokens, registered through the public `token()` like any user token, so a user
// can override each of them and every value passes through the same escaping.
import type { IncomingMessage, ServerResponse } from 'node:http'
import auth from 'basic-auth'
import { BoundedCache } from '../cache.js'
import { currentDate, formatDuration, formatElapsed } from './clock.js'
import type { StartMark } from './clock.js'
import { markFieldReader, markSafe } from './compile.js'
import { bodyBytes, responseHeader } from './response.js'

/** The fields morgan's users and Express put on a request, which tokens read. */
export interface LoggedRequest extends IncomingMessage, StartMark {
  ip?: string | undefined
  originalUrl?: string | undefined
  _remoteAddress?: string | undefined
}

export type LoggedResponse = ServerResponse & StartMark

// A format string passes the argument as text; a format function calling a token may pass
// anything, which each token takes as morgan's does.
type BuiltinToken = (req: LoggedRequest, res: LoggedResponse, arg?: unknown) => string | undefined

/** Whether the response has started, also for objects that only imitate a ServerResponse. */
export function headersSent (res: ServerResponse): boolean {
  const sent: unknown = res.headersSent
  return typeof sent === 'boolean' ? sent : Boolean((res as { _header?: unknown })._header)
}

/**
 * `req.ip` (Express, with its trust-proxy rules), then the address recorded when the request
 * entered the logger (the socket forgets it once closed), then the socket's. Optional chaining:
 * a request without `connection` (HTTP/2 compatibility objects, test doubles) gives `-`, not a
 * TypeError.
 */
export function remoteAddress (req: LoggedRequest): string | undefined {
  return req.ip || req._remoteAddress || socketAddress(req.connection) || socketAddress(req.socket) || undefined
}

// The peer address of each connection, kept once read: it does not change while the connection
// lives, and reading it again goes through node's socket getters, whose property lookups are
// megamorphic (they serve every kind of socket). Measured under callgrind in the 'combined'
// bench server (instructions per request on the main thread, 40,000 requests after 20,000 of
// warm-up, two runs each): 79,140 and 79,028 reading the socket each time and calling basic-auth
// for `:remote-user` on requests without an Authorization header, 78,741 and 78,519 with this
// map and remoteUser's shortcut below (no logger: 67,675).
const ADDRESSES = new WeakMap<object, string>()

function socketAddress (socket: { remoteAddress?: string | undefined } | null | undefined): string | undefined {
  if (typeof socket !== 'object' || socket === null) return undefined
  let address = ADDRESSES.get(socket)
  if (address === undefined) {
    address = socket.remoteAddress
    if (typeof address === 'string' && address !== '') ADDRESSES.set(socket, address)
  }
  return address
}

function joinHeader (value: number | string | string[] | undefined): string | undefined {
  // Left as a number when it is one: morgan prints a numeric Content-Length of 0 as `-`.
  return Array.isArray(value) ? value.join(', ') : value as string | undefined
}

// The header name of each `:req[...]` argument, lower-cased once rather than on every line: a
// format passes the same few arguments again and again. The name is kept as a property key, which
// V8 stores internalized, so a header lookup with it needs no string-table lookup and comparing it
// with a header name given in code is a pointer comparison. In-process under callgrind,
// lower-casing and comparing the name of `:res[content-length]` had cost about 800 instructions
// per 'combined' line. Bounded (see cache.ts): a format function may pass any argument.
const HEADER_KEYS = new BoundedCache<string>(256, 256)

function lowerCaseKey (field: string): string {
  return Object.keys({ [field.toLowerCase()]: 0 })[0] as string
}

function headerKey (field: string): string {
  return HEADER_KEYS.get(field, lowerCaseKey)
}

function requestField (req: IncomingMessage, _res: unknown, key: string): string | undefined {
  return joinHeader(req.headers[key])
}

/**
 * The key of a `:res[...]` argument in a compiled format: the name as written, which the
 * response's getHeader is asked for, as morgan asks it (node:http's lower-cases it; a response of
 * another kind may not), internalized as the keys of `:req[...]` are (node:http's getHeader
 * lower-cases it to itself when it is in lower case already, as the predefined formats write it).
 */
function responseKey (field: string): string {
  return Object.keys({ [field]: 0 })[0] as string
}

function responseField (_req: unknown, res: ServerResponse, name: string): string | undefined {
  return headersSent(res) ? joinHeader(responseHeader(res, name)) : undefined
}

/** A number as text: a template literal takes V8's number-to-string cache, String() a call. */
function numberText (value: unknown): string {
  return typeof value === 'number' ? `${value}` : String(value)
}

/** `major.minor`; the versions node:http speaks are constants rather than three new strings. */
function httpVersion (major: unknown, minor: unknown): string {
  if (major === 1) {
    if (minor === 1) return '1.1'
    if (minor === 0) return '1.0'
  } else if (major === 2 && minor === 0) {
    return '2.0'
  }
  return numberText(major) + '.' + numberText(minor)
}

/** The user name of Basic authentication; basic-auth is not called for a request without the header. */
function remoteUser (req: LoggedRequest): string | undefined {
  const headers: unknown = req.headers
  if (typeof headers === 'object' && headers !== null && (headers as Record<string, unknown>).authorization === undefined) return undefined
  return auth(req)?.name
}

const builtins: Record<string, BuiltinToken> = {
  url: (req) => req.originalUrl || req.url,
  method: (req) => req.method,
  // Any falsy mark (an app may clear it with null or 0) means no time, as in morgan.
  'response-time': (req, res, digits) => {
    if (!req._startAt || !res._startAt) return undefined
    return formatDuration(req._startAt, res._startAt, digits)
  },
  'total-time': (req, res, digits) => {
    if (!req._startAt || !res._startAt) return undefined
    return formatElapsed(req._startAt, digits)
  },
  date: (_req, _res, format) => currentDate(format),
  status: (_req, res) => headersSent(res) ? numberText(res.statusCode) : undefined,
  referrer: (req) => (req.headers.referer || req.headers.referrer) as string | undefined,
  'remote-addr': remoteAddress,
  'remote-user': remoteUser,
  pid: () => numberText(process.pid),
  'http-version': (req) => httpVersion(req.httpVersionMajor, req.httpVersionMinor),
  'user-agent': (req) => req.headers['user-agent'],
  // A missing argument (`:req` alone) gives `-`; morgan threw from inside the finish event. A
  // header name that is not a string throws, as in morgan, except before the response's headers
  // are sent, where morgan's :res gives `-` without reading it.
  req: (req, _res, field) => field === undefined ? undefined : requestField(req, undefined, headerKey(field as string)),
  res: (req, res, field) => field === undefined || !headersSent(res) ? undefined : responseField(req, res, field as string),
  // Not in morgan. Counted only for loggers whose format reads it (see hookBodyBytes).
  'res-bytes': (_req, res) => {
    const bytes = bodyBytes(res)
    return bytes === undefined ? undefined : numberText(bytes)
  }
}

// Built-in tokens whose text is made here from numbers and constants: never anything to escape.
// Not :date and :pid, whose text comes from what a test may stub (Date's methods, process.pid):
// their values are checked as any token's, at little cost, since a value equal to the last one
// found clean needs no check (the same date text for a second, the same pid).
const SAFE_BUILTINS = ['response-time', 'total-time', 'res-bytes']

/** Registers every built-in token through `token`. */
export function registerTokens (token: (name: string, fn: BuiltinToken) => unknown): void {
  for (const name of SAFE_BUILTINS) markSafe(builtins[name] as BuiltinToken)
  markFieldReader(builtins.req as BuiltinToken, { key: headerKey, read: requestField })
  markFieldReader(builtins.res as BuiltinToken, { key: responseKey, read: responseField })
  for (const name of Object.keys(builtins)) token(name, builtins[name] as BuiltinToken)
}
