// The charset of a body: read from Content-Type, checked against what the parser accepts, and
// used to turn the bytes into a string.
import { parse as parseContentType } from 'content-type'
import iconv from 'iconv-lite'
import { BoundedCache } from '../cache.js'

/**
 * Which charsets a parser accepts: none at all (raw: the bytes are the body), the Unicode ones
 * (json, RFC 7159 section 8.1), any iconv-lite knows (text), or utf-8 / iso-8859-1 (urlencoded).
 */
export type CharsetRule = 'none' | 'unicode' | 'any' | 'form'

// Each Content-Type header is parsed once, and each charset name looked up once (see cache.ts).
const CACHE_SIZE = 64
const CACHEABLE_LENGTH = 256
const charsets = new BoundedCache<string>(CACHE_SIZE, CACHEABLE_LENGTH)
const known = new BoundedCache<boolean>(CACHE_SIZE, CACHEABLE_LENGTH)

function parseCharset (header: string): string {
  // content-type 2 never throws: a malformed header simply yields no charset
  const given = parseContentType(header).parameters.charset
  return given === undefined ? '' : given.toLowerCase()
}

/** The `charset` parameter of a Content-Type header, lower case; '' when there is none. */
export function headerCharset (header: string | undefined): string {
  if (header === undefined || header === '') return ''
  return charsets.get(header, parseCharset)
}

/** Whether a parser with this rule accepts the charset at all (before asking the decoder). */
export function charsetAllowed (rule: CharsetRule, charset: string): boolean {
  switch (rule) {
    case 'unicode': return charset.startsWith('utf-')
    case 'form': return charset === 'utf-8' || charset === 'iso-8859-1'
    default: return true
  }
}

/**
 * Whether iconv-lite can decode the charset. Its table is looked up with own-property checks, so
 * names such as `__proto__` or `constructor` are simply unknown.
 */
export function charsetKnown (charset: string): boolean {
  return known.get(charset, encodingExists)
}

function encodingExists (charset: string): boolean {
  return iconv.encodingExists(charset)
}

/**
 * The body as a string. UTF-8 takes Node's own decoder (the same replacement characters as
 * iconv-lite's, and much cheaper); a leading byte order mark is dropped, as iconv-lite does.
 */
export function decodeBody (buf: Buffer, charset: string): string {
  if (charset === 'utf-8' || charset === 'utf8') {
    return buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf
      ? buf.toString('utf8', 3)
      // without arguments: Node's direct UTF-8 path, not the lookup of the encoding by name
      : buf.toString()
  }
  return iconv.decode(buf, charset)
}
