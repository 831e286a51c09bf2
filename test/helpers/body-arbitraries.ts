// Random requests for the body parsers: Content-Type (with charsets good, bad and unknown),
// Content-Encoding (with damaged compressed data), framing (Content-Length, chunked or none), the
// split of the body into writes, payloads for each parser, and option records for each parser.
import assert from 'node:assert/strict'
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib'
import fc from 'fast-check'
import iconv from 'iconv-lite'
import type { RequestOptions } from './server.js'

// ---------------------------------------------------------------------------------------------
// Requests

export const MEDIA_TYPES = [
  'application/json', 'application/JSON', 'application/vnd.api+json', 'application/merge-patch+json',
  'text/plain', 'Text/Plain', 'text/html', 'text/csv', 'application/x-www-form-urlencoded',
  'Application/X-WWW-Form-Urlencoded', 'application/octet-stream', 'image/png', 'multipart/form-data',
  'garbage', 'text/', '*/*'
]

// valid, invalid (not allowed by the parser), unsupported (unknown to the decoder), odd casing, quoted
export const CHARSETS = [
  'utf-8', 'UTF-8', 'Utf-8', 'utf8', '"utf-8"', 'utf-16le', 'UTF-16LE', 'utf-16be', 'utf-16', 'ucs-2',
  'utf-32', 'utf-32be', 'iso-8859-1', 'ISO-8859-1', 'latin1', 'windows-1252', 'koi8-r', 'shift_jis', 'gbk',
  'big5', 'utf-7', 'us-ascii', 'ascii', 'binary', 'base64', 'hex', 'utf-', 'utf-8x', 'bogus', '__proto__',
  'constructor', 'toString', 'hasOwnProperty', '""', ''
]

export const JSON_TYPES = ['application/json', 'application/JSON', 'application/vnd.api+json']
export const JSON_CHARSETS = ['utf-8', 'UTF-8', 'utf8', '"utf-8"', 'utf-16le', 'utf-16be', 'utf-16', 'utf-32']
export const RAW_TYPES = ['application/octet-stream', 'Application/Octet-Stream']
export const TEXT_TYPES = ['text/plain', 'Text/Plain']
export const TEXT_CHARSETS = ['utf-8', 'UTF-8', 'utf-16le', 'utf-16', 'iso-8859-1', 'windows-1252', 'koi8-r', 'shift_jis', 'gbk', 'big5', 'utf-7', 'us-ascii', 'binary', 'base64', 'hex']
export const FORM_TYPES = ['application/x-www-form-urlencoded', 'Application/X-WWW-Form-Urlencoded']
export const FORM_CHARSETS = ['utf-8', 'UTF-8', '"utf-8"', 'iso-8859-1', 'ISO-8859-1']

export const headerText = fc.string({ unit: fc.constantFrom(...' \t!#$%&\'*+-.^_`|~0123456789abcxyzABC;=,"/\\()<>@:?[]{}'.split('')), maxLength: 30 })

/**
 * Content-Type values, mostly of the parser's own media types (`own`) with a charset it takes
 * (`good`), else any charset, any other media type, none, or a malformed header.
 */
export function contentType (own: string[], good: string[]): fc.Arbitrary<string | undefined> {
  const withCharset = (types: string[], charsets: string[]): fc.Arbitrary<string> =>
    fc.tuple(fc.constantFrom(...types), fc.constantFrom('; charset=', ';charset=', ' ; CHARSET=', '; foo=bar; charset='), fc.constantFrom(...charsets))
      .map(([type, sep, charset]) => `${type}${sep}${charset}`)
  return fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 1 },
    { arbitrary: fc.constantFrom(...own), weight: 4 },
    { arbitrary: withCharset(own, good), weight: 4 },
    { arbitrary: withCharset(own, CHARSETS), weight: 2 },
    { arbitrary: fc.constantFrom(...MEDIA_TYPES), weight: 1 },
    { arbitrary: withCharset(MEDIA_TYPES, CHARSETS), weight: 1 },
    {
      arbitrary: fc.tuple(fc.constantFrom(...own), fc.constantFrom(...CHARSETS), fc.constantFrom(...CHARSETS))
        .map(([type, a, b]) => `${type}; charset=${a}; charset=${b}`),
      weight: 1
    },
    { arbitrary: fc.tuple(fc.constantFrom(...own), headerText).map(([type, rest]) => `${type};${rest}`), weight: 1 },
    { arbitrary: headerText, weight: 1 }
  )
}

// Content-Encoding as sent. x-gzip is sent to body-parser as gzip, see `referenceRequest`.
export const ENCODINGS = [
  'identity', 'IDENTITY', '', 'gzip', 'GZIP', 'Gzip', 'deflate', 'DEFLATE', 'br', 'BR', 'zstd', 'compress',
  'bogus', 'gzip, gzip', 'gzip,', 'x-gzip', 'X-GZIP'
]
export const contentEncoding = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 4 },
  { arbitrary: fc.constantFrom('gzip', 'deflate', 'br'), weight: 3 },
  { arbitrary: fc.constantFrom(...ENCODINGS), weight: 3 }
)

export type Damage = 'none' | 'truncated' | 'garbage' | 'trailing' | 'flipped' | 'raw-deflate'
export const damage = fc.oneof(
  { arbitrary: fc.constant<Damage>('none'), weight: 6 },
  fc.constantFrom<Damage>('truncated', 'garbage', 'trailing', 'flipped', 'raw-deflate')
)

/** The bytes on the wire for a payload under a Content-Encoding, damaged or not. */
export function encodeBody (payload: Buffer, encoding: string | undefined, harm: Damage, at: number): Buffer {
  const name = (encoding ?? '').toLowerCase()
  let packed: Buffer
  if (name === 'gzip' || name === 'x-gzip') packed = gzipSync(payload)
  else if (name === 'deflate') packed = harm === 'raw-deflate' ? deflateRawSync(payload) : deflateSync(payload)
  else if (name === 'br') packed = brotliCompressSync(payload)
  else return payload
  switch (harm) {
    case 'truncated': return packed.subarray(0, at % packed.length)
    case 'garbage': return Buffer.from('this is not compressed at all')
    case 'trailing': return Buffer.concat([packed, Buffer.from('trailing bytes')])
    case 'flipped': {
      const copy = Buffer.from(packed)
      const i = at % copy.length
      copy[i] = (copy[i] as number) ^ 0xa5
      return copy
    }
    default: return packed
  }
}

/** `body` cut at the given offsets (taken modulo its length), without empty pieces. */
export function splitAt (body: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b)
  const chunks: Buffer[] = []
  let from = 0
  for (const p of points) { chunks.push(body.subarray(from, p)); from = p }
  chunks.push(body.subarray(from))
  return chunks.filter((c) => c.length > 0)
}

/** How the body is framed: with a Content-Length, chunked, or no body at all (a GET). */
export type Framing = 'length' | 'chunked' | 'none'
export const framing = fc.oneof(
  { arbitrary: fc.constant<Framing>('length'), weight: 5 },
  { arbitrary: fc.constant<Framing>('chunked'), weight: 4 },
  { arbitrary: fc.constant<Framing>('none'), weight: 1 }
)

/** A payload: bytes as they are, or text to encode in the charset the request declares. */
export type Payload = Buffer | string

export const bytesPayload = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a))
export const largePayload = fc.tuple(fc.string({ minLength: 1, maxLength: 20 }), fc.integer({ min: 100, max: 3000 }))
  .map(([unit, times]) => unit.repeat(times))
export const commonPayload: fc.Arbitrary<Payload> = fc.oneof(
  { arbitrary: fc.constant(''), weight: 1 },
  { arbitrary: bytesPayload, weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 200 }), weight: 2 },
  { arbitrary: largePayload, weight: 1 }
)

export const CHARSET_PARAM = /charset\s*=\s*"?([^";\s]*)/i

/** Text in the charset the request names (else the parser's default, else utf-8), as a client would send it. */
export function toBytes (payload: Payload, type: string | undefined, defaultCharset: string | undefined, useDeclared: boolean): Buffer {
  if (Buffer.isBuffer(payload)) return payload
  const declared = CHARSET_PARAM.exec(type ?? '')?.[1] ?? defaultCharset ?? 'utf-8'
  if (useDeclared && declared !== '' && iconv.encodingExists(declared)) return iconv.encode(payload, declared)
  return Buffer.from(payload)
}

export interface Wire {
  headers: Record<string, string>
  framing: Framing
  chunks: Buffer[]
}

/** The request foyer gets. */
export function foyerRequest (wire: Wire): RequestOptions {
  if (wire.framing === 'none') return { method: 'GET', headers: wire.headers }
  const size = wire.chunks.reduce((n, c) => n + c.length, 0)
  const framingHeader = wire.framing === 'length' ? { 'content-length': String(size) } : { 'transfer-encoding': 'chunked' }
  return { headers: { ...wire.headers, ...framingHeader }, body: wire.chunks }
}

// ---------------------------------------------------------------------------------------------
// Options

export const limit = fc.option(fc.oneof(
  fc.nat(400),
  fc.constantFrom<number | string>(0, 1, '0b', '100b', '0.1kb', '1kb', '20kb')
), { nil: undefined, freq: 4 })
export const inflate = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 3 },
  { arbitrary: fc.boolean(), weight: 2 }
)

export function typeOption (...extra: string[]): fc.Arbitrary<unknown> {
  return fc.option(fc.oneof(
    fc.constantFrom<unknown>('*/*', 'application/*', 'text/*', '+json', 'json', 'urlencoded', 'bin', ...extra),
    fc.constantFrom<unknown>(['application/json', 'text/plain'], ['application/x-www-form-urlencoded', 'text/*'], []),
    fc.constant<unknown>(() => true)
  ), { nil: undefined, freq: 4 })
}

// verify sees the bytes before they are decoded; a refusal is a 403 with the bytes in `body`
export const verify = fc.option(fc.constantFrom(
  function accept (): void {},
  function refuseOdd (_req: unknown, _res: unknown, buf: Buffer): void {
    if (buf.length % 2 === 1) throw new Error('odd body refused')
  },
  function refuseTyped (_req: unknown, _res: unknown, buf: Buffer): void {
    if (buf.length > 20) throw Object.assign(new Error('too long for verify'), { status: 400, type: 'custom.refused' })
  }
), { nil: undefined, freq: 4 })

export interface Common {
  limit: number | string | undefined
  inflate: boolean | undefined
  type: unknown
  verify: ((req: unknown, res: unknown, buf: Buffer) => void) | undefined
}

export function common (type: fc.Arbitrary<unknown>): fc.Arbitrary<Common> {
  return fc.record({ limit, inflate, type, verify })
}

/** Drops the options left undefined, so both parsers see exactly what was given. */
export function given (options: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined))
}

/** The limit in bytes, as both parsers read the option. */
export function limitBytes (option: number | string | undefined): number {
  if (option === undefined) return 102400
  if (typeof option === 'number') return option
  const match = /^(\d+(?:\.\d+)?)(b|kb)$/.exec(option)
  assert.ok(match !== null, `a limit this test knows: ${option}`)
  return Math.floor(Number(match[1]) * (match[2] === 'kb' ? 1024 : 1))
}

/** The limit in bytes, the body's size on the wire, and its size once inflated (Infinity: unknown). */
export interface Sizes { limit: number, wire: number, inflated: number }

/** The sizes of `wire`, made from `bytes` with `harm`, under the `limit` option. */
export function sizesOf (limit: number | string | undefined, wire: Wire, harm: Damage, bytes: Buffer): Sizes {
  return {
    limit: limitBytes(limit),
    wire: wire.chunks.reduce((n, c) => n + c.length, 0),
    // damaged compressed data may inflate to anything
    inflated: harm === 'flipped' ? Infinity : bytes.length
  }
}

export interface Request {
  type: string | undefined
  encoding: string | undefined
  harm: Damage
  at: number
  framing: Framing
  cuts: number[]
  useDeclared: boolean
}

export function request (own: string[], good: string[]): fc.Arbitrary<Request> {
  return fc.record({
    type: contentType(own, good),
    encoding: contentEncoding,
    harm: damage,
    at: fc.nat(),
    framing,
    cuts: fc.array(fc.nat(), { maxLength: 6 }),
    useDeclared: fc.boolean()
  })
}

/** The bytes of `payload` framed, encoded and split as `req` says. */
export function wireOf (req: Request, payload: Buffer): Wire {
  const headers: Record<string, string> = {}
  if (req.type !== undefined) headers['content-type'] = req.type
  if (req.encoding !== undefined) headers['content-encoding'] = req.encoding
  const body = encodeBody(payload, req.encoding, req.harm, req.at)
  return { headers, framing: req.framing, chunks: splitAt(body, req.cuts) }
}

// iconv-lite's streaming decoders of these charsets (Shift_JIS, GBK, Big5, EUC-JP... and UTF-7)
// can lose or change a character where one piece of the body ends and the next begins, and those
// of utf-16 and utf-32 without a byte-order mark guess the byte order from the first pieces that
// hold 16 bytes (32 for utf-32).
export const DECODED_IN_PIECES_DIFFERS = new Set(['DBCSCodec', 'Utf7Codec', 'Utf7IMAPCodec', 'Utf16Codec', 'Utf32AutoCodec'])

/** Whether a charset named in the Content-Type or as the default is one of those. */
export function piecesMatter (type: string | undefined, defaultCharset: string | undefined): boolean {
  const named = [...(type ?? '').matchAll(/charset\s*=\s*"?([^";\s]*)/gi)].map((m) => m[1] as string)
  if (defaultCharset !== undefined) named.push(defaultCharset)
  return named.some((name) => iconv.encodingExists(name) && DECODED_IN_PIECES_DIFFERS.has((iconv.getCodec(name) as object).constructor.name))
}

// ---------------------------------------------------------------------------------------------
// Payloads of each kind

export const POISONED = [
  '{"__proto__":{"x":1}}', '{"a":{"constructor":{"prototype":{"y":2}}}}', '{"\\u005f_proto__":1}',
  '[{"constructor":{"prototype":null}}]', '{"constructor":{"prototype":1},"__proto__":[]}'
]
export const JSON_SNIPPETS = [
  '{', '}', '{"a":}', '{"a":1}}', '{a:1}', "{'a':1}", '[1,]', 'nul', 'true', ' true', '"str"', '1', '-0', '1e999',
  '  [1,', '#', '\u2028{}', '\ufeff{"bom":1}', '\ufeff\ufeff{}', '{"a":1}x', ' \t\n', ' \t\n{}', '\n\n"x"', '\f{}',
  '[]', '{}', '{"a":"\\ud800"}', '{"a":"\u0001"}', '{"a":1,"a":2}', '{"1":1,"b":2,"0":3}', 'x'
]

export const jsonPayload: fc.Arbitrary<Payload> = fc.oneof(
  { arbitrary: fc.json({ maxDepth: 4 }), weight: 4 },
  { arbitrary: fc.tuple(fc.constantFrom('', ' ', '\n\t ', '\r\n'), fc.json({ maxDepth: 3 }), fc.constantFrom('', ' ', '\n', 'x')).map(([a, s, b]) => a + s + b), weight: 2 },
  // Prototype poisoning: foyer's json runs with onProtoPoisoning 'ignore', body-parser's behaviour
  { arbitrary: fc.constantFrom(...POISONED), weight: 1 },
  { arbitrary: fc.constantFrom(...JSON_SNIPPETS), weight: 2 },
  { arbitrary: commonPayload, weight: 2 }
)

export const FORM_NAMES = ['a', 'b', 'c', '0', '1', '01', '__proto__', 'constructor', 'hasOwnProperty', 'toString', 'utf8', '', 'a b', 'a+b', 'a%20b', 'x.y', '%C3%A9', '%E9', '%zz', '%', '&#9786;']
export const FORM_SEGMENTS = ['', '0', '1', '2', '10', '01', '-1', '99', '100', '101', '150', '99999999999999999', 'a', 'b', 'c', '__proto__', 'prototype', 'constructor', 'length', 'a b', 'a+b', '%41', 'x]', '[y', ' ']
export const OPEN = ['[', '[', '[', '%5B', '%5b']
export const CLOSE = [']', ']', ']', '%5D', '%5d']
export const FORM_VALUES = ['', '1', 'x', 'a+b', '%20', '%E2%9C%93', '%26%2310003%3B', '%', '%zz', '%C3%A9', '%E9', '&#9786;', '%26%239786%3B', '=', ']=x', '[]', 'é', '\u263a']

export const formKey = fc.oneof(
  { arbitrary: fc.constantFrom(...FORM_NAMES), weight: 3 },
  {
    arbitrary: fc.tuple(fc.constantFrom(...FORM_NAMES), fc.array(fc.tuple(fc.constantFrom(...OPEN), fc.constantFrom(...FORM_SEGMENTS), fc.constantFrom(...CLOSE)), { minLength: 1, maxLength: 7 }), fc.constantFrom('', '', '', 'x', ']', '['))
      .map(([name, groups, tail]) => name + groups.map((g) => g.join('')).join('') + tail),
    weight: 5
  },
  { arbitrary: fc.string({ unit: fc.constantFrom(...'ab0[]%5BDd=+_'.split('')), maxLength: 12 }), weight: 2 }
)
export const formValue = fc.oneof(
  fc.constantFrom(...FORM_VALUES),
  fc.string({ unit: fc.constantFrom(...'ab %+=[]&#;9é'.split('')), maxLength: 8 }),
  fc.string({ maxLength: 6 }).map((s) => encodeURIComponent(s))
)
export const formPart = fc.oneof(
  { arbitrary: fc.tuple(formKey, formValue).map(([k, v]) => `${k}=${v}`), weight: 6 },
  { arbitrary: formKey, weight: 1 },
  { arbitrary: fc.constantFrom('', 'utf8=%E2%9C%93', 'utf8=%26%2310003%3B', 'utf8=x', '=', '=x'), weight: 1 }
)
export const formPayload: fc.Arbitrary<Payload> = fc.oneof(
  { arbitrary: fc.array(formPart, { maxLength: 30 }).map((parts) => parts.join('&')), weight: 6 },
  { arbitrary: fc.array(fc.tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 })), { maxLength: 20 }).map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 200 }).map((n) => Array.from({ length: n }, (_, i) => `a[]=${i}`).join('&')), weight: 1 },
  { arbitrary: commonPayload, weight: 1 }
)

export const textPayload: fc.Arbitrary<Payload> = fc.oneof(
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 100 }), weight: 3 },
  { arbitrary: fc.constantFrom('\ufeffbom', '\ufeff', 'caf\u00e9', '\u{1f600}', '+AGEAYgBj-', '\r\n'), weight: 1 },
  { arbitrary: commonPayload, weight: 3 }
)

// ---------------------------------------------------------------------------------------------
// Options of each parser

export const jsonOptions = fc.tuple(common(typeOption('application/json')), fc.record({
  strict: fc.option(fc.boolean(), { nil: undefined }),
  defaultCharset: fc.option(fc.constantFrom('utf-8', 'UTF-8', 'utf-16le', 'utf-32', 'latin1'), { nil: undefined, freq: 3 })
})).map(([c, own]) => ({ ...c, ...own }))

export const rawOptions = common(typeOption('application/octet-stream'))

export const textOptions = fc.tuple(common(typeOption('text/plain')), fc.record({
  defaultCharset: fc.option(fc.constantFrom('utf-8', 'UTF-8', 'iso-8859-1', 'utf-16le', 'utf-16', 'windows-1252', 'koi8-r', 'shift_jis', 'utf-7', 'base64', 'bogus'), { nil: undefined, freq: 2 })
})).map(([c, own]) => ({ ...c, ...own }))

export const urlencodedOptions = fc.tuple(common(typeOption('application/x-www-form-urlencoded')), fc.record({
  extended: fc.option(fc.boolean(), { nil: undefined, freq: 4 }),
  parameterLimit: fc.option(fc.oneof(fc.integer({ min: 1, max: 40 }), fc.constant(Infinity)), { nil: undefined, freq: 2 }),
  depth: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined, freq: 2 }),
  defaultCharset: fc.option(fc.constantFrom('utf-8', 'iso-8859-1'), { nil: undefined, freq: 2 }),
  charsetSentinel: fc.option(fc.boolean(), { nil: undefined, freq: 2 }),
  interpretNumericEntities: fc.option(fc.boolean(), { nil: undefined, freq: 2 })
})).map(([c, own]) => ({ ...c, ...own }))
